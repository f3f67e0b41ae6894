// Package iostreams is where a command's input and output go and what they
// are attached to: standard input, output and error, whether each is a
// terminal, whether Out is to be colored, and the progress indicator of a
// long read (shown only on a terminal). As cli/cli's pkg/iostreams: every
// command takes an *IOStreams, the process gets System's, and tests give
// one on buffers. It is the only package that asks whether a file is a
// terminal; the packages below cmd are told (report's printers take a
// writer and a color flag).
package iostreams

import (
	"io"
	"os"

	"github.com/mattn/go-isatty"
)

// IOStreams is where output goes and how it may look.
type IOStreams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	// InTTY: In is a terminal (the server's console reads it unasked).
	InTTY bool
	// Color: use ANSI colors on Out.
	Color bool
	// ErrTTY: Err is a terminal (progress indicators allowed).
	ErrTTY bool
}

// System returns the process's standard streams, with color when stdout
// is a terminal and NO_COLOR is unset.
func System() *IOStreams {
	outTTY := isatty.IsTerminal(os.Stdout.Fd())
	_, noColor := os.LookupEnv("NO_COLOR")
	return &IOStreams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr,
		InTTY:  isatty.IsTerminal(os.Stdin.Fd()),
		Color:  outTTY && !noColor,
		ErrTTY: isatty.IsTerminal(os.Stderr.Fd())}
}
