package decodecmd

// One run of decode: the flags checked, the printer and the -w cutter
// made, each file followed and printed, the summaries and the exit status.

import (
	"errors"
	"fmt"
	"net/netip"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/gctune"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/input"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/interrupt"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/output"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/scan"
	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/report"
	display "github.com/bcwire/bcwire/report/filter"
)

// recordPrinter is decode's output: lines (report.DecodePrinter) or -T
// fields (report.FieldsPrinter).
type recordPrinter interface {
	Print(r *flow.Record) error
	Observe(r *flow.Record)
	SetFile(name string)
	Flush() error
}

// maxDamageLines caps the damaged records listed on stderr per file.
const maxDamageLines = 20

// decoding is one run of decode.
type decoding struct {
	o       *Options
	flt     *filter
	servers []netip.AddrPort
	yflt    *display.Filter // -Y
	ctx     display.Context // -Y's file and start time

	p         recordPrinter
	dp        *report.DecodePrinter // p, unless -T fields
	fields    bool                  // -T fields
	ja        *jsonArray            // -T json
	lineFlush bool                  // -l, or reading a pipe
	cut       *FrameCutter          // -w
	cutFile   *output.AtomicFile    // -w FILE (not -w -)
	link      capture.LinkType      // of the first file, for an empty -w capture

	intr <-chan struct{} // SIGINT or SIGTERM came
	werr error           // writing or -Y failed: stop
	// lazy makes the tracker leave StateUpdates for the printer's workers
	// to decode (flow.Tracker.DeferStateUpdates); lz decodes, for their
	// counts, those that emit does not print.
	lazy bool
	lz   flow.LazyDecoder

	// Of the current file: the damage listed on stderr after its summary.
	damage      []string
	damagedHere int
	seen        int
	srvSeen     serverSeen // --server: whose traffic came

	// Of all the files.
	damaged, badChecksums, read, nonStock int
}

// gcPercent is the collector's GOGC for decode when the environment does
// not set one. decode holds little (the flows, and the printer's batches
// while its workers format them: report's batchesExtra) and leaves little
// garbage, so a lower target costs a few more short cycles and keeps
// memory that the default would let double: on battle x200 and OpenBC
// battle x200, peak RSS of decode -V with the printer's workers+4 batches
// was 23.3-23.8 MiB at GOGC=100 and 21.2-21.4 MiB at 50 (2 runs each,
// 2026-11-27; workers+2 batches at 100: 22.4-22.7), for 11 cycles of a
// millisecond or two instead of 4 on decode --json of battle x200.
const gcPercent = 50

// Run decodes and prints.
func Run(o *Options) error {
	gctune.Percent(gcPercent) // unless GOGC is set
	d := &decoding{o: o}
	defer d.close()
	if err := d.setup(); err != nil {
		return err
	}
	// SIGINT or SIGTERM ends reading where it is: the summary is printed
	// and a -w capture is not committed.
	intr, stopIntr := interrupt.Catch()
	defer stopIntr()
	d.intr = intr
	if o.Hex != "" {
		return runHex(o, d.servers, d.emit)
	}
	for _, path := range o.Files {
		d.damage, d.damagedHere = d.damage[:0], 0
		if interrupt.Closed(intr) {
			break
		}
		if err := d.file(path); err != nil {
			return err
		}
		if o.Count > 0 && d.read >= o.Count {
			break
		}
	}
	return d.finish()
}

// setup checks the flags (in the order their messages have always come),
// opens -w's file and makes the printer.
func (d *decoding) setup() error {
	o := d.o
	if err := o.FailOn.Check(); err != nil {
		return err
	}
	var err error
	if d.flt, d.servers, err = parseFilter(o); err != nil {
		return err
	}
	if err := o.Caps.Check(); err != nil {
		return err
	}
	if err := input.CheckCount(o.Count); err != nil {
		return err
	}
	if d.yflt, err = o.Read.CompileFilter(); err != nil {
		return err
	}
	tf, err := o.Read.TimeFormat()
	if err != nil {
		return err
	}
	fieldsOpts, fields, err := o.Print.FieldsOptions()
	if err != nil {
		return err
	}
	d.fields = fields
	if o.Print.Format == "json" { // tshark's -T json: one array
		o.JSON = true
	}
	if fields && (o.JSON || o.Verbose) {
		return exit.Usage("-T fields prints the -e fields; do not also give --json or -V")
	}
	// Every input is checked before anything is printed or written, so
	// that a missing second file does not come after all of the first.
	if err := input.CheckInputs(o.Files); err != nil {
		return err
	}
	if err := d.openCut(); err != nil {
		return err
	}
	return d.newPrinter(tf, fieldsOpts)
}

