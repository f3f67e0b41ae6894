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
	return newCmdRoot(io, &profiling{}, "", true)
}

// commands builds bcwire's own commands by name (export, live and serve
// come from fullCommands; help, man and completion are the root's own).
var commands = []struct {
	name string
	new  func(io *iostreams.IOStreams, version string) *cobra.Command
}{
	{"decode", func(io *iostreams.IOStreams, _ string) *cobra.Command { return decodecmd.NewCmdDecode(io, nil) }},
	{"cipher", func(io *iostreams.IOStreams, _ string) *cobra.Command { return ciphercmd.NewCmdCipher(io, nil) }},
	{"timeline", func(io *iostreams.IOStreams, _ string) *cobra.Command { return timelinecmd.NewCmdTimeline(io, nil) }},
	{"stats", func(io *iostreams.IOStreams, _ string) *cobra.Command { return statscmd.NewCmdStats(io, nil) }},
	{"synth", func(io *iostreams.IOStreams, _ string) *cobra.Command { return synthcmd.NewCmdSynth(io, nil) }},
	{"report", func(io *iostreams.IOStreams, _ string) *cobra.Command { return reportcmd.NewCmdReport(io, nil) }},
	{"wireshark", func(io *iostreams.IOStreams, v string) *cobra.Command {
		return wiresharkcmd.NewCmdWireshark(io, v, nil)
	}},
	{"verify", func(io *iostreams.IOStreams, _ string) *cobra.Command { return verifycmd.NewCmdVerify(io, nil) }},
	{"diff", func(io *iostreams.IOStreams, _ string) *cobra.Command { return diffcmd.NewCmdDiff(io, nil) }},
}

// runsOnly names the one command args run when it can be built alone:
// args start with a command's own name (not an alias, a flag, help,
// completion or man, which need the whole tree). It is "" otherwise.
//
// Building every command, with its flags, for each run cost about a tenth
// of the CPU of `stats --json` on a small capture (join.pcap): a command
// that runs needs neither its siblings nor their flags, and its help,
// errors and output do not mention them.
func runsOnly(args []string) string {
	if len(args) == 0 {
		return ""
	}
	for _, c := range commands {
		if args[0] == c.name {
			return c.name
		}
	}
	for _, c := range fullOnly {
		if args[0] == c.name {
			return c.name
		}
	}
	return ""
}

// newCmdRoot builds the command tree: every command, or with only set
// (runsOnly) that command alone. completions registers the flag values'
// shell completion, which only cobra's __complete uses.
func newCmdRoot(io *iostreams.IOStreams, prof *profiling, only string, completions bool) *cobra.Command {
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
		RunE:          needSubcommand,
	}
	// The version is the root's --version and wireshark's; reading the
	// build information is skipped for the other commands run alone.
	if only == "" || only == "wireshark" {
		root.Version = version()
	}
	root.SetVersionTemplate("bcwire {{.Version}}\n")
	root.SetOut(io.Out)
	root.SetErr(io.Err)
	root.SetHelpCommand(newCmdHelp())
	root.SetFlagErrorFunc(flagError)
	full, own := only == "", false
	for _, c := range commands {
		if full || c.name == only {
			root.AddCommand(c.new(io, root.Version))
			own = true
		}
	}
	if full || !own {
		root.AddCommand(fullCommands(io)...) // export, live, serve (see full.go)
	}
	prof.addFlags(root)
	if full {
		root.AddCommand(newCmdMan())
	} else {
		// Nor does cobra add its completion command: the command run is
		// another.
		root.CompletionOptions.DisableDefaultCmd = true
	}
	if completions {
		addCompletions(root)
	}
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
	// garbage collection then scans. Dropping it (no cache: the stats
	// tables, the only ones drawn, turn it off anyway, see report's
	// newTable) costs nothing, where a smaller cache in its place was a
	// new map for every run. Together with the line above: peak RSS of
	// stats --json on OpenBC battle x200 23.8 -> 21.9 MiB, text decode on
	// battle x100 24.1 -> 22.3 MiB.
	twwidth.SetCacheCapacity(0)
	io := iostreams.System()
	return ExecuteIO(io, args)
}

// ExecuteIO is Execute with explicit I/O, for tests.
func ExecuteIO(io *iostreams.IOStreams, args []string) int {
	var prof profiling
	completing := len(args) > 0 && (args[0] == cobra.ShellCompRequestCmd || args[0] == cobra.ShellCompNoDescRequestCmd)
	cmd := newCmdRoot(io, &prof, runsOnly(args), completing)
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
