// Package timelinecmd implements `bcwire timeline`: each player session's
// join phases, notable events and reliable-delivery figures.
package timelinecmd

import (
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/input"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/output"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/scan"
	"github.com/bcwire/bcwire/report"
	"github.com/bcwire/bcwire/session"
	"github.com/spf13/cobra"
)

// Options of `bcwire timeline`.
type Options struct {
	FailOn    exit.FailOn // --fail-on nonstock
	IO        *iostreams.IOStreams
	Files     []string
	JSON      bool
	Servers   []string
	Timeout   time.Duration
	Quiet     bool
	Count     int // -c
	Checksums input.Checksums
	Read      input.ReadFlags // -r, -Y
}

// NewCmdTimeline builds the cobra command. runF, when set, is called with the
// parsed options instead of running the command (tests check flags with it).
func NewCmdTimeline(io *iostreams.IOStreams, runF func(*Options) error) *cobra.Command {
	o := &Options{IO: io}
	cmd := &cobra.Command{
		Use:   "timeline [flags] FILE...",
		Short: "Show each player session's join phases, events and delivery figures",
		Long: `Read pcap or pcapng captures and follow every client of every Bridge
Commander server in them. For each session (one client address on one
server) print its join phases in protocol order - connect request, slot
assignment, each checksum round with its round-trip time, checksums passed,
lobby (Settings received), new player in game, mission init, ship selected
(in game), first StateUpdate, and the end (disconnect, boot, or no traffic for
45 s) - with the offset from the session's first packet and the time since
the previous phase; then its notable events (retransmission bursts, checksum
failures, ships created and destroyed, kills, chat, damaged packets) and its
reliable-delivery figures per direction and channel: retransmissions,
duplicates, messages never ACKed, sequence gaps, late arrivals and ACK
round-trip times.

A session already under way when the capture started begins in the phase its
traffic shows; the phases before it are left out (null in JSON).

Sessions are printed as they end, in the order they end.

Exit status: 0 when nothing was damaged (non-stock messages, intact but not
in stock's form, are reported and exit 0 unless --fail-on nonstock), 1 when
some packets or messages were damaged (listed on stderr with file and packet number), 2 for
usage or I/O errors.`,
		Example: `  bcwire timeline testdata/pcaps/battle.pcap
  bcwire timeline --json capture.pcapng | jq '.sessions[] | {name, phases}'
  bcwire timeline --server 10.0.0.1:22101 --idle-timeout 30s capture.pcap`,
		RunE: input.FilesRunE(o, &o.Read, &o.Files, runF, Run),
	}
	f := cmd.Flags()
	f.BoolVar(&o.JSON, "json", false, `print {"sessions":[...]} with every figure, one session per line`)
	input.AddServerFlag(f, &o.Servers)
	f.DurationVar(&o.Timeout, "idle-timeout", 45*time.Second, "end a session after this much capture time without traffic")
	input.AddCountFlag(f, &o.Count)
	output.AddQuietFlag(f, &o.Quiet)
	exit.AddFailOnFlag(f, &o.FailOn)
	input.AddReadFlags(f, &o.Read, false)
	o.Checksums.AddFlag(f)
	return cmd
}

// Run prints the timelines.
func Run(o *Options) error {
	if err := o.FailOn.Check(); err != nil {
		return err
	}
	servers, err := input.ParseServers(o.Servers)
	if err != nil {
		return err
	}
	if o.Timeout <= 0 {
		return exit.Usage("--idle-timeout %s: must be positive", o.Timeout)
	}
	// Checked before the printer exists: a missing file must not leave
	// "no sessions" on stdout.
	if err := input.CheckInputs(o.Files); err != nil {
		return err
	}
	if err := input.CheckCount(o.Count); err != nil {
		return err
	}
	p := report.NewTimelinePrinter(o.IO.Out, o.JSON, o.IO.Color && !o.JSON)
	yflt, err := o.Read.CompileFilter()
	if err != nil {
		return err
	}
	res, err := scan.Run(&scan.Options{Filter: yflt, Count: o.Count, IO: o.IO, Files: o.Files, Servers: servers, Quiet: o.Quiet,
		Session: session.Options{Timeout: o.Timeout}, Capture: o.Checksums.Options(),
		Reuse: true}, p.Session) // TimelinePrinter.Session writes a session out and keeps nothing of it
	if cerr := p.Close(); err == nil && cerr != nil {
		err = &exit.Error{Code: exit.CodeUsage, Err: cerr}
	}
	if err != nil {
		return err
	}
	return res.ErrFailOn(o.FailOn)
}
