// Package decodecmd implements `bcwire decode`: print every transport
// message of one or more captures (or one pasted datagram), decoded.
package decodecmd

import (
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/input"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/interrupt"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/output"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/scan"
	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/report"
	display "github.com/bcwire/bcwire/report/filter"
	"github.com/spf13/cobra"
)

// Options of `bcwire decode`.
type Options struct {
	FailOn  exit.FailOn // --fail-on nonstock
	IO      *iostreams.IOStreams
	Files   []string
	Hex     string // decode this one datagram instead of files
	Plain   bool   // Hex is already decrypted
	Verbose bool
	JSON    bool
	Opcodes []string // names or numbers
	Dir     string
	Peer    int // -1 = any
	Servers []string
	Count   int // 0 = all
	// Quiet (-q) prints no packet lines, as tshark's -q, and no summary;
	// damage and errors still go to stderr, and -w still writes.
	Quiet bool
	// LineBuffered (-l) flushes the output after each packet, as tshark's
	// -l; reading a pipe does so too.
	LineBuffered bool
	Caps         input.Caps
	// tshark's: -r, -Y, -t; -T fields -e -E, -x; -w.
	Read  input.ReadFlags
	Print PrintFlags
	Write string
	Force bool // -w may replace an existing file
}

// NewCmdDecode builds the cobra command. runF, when set, is called with the
// parsed options instead of running the command (tests check flags with it).
func NewCmdDecode(io *iostreams.IOStreams, runF func(*Options) error) *cobra.Command {
	o := &Options{IO: io, Peer: -1}
	cmd := &cobra.Command{
		Use:   "decode [flags] FILE...",
		Short: "Print every message in a capture, decoded",
		Long: `Read pcap or pcapng captures, follow each Bridge Commander flow, decrypt
every datagram and print one line per transport message: frame number,
time since the first packet, addresses, direction, peer id, the message's
place in its datagram, transport type, reliability and sequence number,
and - when the message completes a game message - the opcode's name and
its fields. Fragments are reassembled; the line of the last fragment
carries the game message. GameSpy queries and replies are decoded too.

Nothing is dropped silently: a message that cannot be decoded is shown raw
with the reason, and decoding goes on.

Exit status: 0 when nothing was damaged (non-stock messages, intact but not
in stock's form, are reported and exit 0 unless --fail-on nonstock), 1 when
some packets or messages were damaged (the damage is in the output), 2 for usage or I/O
errors.`,
		Example: `  bcwire decode testdata/pcaps/battle.pcap
  bcwire decode -V --opcode StateUpdate -c 100 capture.pcapng
  bcwire decode --json capture.pcap | jq 'select(.name == "CHAT")'
  bcwire decode --dir s2c --server 10.0.0.1:22101 capture.pcap
  bcwire decode --dir 'C->S' --opcode CHAT capture.pcap
  bcwire decode --hex "01 02 03 06 C0 00 00 02 32 1B 80 ..." --plain
  bcwire decode --hex "FF D7 33 66 4C 5F 96 67 DF 00"
  bcwire decode -Y 'name == "CHAT" and fields.text contains "gg"' -r capture.pcap.gz
  bcwire decode -Y 'fields.speed > 5' -T fields -E header=y -e frame -e time -e fields.speed capture.pcap
  bcwire decode -x -t ad -Y 'opcode in [0x2C, 0x2D]' a.pcap b.pcapng
  bcwire decode -Y 'src contains "10.0.1.10" or dst contains "10.0.1.10"' -w player.pcapng capture.pcap`,
		RunE: func(c *cobra.Command, args []string) error {
			files, err := o.Read.Inputs(args)
			if err != nil {
				return err
			}
			o.Files = files
			if o.Hex == "" && len(o.Files) == 0 {
				return exit.Usage("give one or more capture files, or --hex HEX (see --help)")
			}
			if o.Hex != "" && len(o.Files) > 0 {
				return exit.Usage("--hex decodes one datagram; do not also give files")
			}
			if runF != nil {
				return runF(o)
			}
			return Run(o)
		},
	}
	f := cmd.Flags()
	f.BoolVarP(&o.Verbose, "verbose", "V", false, "print every field of each message")
	f.BoolVar(&o.JSON, "json", false, "print NDJSON: one object per transport message")
	f.StringVar(&o.Hex, "hex", "", "decode one datagram given as hex (as captured, i.e. encrypted, unless --plain)")
	f.BoolVar(&o.Plain, "plain", false, "with --hex: the hex is already decrypted")
	f.StringSliceVar(&o.Opcodes, "opcode", nil, "only game messages with these opcodes (names like StateUpdate or CHAT, or numbers like 0x1C); repeatable")
	f.StringVar(&o.Dir, "dir", "", "only one direction: c2s (client to server) or s2c; 'C->S' and 'S->C' (quoted) too")
	f.IntVar(&o.Peer, "peer", -1, "only datagrams with this peer id (1 = server, 2 = first client, 255 = connecting)")
	input.AddServerFlag(f, &o.Servers)
	f.IntVarP(&o.Count, "count", "c", 0, "read only the first `N` packets (of all the files together)")
	f.BoolVarP(&o.Quiet, "quiet", "q", false, "print no packet lines (as tshark's -q) and no summary; damage and errors still go to stderr, -w still writes")
	f.BoolVarP(&o.LineBuffered, "line-buffered", "l", false, "flush the output after each packet (as tshark's -l); done anyway when reading a pipe")
	exit.AddFailOnFlag(f, &o.FailOn)
	o.Caps.AddFlags(f, false)
	// The printing runs on the goroutine that decodes; with a second core,
	// reading, decryption and splitting run beside it (RunParallel), so
	// decode uses both by default. The output is the same.
	o.Caps.Workers = DefaultWorkers()
	f.Lookup("workers").DefValue = strconv.Itoa(o.Caps.Workers)
	input.AddReadFlags(f, &o.Read, true)
	AddPrintFlags(f, &o.Print)
	f.StringVarP(&o.Write, "write", "w", "", "write the frames of the messages kept to `FILE` as they were captured, instead of printing (pcapng if FILE ends in .pcapng, else pcap; - writes pcap to standard output)")
	output.AddForceFlag(f, &o.Force)
	return cmd
}

