// Package report renders what bcwire found for people (text, colored when
// the output is a terminal, tables, an HTML page) and for programs (JSON).
// It is the only package that knows about terminals, colors and tables.
package report

import (
	"io"
	"os"

	"github.com/mattn/go-isatty"
)

// IO is where output goes and how it may look.
type IO struct {
	Out    io.Writer
	Err    io.Writer
	Color  bool // use ANSI colors on Out
	ErrTTY bool // Err is a terminal (progress indicators allowed)
}

// System returns an IO on stdout/stderr, with color when stdout is a
// terminal and NO_COLOR is unset.
func System() *IO {
	outTTY := isatty.IsTerminal(os.Stdout.Fd())
	_, noColor := os.LookupEnv("NO_COLOR")
	return &IO{Out: os.Stdout, Err: os.Stderr, Color: outTTY && !noColor,
		ErrTTY: isatty.IsTerminal(os.Stderr.Fd())}
}
