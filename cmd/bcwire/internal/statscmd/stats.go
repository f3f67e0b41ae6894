// Package statscmd implements `bcwire stats`: opcode and transport-type
// statistics per direction, per session and in total.
package statscmd

import (
	"github.com/bcwire/bcwire/cmd/bcwire/internal/cliutil"
	"github.com/bcwire/bcwire/report"
	"github.com/bcwire/bcwire/session"
	"github.com/spf13/cobra"
)

// Options of `bcwire stats`.
type Options struct {
	IO         *report.IO
	Files      []string
	JSON       bool
	NoSessions bool // text: totals only
	Servers    []string
	Quiet      bool
	Count      int // -c
	Caps       cliutil.Caps
	Read       cliutil.ReadFlags // -r, -Y
}

// NewCmdStats builds the cobra command. runF, when set, is called with the
// parsed options instead of running the command (tests check flags with it).
func NewCmdStats(io *report.IO, runF func(*Options) error) *cobra.Command {
	o := &Options{IO: io}
	cmd := &cobra.Command{
		Use:   "stats [flags] FILE...",
		Short: "Count messages by opcode and transport type, per session and in total",
		Long: `Read pcap or pcapng captures and count, for each direction (client to
server, server to client): game messages by opcode, with their bytes, their
share of the direction's messages, and their rate per minute and per 15
minutes (the unit of the protocol notes' stock-traffic figures); transport
messages by type; and GameSpy datagrams by query kind. Each session (one
client on one server) gets its own tables as it ends, then come the totals
of all files.

Tables are drawn in color on a terminal and as plain aligned text when the
output is piped. --json prints one object for programs:
  {"sessions":[{file, server, client, slot, name, start, end, opcodes, transport}...],
   "files", "start", "end", "duration_s", "session_count", "datagrams",
   "opcodes":[{dir, opcode, hex, name, count, bytes, share, byte_share, per_min, per_15min}...],
   "transport":[{dir, type, hex, name, count, bytes}...], "gamespy":[{kind, count}...]}
Rows are ordered by direction (C->S first), then opcode or type number.

Exit status: 0 when everything decoded cleanly, 1 when some packets or
messages were damaged (listed on stderr with file and packet number), 2 for
usage or I/O errors.`,
		Example: `  bcwire stats testdata/pcaps/battle.pcap
  bcwire stats --no-sessions a.pcap b.pcapng
  bcwire stats --json capture.pcap | jq '.opcodes[] | select(.name == "StateUpdate")'`,
		RunE: func(c *cobra.Command, args []string) error {
			files, err := o.Read.Inputs(args)
			if err != nil {
				return err
			}
			o.Files = files
			if len(o.Files) == 0 {
				return cliutil.Usage("give one or more capture files (see --help)")
			}
			if runF != nil {
				return runF(o)
			}
			return Run(o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.JSON, "json", false, "print one JSON object (sessions, totals)")
	f.BoolVar(&o.NoSessions, "no-sessions", false, "text output: print only the totals")
	cliutil.AddServerFlag(f, &o.Servers)
	cliutil.AddCountFlag(f, &o.Count)
	cliutil.AddQuietFlag(f, &o.Quiet)
	cliutil.AddReadFlags(f, &o.Read, false)
	o.Caps.AddFlags(f, true)
	return cmd
}

// Run counts and prints.
func Run(o *Options) error {
	servers, err := cliutil.ParseServers(o.Servers)
	if err != nil {
		return err
	}
	if err := o.Caps.Check(); err != nil {
		return err
	}
	p := report.NewStatsPrinter(o.IO.Out, o.JSON, o.IO.Color && !o.JSON, !o.NoSessions)
	yflt, err := o.Read.CompileFilter()
	if err != nil {
		return err
	}
	intr, stop := cliutil.CatchInterrupt()
	defer stop()
	res, err := cliutil.Scan(&cliutil.ScanOptions{Filter: yflt, Count: o.Count, IO: o.IO, Files: o.Files, Servers: servers, Quiet: o.Quiet,
		Session: o.Caps.Session(session.Options{}), Workers: o.Caps.Workers, Flow: o.Caps.Flow(), Capture: o.Caps.Capture(),
		Interrupt: intr}, p.Session)
	if err != nil {
		p.Flush()
		return err
	}
	if err := p.Totals(o.Files, &res.Totals, res.Sessions); err != nil {
		return &cliutil.ExitError{Code: cliutil.ExitUsage, Err: err}
	}
	return res.InterruptedOr(res.Err())
}
