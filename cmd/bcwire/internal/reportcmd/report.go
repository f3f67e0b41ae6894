// Package reportcmd implements `bcwire report`: one self-contained HTML page
// with a capture's session timelines, message rates, bandwidth, ACK
// round-trip times, opcode tables and chat log.
package reportcmd

import (
	"fmt"
	"io"
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

// Options of `bcwire report`.
type Options struct {
	FailOn  exit.FailOn // --fail-on nonstock
	IO      *iostreams.IOStreams
	Files   []string
	Output  string // "-" for stdout
	Force   bool   // replace an existing capture at Output
	Title   string
	Servers []string
	Timeout time.Duration
	Quiet   bool
	Count   int // -c
	// Checksums says whether IPv4 and UDP checksums are verified.
	Checksums input.Checksums
	// MaxDamageLines caps the damaged records listed on stderr per file.
	MaxDamageLines int
	Read           input.ReadFlags // -r, -Y
}

// NewCmdReport builds the cobra command. runF, when set, is called with the
// parsed options instead of running the command (tests check flags with it).
func NewCmdReport(io *iostreams.IOStreams, runF func(*Options) error) *cobra.Command {
	o := &Options{IO: io}
	cmd := &cobra.Command{
		Use:   "report [flags] FILE...",
		Short: "Write an HTML report with charts of the sessions, rates, bandwidth and round-trip times",
		Long: `Read pcap or pcapng captures and write one self-contained HTML page (styles
and charts inline, nothing fetched when it is opened) with:

  - each player session as a timeline of its join phases (connecting,
    checksum, lobby, in game) with markers for kills, ships, chat,
    retransmission bursts and damage;
  - the message rate over time by opcode group (StateUpdate, events and
    combat, checksum and join, script and chat, transport control and ACKs);
  - the bandwidth of each session in each direction;
  - the ACK round-trip times per session, direction and channel;
  - the session list, the game-message counts by opcode and direction, the
    transport-message counts, and the chat log.

Exit status: 0 when nothing was damaged (non-stock messages, intact but not
in stock's form, are reported and exit 0 unless --fail-on nonstock), 1 when
some packets or messages were damaged (listed on stderr; the report is written all the
same), 2 for usage or I/O errors.`,
		Example: `  bcwire report testdata/pcaps/battle.pcap -o battle.html
  bcwire report --title "Friday league" a.pcap b.pcapng -o league.html
  bcwire report capture.pcap -o - > report.html`,
		RunE: input.FilesRunE(o, &o.Read, &o.Files, runF, Run),
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "report.html", "write the page to `FILE` (\"-\" for stdout)")
	f.BoolVar(&o.Force, "force", false, "let -o replace a file that holds a capture")
	f.StringVar(&o.Title, "title", "", "page title (default: the capture file names)")
	input.AddServerFlag(f, &o.Servers)
	f.DurationVar(&o.Timeout, "idle-timeout", 45*time.Second, "end a session after this much capture time without traffic")
	input.AddCountFlag(f, &o.Count)
	output.AddQuietFlag(f, &o.Quiet)
	exit.AddFailOnFlag(f, &o.FailOn)
	input.AddReadFlags(f, &o.Read, false)
	o.Checksums.AddFlag(f)
	return cmd
}

// Run reads the captures and writes the page.
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
	out := output.Target{Flag: "-o", Path: o.Output, Document: true, Force: o.Force}
	if err := out.Check(o.Files...); err != nil {
		return err
	}
	if o.MaxDamageLines <= 0 {
		o.MaxDamageLines = 20
	}
	rep := report.NewHTMLReport(report.HTMLOptions{Title: o.Title})
	yflt, err := o.Read.CompileFilter()
	if err != nil {
		return err
	}
	res, err := scan.Run(&scan.Options{Filter: yflt, Count: o.Count, IO: o.IO, Files: o.Files, Servers: servers,
		Session: session.Options{Timeout: o.Timeout}, Quiet: o.Quiet, MaxDamageLines: o.MaxDamageLines,
		Record: session.RecordFunc(rep.Record), Capture: o.Checksums.Options(),
	}, func(path string, s *session.Session) error {
		rep.Session(path, s)
		return nil
	})
	if err != nil {
		return err
	}
	totals := res.Totals
	if err := write(o, rep, &totals); err != nil {
		return &exit.Error{Code: exit.CodeUsage, Err: err}
	}
	return res.ErrFailOn(o.FailOn)
}

// write renders the page into a temporary file beside the output and
// renames it, so a failed run leaves no half-written report.
func write(o *Options, rep *report.HTMLReport, totals *session.Counts) error {
	err := output.WriteFile(o.Output, o.IO.Out, func(w io.Writer) error {
		return rep.Write(w, o.Files, totals)
	})
	if err != nil {
		return err
	}
	if !o.Quiet && o.Output != "-" {
		fmt.Fprintf(o.IO.Err, "wrote %s\n", o.Output)
	}
	return nil
}
