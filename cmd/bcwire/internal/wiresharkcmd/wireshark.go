// Package wiresharkcmd implements `bcwire wireshark`: write a Wireshark
// dissector in Lua, generated from bcwire's own tables.
package wiresharkcmd

import (
	"io"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/output"
	"github.com/bcwire/bcwire/report/wireshark"
	"github.com/spf13/cobra"
)

// Options for `bcwire wireshark`.
type Options struct {
	IO      *iostreams.IOStreams
	Output  string
	Force   bool
	Version string
}

// NewCmdWireshark builds `bcwire wireshark`. runF, when set, is called with
// the parsed options instead of running the command.
func NewCmdWireshark(io *iostreams.IOStreams, version string, runF func(*Options) error) *cobra.Command {
	o := &Options{IO: io, Version: version}
	cmd := &cobra.Command{
		Use:   "wireshark -o bcwire.lua",
		Short: "Write a Wireshark dissector (Lua) for the Bridge Commander protocol",
		Long: `Write a Lua dissector for Wireshark and tshark, generated from bcwire's own
tables: the AlbyRules cipher (decrypted into a "Decrypted" data source),
transport messages (type, reliable, ordered, sequence, length, fragment
index and count) with fragmented messages reassembled, game messages
(bcwire.opcode with its name, and typed fields bcwire.<message>.<field> for
the messages whose leading fields sit at fixed offsets; the rest as bytes),
GameSpy queries and replies as key/value fields, and expert info for
damaged datagrams and the non-stock framings bcwire names.

It takes UDP on the port preference (Edit > Preferences > Protocols >
BCWIRE, default 22101) and, through a heuristic, game datagrams on any
port whose decrypted transport messages fill them exactly.

Install it in Wireshark's personal Lua plugins folder (Help > About
Wireshark > Folders), or load it for one run:
  tshark -X lua_script:bcwire.lua -r capture.pcap -Y bcwire
Works with Wireshark 4.0 and later.`,
		Example: `  bcwire wireshark -o ~/.local/lib/wireshark/plugins/bcwire.lua
  bcwire wireshark -o bcwire.lua && tshark -X lua_script:bcwire.lua -r battle.pcap -T fields -e bcwire.opcode`,
		Args: cobra.NoArgs,
		RunE: func(_ *cobra.Command, _ []string) error {
			if o.Output == "" {
				return exit.Usage("give the file to write with -o FILE (- for standard output)")
			}
			if runF != nil {
				return runF(o)
			}
			return Run(o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "", "the Lua file to write (- for standard output)")
	f.BoolVar(&o.Force, "force", false, "replace FILE even when it looks like a capture")
	return cmd
}

// Run writes the dissector.
func Run(o *Options) error {
	if err := (output.Target{Flag: "-o", Path: o.Output, Document: true, Force: o.Force}).Check(); err != nil {
		return err
	}
	err := output.WriteFile(o.Output, o.IO.Out, func(w io.Writer) error {
		return wireshark.Generate(w, "bcwire "+o.Version)
	})
	if err != nil {
		return exit.IOError(o.Output, err)
	}
	return nil
}
