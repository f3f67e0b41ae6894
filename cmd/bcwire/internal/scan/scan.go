// Package scan is the capture-to-sessions loop of stats, timeline, report,
// export and diff (LoadDiff), with what a person running them sees on
// stderr: progress on large files, the damaged packets with their numbers
// (DamageText, which decode uses too), and a summary line per file. The
// loop itself is session.Scan.
package scan

import (
	"errors"
	"fmt"
	"io"
	"net/netip"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/input"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/interrupt"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/report/filter"
	"github.com/bcwire/bcwire/session"
)

// Options say what Run reads and how.
type Options struct {
	IO      *iostreams.IOStreams
	Files   []string
	Servers []netip.AddrPort
	Session session.Options
	Quiet   bool // no per-file summary on stderr
	// MaxDamageLines caps the damaged records listed on stderr per file
	// (default 20); the rest are counted.
	MaxDamageLines int
	// Record, when set, also sees every record (the HTML report counts
	// message rates from them). It is read after File's call, which may
	// set it for the file.
	Record session.Recorder
	// File, when set, is told each file's path before its records.
	File func(path string)
	// Workers > 1 reads the capture on a goroutine of its own and decrypts
	// the datagrams on that many more (flow.RunParallel); the output is
	// the same.
	Workers int
	// Flow and Capture carry the caps (fragment sets, flows, IPv4
	// reassembly); Flow.Servers is set from Servers.
	Flow    flow.Options
	Capture capture.Options
	// Filter (-Y), when set, chooses the records the sessions are built
	// from and Record sees, as --server does.
	Filter *filter.Filter
	// Count > 0 reads only the first Count packets of all the files
	// together (-c).
	Count int
	// Reuse says that emit keeps nothing of a Session once it returns
	// (session.ScanOptions.Reuse): later sessions are built in its memory.
	Reuse bool
	// Interrupt (interrupt.Catch), when closed, stops reading: the file
	// being read ends where it is, with its summary, and the files after
	// it are not read (Result.Interrupted).
	Interrupt <-chan struct{}
}

// Result is what Run found in all the files.
type Result struct {
	Totals   session.Counts
	Sessions int
	Damaged  int // records that carried an error
	NonStock int // messages marked non-stock (intact, not damage)
	// BadChecksums counts, of Damaged, the packets that failed their
	// IPv4 or UDP checksum.
	BadChecksums int
	// Interrupted: Options.Interrupt stopped the scan, so the counts
	// are of what was read before it.
	Interrupted bool
}

// Err is the exit status the damage calls for: nil, or exit 1.
func (r *Result) Err() error {
	if r.Damaged == 0 {
		return nil
	}
	return r.damageErr()
}

// ErrFailOn is Err, and with --fail-on nonstock also exit 1 for non-stock
// messages.
func (r *Result) ErrFailOn(f exit.FailOn) error {
	if r.Damaged == 0 {
		return f.NonStockErr(r.NonStock)
	}
	return r.damageErr()
}

func (r *Result) damageErr() error {
	return &exit.Error{Code: exit.CodeDamaged,
		Err: fmt.Errorf("%d damaged packets or messages (listed above with their packet numbers)%s", r.Damaged, input.ChecksumHint(r.BadChecksums))}
}

// InterruptedOr is the exit status of an interrupted scan (exit.CodeInterrupted,
// saying that what was printed covers the records read before the signal),
// or err.
func (r *Result) InterruptedOr(err error) error {
	if !r.Interrupted {
		return err
	}
	return &exit.Error{Code: exit.CodeInterrupted,
		Err: errors.New("interrupted: what is printed above covers the records read before the signal")}
}

// progressThreshold is the file size above which a terminal shows progress.
const progressThreshold = 16 << 20

// Run reads each file with session.Scan and calls emit with every session
// as it ends. Each file is followed on its own (its own clock and flows).
// Damaged records are listed on stderr with the file and packet number.
// The error is an *exit.Error for files that cannot be opened or read, or
// for a failing emit.
func Run(o *Options, emit func(file string, s *session.Session) error) (*Result, error) {
	if o.MaxDamageLines <= 0 {
		o.MaxDamageLines = 20
	}
	res := &Result{}
	if err := input.CheckCount(o.Count); err != nil {
		return res, err
	}
	if err := input.CheckInputs(o.Files); err != nil {
		return res, err
	}
	read := 0 // packets, for -c
	for _, path := range o.Files {
		if res.Interrupted = interrupt.Closed(o.Interrupt); res.Interrupted {
			break
		}
		if err := scanFile(o, path, res, &read, emit); err != nil {
			return res, err
		}
		if o.Count > 0 && read >= o.Count {
			break
		}
	}
	res.Interrupted = res.Interrupted || interrupt.Closed(o.Interrupt)
	return res, nil
}