// openCut starts -w: a capture of the frames of the messages kept.
func (d *decoding) openCut() error {
	o := d.o
	if o.Write == "" {
		return nil
	}
	if o.Hex != "" {
		return exit.Usage("-w writes the frames of capture files; --hex has none")
	}
	if err := (output.Target{Flag: "-w", Path: o.Write, NoClobber: true, Force: o.Force}).Check(o.Files...); err != nil {
		return err
	}
	if o.Write == "-" { // tshark's habit: the capture on standard output
		d.cut = NewFrameCutter(o.IO.Out, capture.PCAP)
		return nil
	}
	var err error
	if d.cutFile, err = output.Create(o.Write); err != nil {
		return exit.IOError(o.Write, err)
	}
	d.cut = NewFrameCutter(d.cutFile, FormatForName(o.Write))
	return nil
}

// newPrinter makes the printer: -T fields, or lines (text, -V, --json),
// into one JSON array for -T json.
func (d *decoding) newPrinter(tf report.TimeFormat, fieldsOpts report.FieldsOptions) error {
	o := d.o
	out := o.IO.Out
	if o.Print.Format == "json" {
		d.ja = newJSONArray(out)
		out = d.ja
	}
	d.lineFlush = o.LineBuffered || input.ReadsPipe(o.Files)
	if d.fields {
		p, err := report.NewFieldsPrinter(out, fieldsOpts, tf)
		if err != nil {
			return exit.Usage("%v", err)
		}
		d.p = p
		return nil
	}
	format := report.DecodeText
	switch {
	case o.JSON:
		format = report.DecodeJSON
	case o.Verbose:
		format = report.DecodeVerbose
	}
	d.dp = report.NewDecodePrinter(out, format, o.IO.Color && !o.JSON)
	d.dp.SetTimeFormat(tf)
	d.dp.SetHexDump(o.Print.Hex)
	if !d.lineFlush { // -l writes each line at once
		d.dp.SetWorkers(o.Caps.Workers)
		// The workers decode the StateUpdates too, unless a filter needs
		// them decoded before it can keep or drop them (-Y, --opcode), or
		// none is printed (-q, -w): then the Tracker does. Hex dumps
		// are printed on this goroutine.
		d.lazy = o.Caps.Workers > 1 && d.yflt == nil && len(d.flt.opcodes) == 0 &&
			!o.Quiet && d.cut == nil && !o.Print.Hex
	}
	d.p = d.dp
	return nil
}

// close flushes the printer, ends -T json's array and removes -w's
// temporary file unless it was committed.
func (d *decoding) close() {
	if d.p != nil {
		d.p.Flush()
	}
	if d.ja != nil {
		d.ja.Close()
	}
	if d.cutFile != nil {
		d.cutFile.Abort()
	}
}

// emit sees every record of every file: it notes damage and servers,
// applies the filters, and prints the record or copies its frame (-w).
// false stops reading. A Lazy record it does not print it decodes for the
// counts (countLazy).
func (d *decoding) emit(r *flow.Record) bool {
	if d.seen++; d.seen&1023 == 0 && interrupt.Closed(d.intr) {
		d.countLazy(r)
		return false
	}
	if r.Err != nil {
		if d.damagedHere++; len(d.damage) < maxDamageLines || errors.Is(r.Err, capture.ErrUnreadable) {
			d.damage = append(d.damage, scan.DamageText(r))
		}
	}
	d.srvSeen.note(d.servers, r)
	d.p.Observe(r)
	if d.ctx.Start.IsZero() && !r.Time.IsZero() {
		d.ctx.Start = r.Time
	}
	if !d.flt.keep(r) || d.yflt != nil && !d.yflt.Match(r, &d.ctx) {
		d.countLazy(r)
		if d.yflt != nil && d.yflt.Err() != nil {
			d.werr = d.yflt.Err() // a -Y budget ran out, or a comparison that cannot be made
			return false
		}
		return true
	}
	if d.cut != nil {
		if err := d.cut.Keep(r); err != nil {
			d.werr = fmt.Errorf("-w %s: %w", d.o.Write, err)
			return false
		}
		return true
	}
	if d.o.Quiet {
		return true
	}
	var err error
	if d.dp != nil && d.yflt != nil {
		err = d.dp.PrintWithGameJSON(r, d.yflt.GameJSON())
	} else {
		err = d.p.Print(r)
	}
	if err == nil && d.lineFlush {
		err = d.p.Flush()
	}
	if err != nil {
		d.werr = err
		return false
	}
	return true
}

