// Package reportcmd implements `bcwire report`: one self-contained HTML page
// with a capture's session timelines, message rates, bandwidth, ACK
// round-trip times, opcode tables and chat log.
package reportcmd

import (
	"fmt"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/cliutil"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/timelinecmd"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/report"
	"github.com/bcwire/bcwire/session"
	"github.com/spf13/cobra"
)

// Options of `bcwire report`.
type Options struct {
	IO      *report.IO
	Files   []string
	Output  string // "-" for stdout
	Title   string
	Servers []string
	Timeout time.Duration
	Quiet   bool
	// MaxDamageLines caps the damaged records listed on stderr per file.
	MaxDamageLines int
}

// NewCmdReport builds the cobra command.
func NewCmdReport(io *report.IO) *cobra.Command {
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

Exit status: 0 when everything decoded cleanly, 1 when some packets or
messages were damaged (listed on stderr; the report is written all the
same), 2 for usage or I/O errors.`,
		Example: `  bcwire report testdata/pcaps/battle.pcap -o battle.html
  bcwire report --title "Friday league" a.pcap b.pcapng -o league.html
  bcwire report capture.pcap -o - > report.html`,
		RunE: func(c *cobra.Command, args []string) error {
			o.Files = args
			if len(o.Files) == 0 {
				return cliutil.Usage("give one or more capture files (see --help)")
			}
			return Run(o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Output, "output", "o", "report.html", `write the page to FILE ("-" for stdout)`)
	f.StringVar(&o.Title, "title", "", "page title (default: the capture file names)")
	f.StringSliceVar(&o.Servers, "server", nil, "treat HOST:PORT as a server (default: detect servers)")
	f.DurationVar(&o.Timeout, "timeout", 45*time.Second, "end a session after this much capture time without traffic")
	f.BoolVarP(&o.Quiet, "quiet", "q", false, "do not print the per-file summary on stderr")
	return cmd
}

// Run reads the captures and writes the page.
func Run(o *Options) error {
	servers, err := timelinecmd.ParseServers(o.Servers)
	if err != nil {
		return err
	}
	if o.Timeout <= 0 {
		return cliutil.Usage("--timeout %s: must be positive", o.Timeout)
	}
	if o.Output == "" {
		return cliutil.Usage("--output: give a file name or - for stdout")
	}
	if o.MaxDamageLines <= 0 {
		o.MaxDamageLines = 20
	}
	rep := report.NewHTMLReport(report.HTMLOptions{Title: o.Title})
	var totals session.Counts
	damaged := 0
	for _, path := range o.Files {
		n, err := scanFile(o, path, servers, rep, &totals)
		if err != nil {
			return err
		}
		damaged += n
	}
	if err := write(o, rep, &totals); err != nil {
		return &cliutil.ExitError{Code: cliutil.ExitUsage, Err: err}
	}
	if damaged > 0 {
		return &cliutil.ExitError{Code: cliutil.ExitDamaged,
			Err: fmt.Errorf("%d damaged packets or messages (listed above with their packet numbers)", damaged)}
	}
	return nil
}

// write renders the page into a temporary file beside the output and
// renames it, so a failed run leaves no half-written report.
func write(o *Options, rep *report.HTMLReport, totals *session.Counts) error {
	if o.Output == "-" {
		return rep.Write(o.IO.Out, o.Files, totals)
	}
	tmp, err := os.CreateTemp(filepath.Dir(o.Output), ".bcwire-report-*.html")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	if err := rep.Write(tmp, o.Files, totals); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), o.Output); err != nil {
		return err
	}
	if !o.Quiet {
		fmt.Fprintf(o.IO.Err, "wrote %s\n", o.Output)
	}
	return nil
}

// scanFile feeds one capture to a session builder and to the report's rate
// counter (which needs every record, not only the finished sessions, so
// timelinecmd.Scan does not fit), and returns the number of damaged records.
func scanFile(o *Options, path string, servers []netip.AddrPort, rep *report.HTMLReport, totals *session.Counts) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, &cliutil.ExitError{Code: cliutil.ExitUsage, Err: err}
	}
	defer f.Close()
	rd, err := capture.NewReader(f)
	if err != nil {
		return 0, &cliutil.ExitError{Code: cliutil.ExitUsage, Err: fmt.Errorf("%s: %w", path, err)}
	}
	sessions := 0
	b := session.NewBuilder(session.Options{Timeout: o.Timeout}, func(s *session.Session) {
		sessions++
		rep.Session(path, s)
	})
	damaged, listed := 0, 0
	sum, err := flow.Run(rd, flow.New(flow.Options{Servers: servers}), func(r *flow.Record) bool {
		if r.Err != nil {
			damaged++
			if listed < o.MaxDamageLines {
				listed++
				fmt.Fprintf(o.IO.Err, "%s: frame %d: %v\n", path, r.Frame, r.Err)
			}
		}
		rep.Record(r)
		b.Add(r)
		return true
	})
	if err != nil {
		return damaged, &cliutil.ExitError{Code: cliutil.ExitUsage, Err: fmt.Errorf("%s: %w", path, err)}
	}
	b.Finish()
	if damaged > listed {
		fmt.Fprintf(o.IO.Err, "%s: ... and %d more damaged records\n", path, damaged-listed)
	}
	totals.Merge(b.Totals())
	if !o.Quiet {
		fmt.Fprintf(o.IO.Err, "%s: %d records, %d Bridge Commander datagrams, %d sessions",
			path, sum.Capture.Records, sum.Flow.Datagrams, sessions)
		if damaged > 0 {
			fmt.Fprintf(o.IO.Err, "; %d DAMAGED", damaged)
		}
		fmt.Fprintln(o.IO.Err)
	}
	return damaged, nil
}
