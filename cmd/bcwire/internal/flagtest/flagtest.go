// Package flagtest parses a command's flags and arguments without running
// it, for the flag tests of every command.
package flagtest

import (
	"io"

	"github.com/spf13/cobra"
)

// ParseOnly runs cmd with args the way the root command does, but with its
// output discarded; the command's runF hook is expected to capture the
// options. It returns the command's error (a flag or argument error, or
// what runF returned). For the runF tests of every command.
func ParseOnly(cmd *cobra.Command, args ...string) error {
	cmd.SetArgs(args)
	cmd.SetOut(io.Discard)
	cmd.SetErr(io.Discard)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	return cmd.Execute()
}