func scanFile(o *Options, path string, res *Result, read *int, emit func(string, *session.Session) error) error {
	if o.File != nil {
		o.File(path)
	}
	copts := input.TraceServer(o.Capture, o.Servers)
	copts.Interrupt = o.Interrupt
	cf, err := input.OpenCapture(path, copts)
	if err != nil {
		return err
	}
	defer cf.Close()
	var prog *iostreams.Progress
	if cf.Size >= progressThreshold {
		prog = iostreams.NewProgress(o.IO, path, cf.Size)
	}

	listed := 0
	sopts := sessionOptions(o, path)
	// Scan's own hooks, not one closure per record: Damaged runs only on
	// damaged records, Kept is the caller's Record itself, Tick runs every
	// 1024 records.
	sopts.Damaged = func(r *flow.Record) {
		if o.Filter != nil && o.Filter.Err() != nil {
			return // the scan is stopping (Tick): the error ends the file
		}
		if listed < o.MaxDamageLines || errors.Is(r.Err, capture.ErrUnreadable) {
			listed++
			prog.Clear()
			fmt.Fprintf(o.IO.Err, "%s: %s\n", path, DamageText(r))
		}
	}
	sopts.Kept = o.Record
	sopts.Tick = func() bool {
		prog.Update(cf.Read())
		// A -Y filter that failed (its budget ran out) keeps no record
		// from then on, and its error ends the file, below.
		return !interrupt.Closed(o.Interrupt) && (o.Filter == nil || o.Filter.Err() == nil)
	}
	var src flow.Source = cf.R
	if o.Count > 0 {
		src = input.FirstPackets(cf.R, o.Count-*read)
	}
	var emitErr error
	sum, err := session.Scan(src, sopts, func(s *session.Session) error {
		emitErr = emit(path, s)
		return emitErr
	})
	prog.Clear()
	if o.Filter != nil && o.Filter.Err() != nil {
		return &exit.Error{Code: exit.CodeUsage, Err: o.Filter.Err()}
	}
	if emitErr != nil {
		return &exit.Error{Code: exit.CodeUsage, Err: emitErr} // writing the output failed
	}
	if err != nil {
		return exit.IOError(path, err)
	}
	if sum.Damaged > listed {
		fmt.Fprintf(o.IO.Err, "%s: ... and %d more damaged records\n", path, sum.Damaged-listed)
	}
	*read += sum.Summary.Capture.Records
	res.Totals.Merge(&sum.Totals)
	res.Sessions += sum.Sessions
	res.Damaged += sum.Damaged
	res.NonStock += sum.NonStock
	res.BadChecksums += sum.Summary.Capture.BadChecksums
	if !o.Quiet {
		printSummary(o.IO.Err, path, sum, cf)
	}
	return nil
}

// printSummary is a file's line on stderr (and the reader's note, if any).
func printSummary(w io.Writer, path string, sum *session.ScanResult, cf *input.CaptureFile) {
	c, fs := sum.Summary.Capture, sum.Summary.Flow
	fmt.Fprintf(w, "%s: %d records, %d Bridge Commander datagrams, %d GameSpy, %d sessions (at most %d at once)",
		path, c.Records, fs.Datagrams, fs.GameSpy, sum.Sessions, sum.Peak)
	if sum.Damaged > 0 {
		fmt.Fprintf(w, "; %d DAMAGED", sum.Damaged)
	}
	if sum.NonStock > 0 {
		fmt.Fprintf(w, "; %d non-stock messages (intact, not damage)", sum.NonStock)
	}
	if ev := EvictionText(sum.Summary, sum.Evicted); ev != "" {
		fmt.Fprintf(w, "; %s", ev)
	}
	if x := cf.R.ExpansionText(); x != "" {
		fmt.Fprintf(w, "; %s", x)
	}
	fmt.Fprintln(w)
	if note := cf.R.Note(); note != "" {
		fmt.Fprintf(w, "%s: %s\n", path, note)
	}
}

// sessionOptions are session.Scan's options for the file path: the caps,
// and --server and -Y choosing the records.
func sessionOptions(o *Options, path string) session.ScanOptions {
	sopts := session.ScanOptions{Session: o.Session, Flow: o.Flow, Workers: o.Workers, Reuse: o.Reuse}
	sopts.Flow.Servers = o.Servers
	if len(o.Servers) > 0 {
		sopts.Keep = KeepServers(o.Servers)
	}
	if o.Filter != nil {
		sopts.Keep = KeepFiltered(o.Filter, input.FileName(path), sopts.Keep)
	}
	return sopts
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

// DamageText names the packet and says what is wrong with it.
func DamageText(r *flow.Record) string {
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

// KeepFiltered chooses the records of file that the display filter f
// holds for and keep (when set) keeps. Times count from the file's first
// record.
func KeepFiltered(f *filter.Filter, file string, keep func(*flow.Record) bool) func(*flow.Record) bool {
	ctx := &filter.Context{File: file}
	return func(r *flow.Record) bool {
		if ctx.Start.IsZero() && !r.Time.IsZero() {
			ctx.Start = r.Time
		}
		return (keep == nil || keep(r)) && f.Match(r, ctx)
	}
}

// KeepServers chooses the records of the --server servers.
func KeepServers(servers []netip.AddrPort) func(r *flow.Record) bool {
	set := make(map[netip.AddrPort]bool, len(servers))
	for _, s := range servers {
		set[s] = true
	}
	return func(r *flow.Record) bool { return set[r.Server] }
}