// file follows and prints one capture file, then its summary and damage
// on stderr.
func (d *decoding) file(path string) error {
	o := d.o
	copts := input.TraceServer(o.Caps.Capture(), d.servers)
	copts.Interrupt = d.intr
	cf, err := input.OpenCapture(path, copts)
	if err != nil {
		d.p.Flush()
		return err
	}
	// Times count from each file's first packet; with several files
	// every line names its file.
	d.ctx.File, d.ctx.Start = input.FileName(path), time.Time{}
	if d.fields || len(o.Files) > 1 {
		d.p.SetFile(d.ctx.File)
	} else {
		d.p.SetFile("")
	}
	sum, err := d.follow(cf)
	expansion := cf.R.ExpansionText()
	cf.Close()
	if err != nil {
		d.p.Flush()
		return exit.IOError(path, err)
	}
	if d.werr != nil {
		return &exit.Error{Code: exit.CodeUsage, Err: d.werr}
	}
	d.p.Flush()
	if d.lazy { // the counts of the StateUpdates decoded after the Tracker
		d.dp.AddLazyStats(&sum.Flow)
		d.lz.AddTo(&sum.Flow)
	}
	d.damaged += sum.Damage
	d.nonStock += sum.Flow.NonStock
	d.badChecksums += sum.Capture.BadChecksums
	if !o.Quiet {
		printSummary(o.IO, path, sum, expansion)
		if note := cf.R.Note(); note != "" {
			fmt.Fprintf(o.IO.Err, "%s: %s\n", path, note)
		}
	}
	// The damage goes to stderr too, so that it survives a pipe into
	// jq or an output sent to /dev/null.
	for _, dm := range d.damage {
		fmt.Fprintf(o.IO.Err, "%s: %s\n", path, dm)
	}
	if d.damagedHere > len(d.damage) {
		fmt.Fprintf(o.IO.Err, "%s: ... and %d more damaged records\n", path, d.damagedHere-len(d.damage))
	}
	d.read += sum.Capture.Records
	return nil
}

// follow runs the file's records through a tracker into emit.
func (d *decoding) follow(cf *input.CaptureFile) (flow.Summary, error) {
	o := d.o
	// -c counts packets read, in all the files together.
	var rd flow.Source = cf.R
	if d.cut != nil {
		if d.link == 0 {
			if info, ok := cf.R.Interface(0); ok {
				d.link = info.LinkType
			}
		}
		rd = d.cut.Source(cf.R)
	}
	if o.Count > 0 {
		rd = input.FirstPackets(cf.R, o.Count-d.read)
	}
	fopts := o.Caps.Flow()
	fopts.Servers = d.servers
	tr := flow.New(fopts)
	tr.DeferStateUpdates(d.lazy)
	// -w copies the reader's current frame for each record kept, so it
	// reads one frame at a time: no reading ahead on other goroutines.
	if o.Caps.Workers > 1 && d.cut == nil {
		return flow.RunParallel(rd, tr, o.Caps.Workers, d.emit)
	}
	return flow.Run(rd, tr, d.emit)
}

// finish ends the output after the last file: an interrupted run says so,
// -w's capture is committed, and damage or --fail-on decides the status.
func (d *decoding) finish() error {
	o := d.o
	if err := d.p.Flush(); err != nil {
		return &exit.Error{Code: exit.CodeUsage, Err: err}
	}
	if interrupt.Closed(d.intr) {
		what := "the summary above is of the records read before the signal"
		if d.cut != nil {
			what += "; " + o.Write + " not written"
		}
		return &exit.Error{Code: exit.CodeInterrupted, Err: fmt.Errorf("interrupted: %s", what)}
	}
	d.srvSeen.report(o.IO.Err, d.servers)
	if d.cut != nil {
		if err := d.commitCut(); err != nil {
			return err
		}
	}
	if d.damaged > 0 {
		return &exit.Error{Code: exit.CodeDamaged, Err: fmt.Errorf("%d damaged packets or messages (listed above and in the output)%s", d.damaged, input.ChecksumHint(d.badChecksums))}
	}
	return o.FailOn.NonStockErr(d.nonStock)
}

