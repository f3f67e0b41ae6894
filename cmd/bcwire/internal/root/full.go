package root

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/spf13/cobra"
)

// The commands that need the large libraries (export: Parquet; live and
// serve: Prometheus and an HTTP server) are linked into a second binary,
// bcwire-full, which holds every command. Any package a Go binary links
// is initialised, and its code and tables paged in, whether the command
// run uses it or not: linked into bcwire they more than doubled the binary
// and raised the peak RSS of stats and decode (the figures are in the
// README's Performance section). bcwire runs these commands by starting
// bcwire-full from its own directory (or PATH).

// fullBinary is the name of the binary with every command.
const fullBinary = "bcwire-full"

// Full builds the commands that only bcwire-full links. bcwire-full sets
// it before Execute; in bcwire it is nil and those commands are stubs
// that start bcwire-full.
var Full func(io *iostreams.IOStreams) []*cobra.Command

// fullOnly names the commands that bcwire-full alone links, with their
// one-line help (TestFullStubsMatchCommands keeps it in step).
var fullOnly = []struct{ name, short string }{
	{"export", "Write captures as Parquet tables (messages, sessions) for DuckDB, Spark or Trino"},
	{"live", "Capture an interface and decode Bridge Commander traffic as it happens"},
	{"serve", "Run a dedicated server: the native one, or a stand-in that answers from a capture"},
}

// fullCommands returns Full's commands, or the stubs that start bcwire-full.
func fullCommands(io *iostreams.IOStreams) []*cobra.Command {
	if Full != nil {
		return Full(io)
	}
	var cmds []*cobra.Command
	for _, c := range fullOnly {
		cmds = append(cmds, newCmdFullStub(io, c.name, c.short))
	}
	return cmds
}

// newCmdFullStub is a command that hands its arguments, flags and all, to
// the same command of bcwire-full; its help is bcwire-full's too.
func newCmdFullStub(io *iostreams.IOStreams, name, short string) *cobra.Command {
	cmd := &cobra.Command{
		Use:                name,
		Short:              short,
		DisableFlagParsing: true,
		RunE: func(c *cobra.Command, args []string) error {
			return runFull(io, append([]string{name}, args...))
		},
	}
	cmd.SetHelpFunc(func(c *cobra.Command, _ []string) {
		if err := runFull(io, []string{name, "--help"}); err != nil {
			fmt.Fprintln(io.Err, "bcwire:", err)
		}
	})
	return cmd
}

// exitStatus ends bcwire with a status and no message of its own: the
// child that decided it has said why.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// runFull runs bcwire-full with args. When io is the process's own
// standard output and error, bcwire becomes bcwire-full (execve): the
// signals (a terminal's Ctrl-C, a SIGTERM), the exit status and the output
// are then the command's own, as if it were linked in. Otherwise (tests,
// or where there is no execve) it runs it as a child on io and returns its
// exit status as an error (nil for 0).
func runFull(io *iostreams.IOStreams, args []string) error {
	path, err := findFull()
	if err != nil {
		return err
	}
	if io.Out == os.Stdout && io.Err == os.Stderr {
		if err := execve(path, args); !errors.Is(err, errors.ErrUnsupported) {
			return &exit.Error{Code: exit.CodeUsage, Err: fmt.Errorf("%s: %w", path, err)}
		}
	}
	cmd := exec.Command(path, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, io.Out, io.Err
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ee) && ee.ExitCode() >= 0:
		return exitStatus(ee.ExitCode())
	case errors.As(err, &ee):
		// Ended by a signal (SIGPIPE when the reader of a pipe left): the
		// status a shell gives, and no message.
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return exitStatus(128 + int(ws.Signal()))
		}
	}
	return &exit.Error{Code: exit.CodeUsage, Err: fmt.Errorf("%s: %w", path, err)}
}

// findFull finds bcwire-full: $BCWIRE_FULL, else beside this executable
// (where go install and go build -o DIR/ put both), else on PATH.
func findFull() (string, error) {
	if p := os.Getenv("BCWIRE_FULL"); p != "" {
		return p, nil
	}
	name := fullBinary
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	if self, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(self), name)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
	}
	if p, err := exec.LookPath(name); err == nil {
		return p, nil
	}
	return "", exit.Usage("this command is in %s, which is not beside bcwire nor on PATH "+
		"(install both: go install github.com/bcwire/bcwire/cmd/bcwire/...)", fullBinary)
}
