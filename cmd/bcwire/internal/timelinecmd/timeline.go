// Package timelinecmd implements `bcwire timeline`: each player session's
// join phases, notable events and reliable-delivery figures. It also holds
// Scan, the capture-to-sessions loop that `bcwire stats` shares.
package timelinecmd

import (
	"fmt"
	"io"
	"net/netip"
	"os"
	"sync/atomic"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/cliutil"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/report"
	"github.com/bcwire/bcwire/session"
	"github.com/spf13/cobra"
)

// Options of `bcwire timeline`.
type Options struct {
	IO        *report.IO
	Files     []string
	JSON      bool
	Servers   []string
	Timeout   time.Duration
	Quiet     bool
	Checksums cliutil.Checksums
}

// NewCmdTimeline builds the cobra command.
func NewCmdTimeline(io *report.IO) *cobra.Command {
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

Exit status: 0 when everything decoded cleanly, 1 when some packets or
messages were damaged (listed on stderr with file and packet number), 2 for
usage or I/O errors.`,
		Example: `  bcwire timeline testdata/pcaps/battle.pcap
  bcwire timeline --json capture.pcapng | jq '.sessions[] | {name, phases}'
  bcwire timeline --server 10.0.0.1:22101 --timeout 30s capture.pcap`,
		RunE: func(c *cobra.Command, args []string) error {
			o.Files = args
			if len(o.Files) == 0 {
				return cliutil.Usage("give one or more capture files (see --help)")
			}
			return Run(o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.JSON, "json", false, `print {"sessions":[...]} with every figure, one session per line`)
	f.StringSliceVar(&o.Servers, "server", nil, "treat HOST:PORT as a server (default: detect servers)")
	f.DurationVar(&o.Timeout, "timeout", 45*time.Second, "end a session after this much capture time without traffic")
	f.BoolVarP(&o.Quiet, "quiet", "q", false, "do not print the per-file summary on stderr")
	o.Checksums.AddFlag(f)
	return cmd
}

// Run prints the timelines.
func Run(o *Options) error {
	servers, err := ParseServers(o.Servers)
	if err != nil {
		return err
	}
	if o.Timeout <= 0 {
		return cliutil.Usage("--timeout %s: must be positive", o.Timeout)
	}
	p := report.NewTimelinePrinter(o.IO.Out, o.JSON, o.IO.Color && !o.JSON)
	res, err := Scan(&ScanOptions{IO: o.IO, Files: o.Files, Servers: servers, Quiet: o.Quiet,
		Session: session.Options{Timeout: o.Timeout}, Capture: o.Checksums.Options()}, p.Session)
	if cerr := p.Close(); err == nil && cerr != nil {
		err = &cliutil.ExitError{Code: cliutil.ExitUsage, Err: cerr}
	}
	if err != nil {
		return err
	}
	return res.Err()
}

// ParseServers reads --server values.
func ParseServers(list []string) ([]netip.AddrPort, error) {
	var out []netip.AddrPort
	for _, s := range list {
		ap, err := netip.ParseAddrPort(s)
		if err != nil {
			return nil, cliutil.Usage("--server %q: want HOST:PORT with a numeric IPv4 address, e.g. 10.0.0.1:22101", s)
		}
		out = append(out, ap)
	}
	return out, nil
}

// ScanOptions say what Scan reads and how.
type ScanOptions struct {
	IO      *report.IO
	Files   []string
	Servers []netip.AddrPort
	Session session.Options
	Quiet   bool // no per-file summary on stderr
	// MaxDamageLines caps the damaged records listed on stderr per file
	// (default 20); the rest are counted.
	MaxDamageLines int
	// Record, when set, also sees every record (the HTML report counts
	// message rates from them).
	Record func(r *flow.Record)
	// Workers > 1 decrypts and splits datagrams on that many goroutines
	// (flow.RunParallel); the output is the same.
	Workers int
	// Flow and Capture carry the caps (fragment sets, flows, IPv4
	// reassembly); Flow.Servers is set from Servers.
	Flow    flow.Options
	Capture capture.Options
}

// ScanResult is what Scan found in all the files.
type ScanResult struct {
	Totals   session.Counts
	Sessions int
	Damaged  int // records that carried an error
	// BadChecksums counts, of Damaged, the packets that failed their
	// IPv4 or UDP checksum.
	BadChecksums int
}

// Err is the exit status the damage calls for: nil, or exit 1.
func (r *ScanResult) Err() error {
	if r.Damaged == 0 {
		return nil
	}
	return &cliutil.ExitError{Code: cliutil.ExitDamaged,
		Err: fmt.Errorf("%d damaged packets or messages (listed above with their packet numbers)%s", r.Damaged, cliutil.ChecksumHint(r.BadChecksums))}
}

// progressThreshold is the file size above which a terminal shows progress.
const progressThreshold = 16 << 20

// Scan reads each file through a flow.Tracker into a session.Builder and
// calls emit with every session as it ends. Each file is followed on its
// own (its own clock and flows). Damaged records are listed on stderr with
// the file and packet number. The error is an *cliutil.ExitError for files
// that cannot be opened or read, or for a failing emit.
func Scan(o *ScanOptions, emit func(file string, s *session.Session) error) (*ScanResult, error) {
	if o.MaxDamageLines <= 0 {
		o.MaxDamageLines = 20
	}
	res := &ScanResult{}
	for _, path := range o.Files {
		if err := scanFile(o, path, res, emit); err != nil {
			return res, err
		}
	}
	return res, nil
}

func scanFile(o *ScanOptions, path string, res *ScanResult, emit func(string, *session.Session) error) error {
	f, err := os.Open(path)
	if err != nil {
		return &cliutil.ExitError{Code: cliutil.ExitUsage, Err: err}
	}
	defer f.Close()
	var size int64
	if st, err := f.Stat(); err == nil {
		size = st.Size()
	}
	cr := &countingReader{r: f}
	rd, err := capture.NewReaderWithOptions(cr, o.Capture)
	if err != nil {
		return &cliutil.ExitError{Code: cliutil.ExitUsage, Err: fmt.Errorf("%s: %w", path, err)}
	}
	var prog *report.Progress
	if size >= progressThreshold {
		prog = report.NewProgress(o.IO, path, size)
	}

	var emitErr error
	sessions := 0
	b := session.NewBuilder(o.Session, func(s *session.Session) {
		sessions++
		if emitErr == nil {
			emitErr = emit(path, s)
		}
	})
	damaged, listed, n := 0, 0, 0
	fopts := o.Flow
	fopts.Servers = o.Servers
	tr := flow.New(fopts)
	run := flow.Run
	if o.Workers > 1 {
		run = func(src flow.Source, t *flow.Tracker, emit func(*flow.Record) bool) (flow.Summary, error) {
			return flow.RunParallel(src, t, o.Workers, emit)
		}
	}
	sum, err := run(rd, tr, func(r *flow.Record) bool {
		if r.Err != nil {
			damaged++
			if listed < o.MaxDamageLines {
				listed++
				prog.Clear()
				fmt.Fprintf(o.IO.Err, "%s: %s\n", path, damageText(r))
			}
		}
		b.Add(r)
		if o.Record != nil {
			o.Record(r)
		}
		if n++; n&1023 == 0 {
			prog.Update(cr.n.Load())
		}
		return emitErr == nil
	})
	prog.Clear()
	if err != nil {
		return &cliutil.ExitError{Code: cliutil.ExitUsage, Err: fmt.Errorf("%s: %w", path, err)}
	}
	b.Finish()
	if emitErr != nil {
		return &cliutil.ExitError{Code: cliutil.ExitUsage, Err: emitErr}
	}
	if damaged > listed {
		fmt.Fprintf(o.IO.Err, "%s: ... and %d more damaged records\n", path, damaged-listed)
	}
	res.Totals.Merge(b.Totals())
	res.Sessions += sessions
	res.Damaged += damaged
	res.BadChecksums += sum.Capture.BadChecksums
	if !o.Quiet {
		c, fs := sum.Capture, sum.Flow
		fmt.Fprintf(o.IO.Err, "%s: %d records, %d Bridge Commander datagrams, %d GameSpy, %d sessions (at most %d at once)",
			path, c.Records, fs.Datagrams, fs.GameSpy, sessions, b.Peak())
		if damaged > 0 {
			fmt.Fprintf(o.IO.Err, "; %d DAMAGED", damaged)
		}
		if ev := EvictionText(sum, b.Evicted()); ev != "" {
			fmt.Fprintf(o.IO.Err, "; %s", ev)
		}
		fmt.Fprintln(o.IO.Err)
	}
	return nil
}

// EvictionText says what the caps made the decoder forget, or "" when
// nothing was.
func EvictionText(sum flow.Summary, sessions int) string {
	c, f := sum.Capture, sum.Flow
	if c.FragmentsEvicted+f.FragmentsEvicted+f.FlowsEvicted+f.ServersEvicted+sessions == 0 {
		return ""
	}
	return fmt.Sprintf("caps evicted %d fragment sets, %d IPv4 fragment sets, %d flows, %d servers, %d sessions",
		f.FragmentsEvicted, c.FragmentsEvicted, f.FlowsEvicted, f.ServersEvicted, sessions)
}

// damageText names the packet and says what is wrong with it.
func damageText(r *flow.Record) string {
	if r.Kind == flow.KindDamaged && !r.Src.IsValid() {
		return r.Err.Error() // a capture record's error names its frame
	}
	where := fmt.Sprintf("frame %d", r.Frame)
	if r.Kind == flow.KindLost {
		where = fmt.Sprintf("frame %d (first fragment)", r.Frame)
	}
	if r.Src.IsValid() {
		where += fmt.Sprintf(" %s -> %s", r.Src, r.Dst)
	}
	return where + ": " + r.Err.Error()
}

// countingReader counts the bytes read, for the progress indicator; the
// count is atomic because with workers the reading runs on another
// goroutine.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}
