// Package statscmd implements `bcwire stats`: opcode and transport-type
// statistics per direction, per session and in total, and with --json each
// capture's measures (package session/measure).
package statscmd

import (
	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/gctune"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/input"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/interrupt"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/output"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/scan"
	"github.com/bcwire/bcwire/report"
	"github.com/bcwire/bcwire/session"
	"github.com/bcwire/bcwire/session/measure"
	"github.com/spf13/cobra"
)

// Options of `bcwire stats`.
type Options struct {
	FailOn     exit.FailOn // --fail-on nonstock
	IO         *iostreams.IOStreams
	Files      []string
	JSON       bool
	NoSessions bool // text: totals only
	NoMeasures bool // --json: leave the measures out (15-30% of the CPU time)
	Servers    []string
	Quiet      bool
	Count      int // -c
	Caps       input.Caps
	Read       input.ReadFlags // -r, -Y
}

// NewCmdStats builds the cobra command. runF, when set, is called with the
// parsed options instead of running the command (tests check flags with it).
func NewCmdStats(io *iostreams.IOStreams, runF func(*Options) error) *cobra.Command {
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
   "transport":[{dir, type, hex, name, count, bytes}...], "gamespy":[{kind, count}...],
   "nonstock":[{dir, name, count, what, evidence}...] (sessions and totals, only when there are any),
   "measures":[{file, lanes, cadence, flag_families, relay_matrix,
     messages_per_datagram, object_ids, deaths}...]}
"measures" are each capture's wire measures, as OpenBC's parity reports
compute them: StateUpdate cadence per ship lane (object, direction, flag
family - the flags byte's high nibble, "0x20-bearing" and "all" - with the
interval mean, p50 and p90 in ms) and pooled per direction and family;
StateUpdates per flag family and direction; per client opcode, the messages
sent, the copies back to the sender and to the other clients in the game
(and the copies due); messages per datagram (distribution, p90, max and
its frame); object ids per owner block (offsets into 0x3FFFFFFF + slot x
0x40000); and each ship's death: what followed ObjectExploding, with
millisecond offsets. 'bcwire diff' compares them with stock's.
--no-measures leaves them out: they add about 15-30% to the CPU time.
Rows are ordered by direction (C->S first), then opcode or type number.

Exit status: 0 when nothing was damaged (non-stock messages, intact but not
in stock's form, are reported and exit 0 unless --fail-on nonstock), 1 when
some packets or messages were damaged (listed on stderr with file and packet number), 2 for
usage or I/O errors.`,
		Example: `  bcwire stats testdata/pcaps/battle.pcap
  bcwire stats --no-sessions a.pcap b.pcapng
  bcwire stats --json capture.pcap | jq '.opcodes[] | select(.name == "StateUpdate")'`,
		RunE: input.FilesRunE(o, &o.Read, &o.Files, runF, Run),
	}
	f := cmd.Flags()
	f.BoolVar(&o.JSON, "json", false, "print one JSON object (sessions, totals)")
	f.BoolVar(&o.NoSessions, "no-sessions", false, "text output: print only the totals")
	f.BoolVar(&o.NoMeasures, "no-measures", false, "--json: leave out the measures (cadence, flag families, relay matrix, ...), which add about 15-30% to the CPU time")
	input.AddServerFlag(f, &o.Servers)
	input.AddCountFlag(f, &o.Count)
	output.AddQuietFlag(f, &o.Quiet)
	exit.AddFailOnFlag(f, &o.FailOn)
	input.AddReadFlags(f, &o.Read, false)
	o.Caps.AddFlags(f, true)
	return cmd
}

// gcPercent is the collector's GOGC for stats when the environment does
// not set one. stats streams: what it holds is its input and output
// buffers and the sessions open at once, about 2 MB, most of it from the
// start, and it leaves little garbage (Builder.Reuse, plainTable), so that
// with GOGC=100's 4 MB minimum goal the collector ran once early on, for
// memory that stays in use to the end: on OpenBC battle x40 a cycle of
// about 3.5% of the CPU time of stats --json (0.964 of it without, median
// of 60 pairs). At 150 stats --json sees no cycle on OpenBC battle x40 or
// x200; peak RSS stays under 20 MiB (bundled battle x200: --json 18.2 vs
// 18.0 MiB, text 19.8 vs 18.6).
const gcPercent = 150

// Run counts and prints.
func Run(o *Options) error {
	if err := o.FailOn.Check(); err != nil {
		return err
	}
	gctune.Percent(gcPercent) // unless GOGC is set
	servers, err := input.ParseServers(o.Servers)
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
	intr, stop := interrupt.Catch()
	defer stop()
	so := &scan.Options{Filter: yflt, Count: o.Count, IO: o.IO, Files: o.Files, Servers: servers, Quiet: o.Quiet,
		Session: o.Caps.Session(session.Options{}), Workers: o.Caps.Workers, Flow: o.Caps.Flow(), Capture: o.Caps.Capture(),
		Interrupt: intr, Reuse: true} // StatsPrinter.Session writes a session out and keeps nothing of it
	// --json: each capture's measures (cadence per ship lane, flag
	// families, relay matrix, messages per datagram, ...).
	var measures []report.FileMeasures
	var mb *measure.Builder
	var file string
	done := func() {
		if mb != nil {
			measures = append(measures, report.FileMeasures{File: file, Measures: mb.Finish()})
		}
	}
	if o.JSON && !o.NoMeasures {
		// (The Builder itself sees the records, not a closure calling it:
		// scan.Run reads Record after File.)
		so.File = func(path string) { done(); mb, file = measure.NewBuilder(), path; so.Record = mb }
	}
	res, err := scan.Run(so, p.Session)
	done()
	p.Measures(measures)
	if err != nil {
		p.Flush()
		return err
	}
	if err := p.Totals(o.Files, &res.Totals, res.Sessions); err != nil {
		return &exit.Error{Code: exit.CodeUsage, Err: err}
	}
	return res.InterruptedOr(res.ErrFailOn(o.FailOn))
}