// DefaultWorkers is decode's --workers when not given: 2 where there are
// two cores or more, else 1.
func DefaultWorkers() int { return min(2, runtime.NumCPU()) }

type filter struct {
	opcodes map[game.Opcode]bool
	dir     game.Direction
	peer    int
	servers map[netip.AddrPort]bool
}

func (f *filter) keep(r *flow.Record) bool {
	if f.dir != game.DirUnknown && r.Dir != f.dir {
		return false
	}
	if f.peer >= 0 && (r.Kind == flow.KindGameSpy || int(r.Peer) != f.peer) {
		return false
	}
	if len(f.servers) > 0 && !f.servers[r.Server] {
		return false
	}
	if len(f.opcodes) > 0 && (r.Game == nil || !f.opcodes[r.Game.Msg.Opcode()]) {
		return false
	}
	return true
}

func parseFilter(o *Options) (*filter, []netip.AddrPort, error) {
	f := &filter{peer: o.Peer}
	switch strings.ToUpper(strings.ReplaceAll(o.Dir, " ", "")) {
	case "":
	case "C->S", "C2S", "CS", "CLIENT":
		f.dir = game.ClientToServer
	case "S->C", "S2C", "SC", "SERVER":
		f.dir = game.ServerToClient
	default:
		return nil, nil, exit.Usage("--dir %q: use c2s or s2c (or 'C->S', 'S->C' in quotes)", o.Dir)
	}
	if o.Peer > 255 || o.Peer < -1 {
		return nil, nil, exit.Usage("--peer %d: peer ids are 0-255", o.Peer)
	}
	if len(o.Opcodes) > 0 {
		f.opcodes = map[game.Opcode]bool{}
		for _, s := range o.Opcodes {
			op, ok := game.ParseOpcode(s)
			if !ok {
				return nil, nil, exit.Usage("--opcode %q: not an opcode name or number (e.g. StateUpdate, CHAT, 0x1C)", s)
			}
			f.opcodes[op] = true
		}
	}
	servers, err := input.ParseServers(o.Servers)
	if err != nil {
		return nil, nil, err
	}
	for _, ap := range servers {
		if f.servers == nil {
			f.servers = map[netip.AddrPort]bool{}
		}
		f.servers[ap] = true
	}
	return f, servers, nil
}

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

