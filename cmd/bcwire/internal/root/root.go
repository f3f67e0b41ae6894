// Package root assembles bcwire's command tree and maps errors to exit
// statuses; it also holds --version, shell completion of flag values, man
// pages, the hidden profiling flags, and the stubs through which bcwire
// runs the commands only bcwire-full links (full.go). Its tests run the
// whole tree: the bundled captures' goldens, the README's examples and
// tables, and the import rules.
package root

import (
	"errors"
	"fmt"
	"runtime"
	"strings"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/ciphercmd"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/decodecmd"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/diffcmd"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/reportcmd"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/statscmd"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/synthcmd"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/timelinecmd"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/verifycmd"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/wiresharkcmd"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/spf13/cobra"
)

// NewCmdRoot builds the whole command tree writing to io.
func NewCmdRoot(io *iostreams.IOStreams) *cobra.Command {
	return newCmdRoot(io, &profiling{})
}

func newCmdRoot(io *iostreams.IOStreams, prof *profiling) *cobra.Command {
	root := &cobra.Command{
		Use:   "bcwire",
		Short: "Dissect, analyse, compare and serve Star Trek: Bridge Commander multiplayer traffic",
		Long: `bcwire reads captures of Star Trek: Bridge Commander 1.1 multiplayer traffic,
decrypts the AlbyRules cipher, splits datagrams into transport messages,
reassembles fragments and decodes every game opcode into named fields.

Start with:
  bcwire decode testdata/pcaps/battle.pcap`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version(),
		RunE:          needSubcommand,
	}
	root.SetVersionTemplate("bcwire {{.Version}}\n")
	root.SetOut(io.Out)
	root.SetErr(io.Err)
	root.SetHelpCommand(newCmdHelp())
	root.SetFlagErrorFunc(flagError)
	root.AddCommand(decodecmd.NewCmdDecode(io, nil), ciphercmd.NewCmdCipher(io, nil),
		timelinecmd.NewCmdTimeline(io, nil), statscmd.NewCmdStats(io, nil), synthcmd.NewCmdSynth(io, nil),
		reportcmd.NewCmdReport(io, nil), wiresharkcmd.NewCmdWireshark(io, root.Version, nil))
	root.AddCommand(verifycmd.NewCmdVerify(io, nil), diffcmd.NewCmdDiff(io, nil))
	root.AddCommand(fullCommands(io)...) // export, live, serve (see full.go)
	prof.addFlags(root)
	root.AddCommand(newCmdMan())
	addCompletions(root)
	for _, c := range root.Commands() {
		if c.HasSubCommands() && c.RunE == nil && c.Run == nil {
			c.RunE = needSubcommand // bcwire cipher
		}
	}
	return root
}

// needSubcommand runs for a command that only groups others: the help on
// stderr, and exit 2.
func needSubcommand(c *cobra.Command, args []string) error {
	c.SetOut(c.ErrOrStderr())
	_ = c.Help()
	if !c.HasParent() {
		return exit.Usage("give a command (see above)")
	}
	return exit.Usage("%s needs one of its commands (see above)", c.CommandPath())
}

// newCmdHelp is cobra's help command, except that an unknown topic is a
// usage error (exit 2) rather than a message and exit 0.
func newCmdHelp() *cobra.Command {
	return &cobra.Command{
		Use:   "help [command]",
		Short: "Help about any command",
		RunE: func(c *cobra.Command, args []string) error {
			root := c.Root()
			target, rest, err := root.Find(args)
			if err != nil || len(rest) > 0 || target == nil {
				return exit.Usage("no help topic %q (the commands are listed by 'bcwire help')", strings.Join(args, " "))
			}
			target.InitDefaultHelpFlag()
			target.InitDefaultVersionFlag()
			return target.Help()
		},
	}
}

// Execute runs bcwire with args and returns the exit status.
func Execute(args []string) int {
	// No allocation sampling unless --memprofile asks for it (profiling.start):
	// the runtime samples one allocation every 512 KiB by default and keeps
	// a bucket per distinct stack, which reached 1.4 MiB of resident memory
	// on a long stats run (runtime/metrics' /memory/classes/profiling).
	runtime.MemProfileRate = 0
	// tablewriter makes its width cache with room for 8,192 strings as it
	// initialises, in every command: about 650 KB of pointers, which each
	// garbage collection then scans. Text stats' tables measure far fewer
	// distinct strings. Together with the line above: peak RSS of stats
	// --json on OpenBC battle x200 23.8 -> 21.9 MiB, text decode on
	// battle x100 24.1 -> 22.3 MiB.
	twwidth.SetCacheCapacity(256)
	io := iostreams.System()
	return ExecuteIO(io, args)
}

// ExecuteIO is Execute with explicit I/O, for tests.
func ExecuteIO(io *iostreams.IOStreams, args []string) int {
	var prof profiling
	cmd := newCmdRoot(io, &prof)
	cmd.SetArgs(args)
	err := cmd.Execute()
	if perr := prof.stop(); perr != nil && err == nil {
		err = perr
	}
	if err == nil {
		return exit.CodeOK
	}
	var st exitStatus
	if errors.As(err, &st) {
		return int(st) // bcwire-full ran the command and said why
	}
	fmt.Fprintln(io.Err, "bcwire:", err)
	var ee *exit.Error
	if errors.As(err, &ee) {
		return ee.Code
	}
	return exit.CodeUsage // cobra's own usage errors (unknown flag, ...)
}