// commitCut writes out -w's capture and renames it into place.
func (d *decoding) commitCut() error {
	o := d.o
	if d.link == 0 {
		d.link = capture.Ethernet
	}
	if err := d.cut.Flush(d.link); err != nil {
		return exit.IOError(o.Write, err)
	}
	if d.cutFile == nil {
		return nil
	}
	if err := d.cutFile.Commit(); err != nil {
		return exit.IOError(o.Write, err)
	}
	if !o.Quiet {
		fmt.Fprintf(o.IO.Err, "wrote %d frames to %s\n", d.cut.Written, o.Write)
	}
	return nil
}

func printSummary(io *iostreams.IOStreams, path string, s flow.Summary, expansion string) {
	c, f := s.Capture, s.Flow
	fmt.Fprintf(io.Err, "%s: %d records, %d UDP datagrams (%d Bridge Commander, %d GameSpy, %d other UDP), %d transport messages, %d game messages",
		path, c.Records, c.UDP, f.Datagrams, f.GameSpy, f.OtherUDP, f.Messages, f.GameMessages)
	if c.NonIPv4+c.NonUDP+c.UnknownLink > 0 {
		fmt.Fprintf(io.Err, "; skipped %d non-IPv4, %d non-UDP, %d unknown-link records", c.NonIPv4, c.NonUDP, c.UnknownLink)
	}
	if c.Reassembled > 0 {
		fmt.Fprintf(io.Err, "; %d IPv4 datagrams reassembled", c.Reassembled)
	}
	if f.Reassembled > 0 {
		fmt.Fprintf(io.Err, "; %d fragmented game messages reassembled", f.Reassembled)
	}
	if s.Damage > 0 {
		fmt.Fprintf(io.Err, "; %d DAMAGED (%d capture records, %d datagrams, %d lost fragment sets, %d fragment sets evicted)",
			s.Damage, c.Damaged, f.Damaged, f.FragmentsLost+c.FragmentsIncomplete, f.FragmentsEvicted+c.FragmentsEvicted)
	}
	if f.NonStock > 0 {
		fmt.Fprintf(io.Err, "; %d non-stock messages (intact, not damage)", f.NonStock)
	}
	if f.FlowsEvicted+f.ServersEvicted > 0 || (s.Damage == 0 && f.FragmentsEvicted+c.FragmentsEvicted > 0) {
		fmt.Fprintf(io.Err, "; caps evicted %d fragment sets, %d IPv4 fragment sets, %d flows, %d servers",
			f.FragmentsEvicted, c.FragmentsEvicted, f.FlowsEvicted, f.ServersEvicted)
	}
	if expansion != "" {
		fmt.Fprintf(io.Err, "; %s", expansion)
	}
	fmt.Fprintln(io.Err)
}

// runHex decodes a single pasted datagram. Its direction comes from the
// peer byte; addresses are placeholders.
func runHex(o *Options, servers []netip.AddrPort, emit func(*flow.Record) bool) error {
	b, err := input.ParseHex(o.Hex)
	if err != nil {
		return exit.Usage("--hex: %v", err)
	}
	if o.Plain && !dissect.IsGameSpy(b) {
		dissect.Encrypt(b, b) // the tracker decrypts
	}
	server := netip.MustParseAddrPort("0.0.0.1:22101")
	client := netip.MustParseAddrPort("0.0.0.2:1")
	src, dst := client, server
	if len(b) > 0 && b[0] == 0x01 {
		src, dst = server, client
	}
	tr := flow.New(flow.Options{Servers: []netip.AddrPort{server}})
	damaged, nonStock := 0, 0
	tr.Datagram(1, time.Time{}, src, dst, b, func(r *flow.Record) {
		if r.Err != nil {
			damaged++
		}
		if r.NonStock != nil {
			nonStock++
		}
		emit(r)
	})
	tr.Finish(func(r *flow.Record) { damaged++; emit(r) })
	if damaged > 0 {
		return &exit.Error{Code: exit.CodeDamaged, Err: fmt.Errorf("the datagram is damaged (see the output)")}
	}
	return o.FailOn.NonStockErr(nonStock)
}

// countLazy decodes r for the summary's counts when it is Lazy and not
// printed (the printer decodes those it prints).
func (d *decoding) countLazy(r *flow.Record) {
	if r.Lazy {
		d.lz.Count(r)
	}
}