// Run decodes and prints.
func Run(o *Options) error {
	if err := o.FailOn.Check(); err != nil {
		return err
	}
	flt, servers, err := parseFilter(o)
	if err != nil {
		return err
	}
	if err := o.Caps.Check(); err != nil {
		return err
	}
	if err := input.CheckCount(o.Count); err != nil {
		return err
	}
	yflt, err := o.Read.CompileFilter()
	if err != nil {
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
	jsonArray := o.Print.Format == "json" // tshark's -T json: one array
	if jsonArray {
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
	var cut *FrameCutter
	var cutFile *output.AtomicFile
	if o.Write != "" {
		if o.Hex != "" {
			return exit.Usage("-w writes the frames of capture files; --hex has none")
		}
		if err := (output.Target{Flag: "-w", Path: o.Write, NoClobber: true, Force: o.Force}).Check(o.Files...); err != nil {
			return err
		}
		if o.Write == "-" { // tshark's habit: the capture on standard output
			cut = NewFrameCutter(o.IO.Out, capture.PCAP)
		} else {
			if cutFile, err = output.Create(o.Write); err != nil {
				return exit.IOError(o.Write, err)
			}
			defer cutFile.Abort()
			cut = NewFrameCutter(cutFile, FormatForName(o.Write))
		}
	}
	out := o.IO.Out
	if jsonArray {
		ja := newJSONArray(out)
		defer ja.Close()
		out = ja
	}
	lineFlush := o.LineBuffered || input.ReadsPipe(o.Files)
	var p recordPrinter
	var dp *report.DecodePrinter
	if fields {
		if p, err = report.NewFieldsPrinter(out, fieldsOpts, tf); err != nil {
			return exit.Usage("%v", err)
		}
	} else {
		format := report.DecodeText
		switch {
		case o.JSON:
			format = report.DecodeJSON
		case o.Verbose:
			format = report.DecodeVerbose
		}
		dp = report.NewDecodePrinter(out, format, o.IO.Color && !o.JSON)
		dp.SetTimeFormat(tf)
		dp.SetHexDump(o.Print.Hex)
		p = dp
	}
	defer p.Flush()
	ctx := &display.Context{}

	// SIGINT or SIGTERM ends reading where it is: the summary is printed
	// and a -w capture is not committed.
	intr, stopIntr := interrupt.Catch()
	defer stopIntr()
	var werr error
	var damage []string // of the current file, for stderr
	damagedHere, seen := 0, 0
	var srvSeen serverSeen // --server: whose traffic came
	emit := func(r *flow.Record) bool {
		if seen++; seen&1023 == 0 && interrupt.Closed(intr) {
			return false
		}
		if r.Err != nil {
			if damagedHere++; len(damage) < maxDamageLines || errors.Is(r.Err, capture.ErrUnreadable) {
				damage = append(damage, scan.DamageText(r))
			}
		}
		srvSeen.note(servers, r)
		p.Observe(r)
		if ctx.Start.IsZero() && !r.Time.IsZero() {
			ctx.Start = r.Time
		}
		if !flt.keep(r) || yflt != nil && !yflt.Match(r, ctx) {
			if yflt != nil && yflt.Err() != nil {
				werr = yflt.Err() // a -Y budget ran out, or a comparison that cannot be made
				return false
			}
			return true
		}
		if cut != nil {
			if err := cut.Keep(r); err != nil {
				werr = fmt.Errorf("-w %s: %w", o.Write, err)
				return false
			}
			return true
		}
		if o.Quiet {
			return true
		}
		var err error
		if dp != nil && yflt != nil {
			err = dp.PrintWithGameJSON(r, yflt.GameJSON())
		} else {
			err = p.Print(r)
		}
		if err == nil && lineFlush {
			err = p.Flush()
		}
		if err != nil {
			werr = err
			return false
		}
		return true
	}

	if o.Hex != "" {
		return runHex(o, servers, emit)
	}

	damaged, badChecksums, read, nonStock := 0, 0, 0, 0
	link := capture.LinkType(0) // of the first file, for an empty -w capture
	for _, path := range o.Files {
		damage, damagedHere = damage[:0], 0
		if interrupt.Closed(intr) {
			break
		}
		copts := input.TraceServer(o.Caps.Capture(), servers)
		copts.Interrupt = intr
		cf, err := input.OpenCapture(path, copts)
		if err != nil {
			p.Flush()
			return err
		}
		// Times count from each file's first packet; with several files
		// every line names its file.
		ctx.File, ctx.Start = input.FileName(path), time.Time{}
		switch {
		case fields:
			p.SetFile(ctx.File)
		case len(o.Files) > 1:
			p.SetFile(ctx.File)
		default:
			p.SetFile("")
		}
		// -c counts packets read, in all the files together.
		var rd flow.Source = cf.R
		if cut != nil {
			if link == 0 {
				if info, ok := cf.R.Interface(0); ok {
					link = info.LinkType
				}
			}
			rd = cut.Source(cf.R)
		}
		if o.Count > 0 {
			rd = input.FirstPackets(cf.R, o.Count-read)
		}
		fopts := o.Caps.Flow()
		fopts.Servers = servers
		tr := flow.New(fopts)
		var sum flow.Summary
		// -w copies the reader's current frame for each record kept, so it
		// reads one frame at a time: no reading ahead on other goroutines.
		if o.Caps.Workers > 1 && cut == nil {
			sum, err = flow.RunParallel(rd, tr, o.Caps.Workers, emit)
		} else {
			sum, err = flow.Run(rd, tr, emit)
		}
		expansion := cf.R.ExpansionText()
		cf.Close()
		if err != nil {
			p.Flush()
			return exit.IOError(path, err)
		}
		if werr != nil {
			return &exit.Error{Code: exit.CodeUsage, Err: werr}
		}
		damaged += sum.Damage
		nonStock += sum.Flow.NonStock
		badChecksums += sum.Capture.BadChecksums
		p.Flush()
		if !o.Quiet {
			printSummary(o.IO, path, sum, expansion)
			if note := cf.R.Note(); note != "" {
				fmt.Fprintf(o.IO.Err, "%s: %s\n", path, note)
			}
		}
		// The damage goes to stderr too, so that it survives a pipe into
		// jq or an output sent to /dev/null.
		for _, d := range damage {
			fmt.Fprintf(o.IO.Err, "%s: %s\n", path, d)
		}
		if damagedHere > len(damage) {
			fmt.Fprintf(o.IO.Err, "%s: ... and %d more damaged records\n", path, damagedHere-len(damage))
		}
		read += sum.Capture.Records
		if o.Count > 0 && read >= o.Count {
			break
		}
	}
	if err := p.Flush(); err != nil {
		return &exit.Error{Code: exit.CodeUsage, Err: err}
	}
	if interrupt.Closed(intr) {
		what := "the summary above is of the records read before the signal"
		if cut != nil {
			what += "; " + o.Write + " not written"
		}
		return &exit.Error{Code: exit.CodeInterrupted, Err: fmt.Errorf("interrupted: %s", what)}
	}
	srvSeen.report(o.IO.Err, servers)
	if cut != nil {
		if link == 0 {
			link = capture.Ethernet
		}
		if err := cut.Flush(link); err != nil {
			return exit.IOError(o.Write, err)
		}
		if cutFile != nil {
			if err := cutFile.Commit(); err != nil {
				return exit.IOError(o.Write, err)
			}
		}
		if !o.Quiet && cutFile != nil {
			fmt.Fprintf(o.IO.Err, "wrote %d frames to %s\n", cut.Written, o.Write)
		}
	}
	if damaged > 0 {
		return &exit.Error{Code: exit.CodeDamaged, Err: fmt.Errorf("%d damaged packets or messages (listed above and in the output)%s", damaged, input.ChecksumHint(badChecksums))}
	}
	return o.FailOn.NonStockErr(nonStock)
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
