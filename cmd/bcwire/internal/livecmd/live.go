// Package livecmd implements `bcwire live`: capture an interface and decode
// Bridge Commander traffic as it happens, with the pipeline and printers of
// `bcwire decode` and the session tracking of `bcwire stats`; -w files
// switched as dumpcap's ring buffer does (-b, rotate.go), and the summary
// at the stop that accounts for every packet the kernel passed (summary.go).
package livecmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"slices"
	"syscall"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/input"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/output"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/scan"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/live"
	"github.com/bcwire/bcwire/dissect/pcapfilter"
	"github.com/bcwire/bcwire/report"
	"github.com/bcwire/bcwire/report/filter"
	"github.com/bcwire/bcwire/report/metrics"
	"github.com/bcwire/bcwire/session"
	"github.com/google/gopacket"
	"github.com/spf13/cobra"
)

// Options of `bcwire live`.
type Options struct {
	IO         *iostreams.IOStreams
	Iface      string
	Port       int
	Filter     string
	Auto       bool
	Write      string
	Ring       []string // -b conditions
	Count      int
	Duration   time.Duration
	JSON       bool
	Verbose    bool
	StatsEvery time.Duration
	Servers    []string
	StatsOnly  bool // no per-message lines
	Quiet      bool // nothing on stderr but errors and --stats-every
	Promisc    bool
	Snaplen    int
	Checksums  input.Checksums
	Read       input.ReadFlags // -Y and -t
	Hex        bool            // -x
	Metrics    string          // serve Prometheus metrics at http://ADDR/metrics
	Recvmsg    bool            // one system call per packet instead of the TPACKET_V3 ring
	Force      bool            // -w may replace an existing file

	// Ctx, when set, stops the capture when done (tests); Ctrl-C and
	// SIGTERM always do.
	Ctx context.Context
	// Ready, when set, is called once the socket is capturing (tests).
	Ready func()
	// MetricsReady and Stopped, when set, are called with the metrics
	// address once it listens, and once the capture ended and the metrics
	// hold its final figures, before the endpoint closes (tests).
	MetricsReady func(addr net.Addr)
	Stopped      func()
	// create opens each -w file (default output.Create; tests inject a
	// full disk).
	create func(path string) (captureFile, error)
}

// NewCmdLive builds the cobra command. runF, when set, is called with the
// parsed options instead of running the command (tests check flags with it).
func NewCmdLive(io *iostreams.IOStreams, runF func(*Options) error) *cobra.Command {
	o := &Options{IO: io}
	cmd := &cobra.Command{
		Use:   "live -i IFACE [flags]",
		Short: "Capture an interface and decode Bridge Commander traffic as it happens",
		Long: `Capture packets on a network interface (Linux, no libpcap needed) and
decode them as they arrive, exactly as 'bcwire decode' decodes a file: one
line per transport message (-V every field, --json NDJSON), with the same
server detection, fragment reassembly and session tracking.

By default the kernel passes only UDP to and from the server port (--port,
22101). -f replaces that with a tcpdump-style filter; the supported subset is
  ip, udp, tcp, icmp, [src|dst] host A.B.C.D, [src|dst] net A.B.C.D/N,
  [udp|tcp] [src|dst] port N, [udp|tcp] [src|dst] portrange N-M,
  not / and / or (also ! && ||) and parentheses.

--auto finds servers on other ports: the kernel also passes any UDP datagram
whose payload starts with 0x01 (a server's peer id) or a backslash (GameSpy);
when the decoder confirms a Bridge Commander server or a GameSpy reply on a
new port, the kernel filter is re-installed with that port added, so the
clients' traffic to it is captured from then on (a note on stderr says so).

-w also writes every captured packet to a pcapng file that Wireshark and
'bcwire decode' read; decoding it later gives the same lines, frame numbers
included. While capturing, the file grows beside its name as
.NAME.*.partial (flushed every second, so a crash loses little: the data is
there) and is renamed to NAME when the capture ends, Ctrl-C included. An
existing non-empty NAME is not replaced unless --force.

-b switches -w files as dumpcap's ring buffer does, for captures that run
for months: -b filesize:KB starts a new file before one would pass KB
kilobytes (dumpcap's unit: 1 kB = 1000 bytes), -b duration:SEC after SEC
seconds (also when no packet comes), and -b files:N keeps only the last N
files, removing the oldest. Files are named as dumpcap names them, with a
counter and the local start time: -w day.pcapng gives
day_00001_20261125183000.pcapng, day_00002_..., each renamed from its
temporary name when complete; every packet goes to exactly one file. A full
disk stops the capture with a message that says so (exit status 2); the
completed files stay, and the one being written stays under its temporary
name with the packets written until then. The packets captured after it
are still decoded, and counted as not written.

--stats-every prints a summary line on stderr: sessions, datagrams and bytes
per second, retransmissions, damaged messages and kernel drops. When the
capture ends (Ctrl-C, SIGTERM, -c, --duration, an error) every packet the
kernel had passed until then is still read, written and decoded (waiting
for the kernel to hand over its last ring block, at most about 100 ms), every
open session is closed, and a summary of each session and the statistics
table go to stderr. The summary accounts for every packet the kernel
passed: captured, after -c, or LOST (never silently).

--metrics ADDR serves Prometheus metrics at http://ADDR/metrics: datagrams,
bytes and messages by direction and opcode, sessions, players per server,
retransmissions, fragments, damage, ACK round-trip times, GameSpy queries
(see the README, Metrics for Prometheus). They are updated once a second.

Capturing needs root or the CAP_NET_RAW capability
(sudo setcap cap_net_raw+ep $(command -v bcwire-full); live runs in bcwire-full).

Exit status: 0 when everything decoded cleanly, 1 when some packets or
messages were damaged, 2 for usage errors, a missing interface or
permission, or an I/O error.`,
		Example: `  sudo bcwire live -i eth0
  sudo bcwire live -i eth0 --port 22101 -w server.pcapng --stats-every 10s --stats-only
  sudo bcwire live -i lo --json -c 1000 | jq 'select(.name == "CHAT")'
  sudo bcwire live -i eth0 --auto --duration 1h -w night.pcapng
  sudo bcwire live -i eth0 -f "udp port 22101 and not host 10.0.0.7"`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o)
			}
			return Run(o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.Iface, "interface", "i", "", "capture on this interface (e.g. eth0, lo)")
	f.IntVar(&o.Port, "port", flow.DefaultPort, "the server's UDP port, for the default filter")
	f.StringVarP(&o.Filter, "filter", "f", "", `kernel filter, tcpdump syntax (default "udp port PORT")`)
	f.BoolVar(&o.Auto, "auto", false, "also find servers on other ports (see above)")
	f.StringVarP(&o.Write, "write", "w", "", "also write every captured packet to `FILE` (pcap when it ends in .pcap or .cap, else pcapng)")
	output.AddForceFlag(f, &o.Force)
	f.StringArrayVarP(&o.Ring, "ring-buffer", "b", nil, "with -w, switch files: filesize:KB (1 kB = 1000 bytes, as dumpcap), duration:SEC, files:N (keep the last N); repeatable")
	f.IntVarP(&o.Count, "count", "c", 0, "stop after COUNT captured packets")
	f.DurationVar(&o.Duration, "duration", 0, "stop after this long (e.g. 30s, 1h)")
	f.BoolVarP(&o.Verbose, "verbose", "V", false, "print every field of each message")
	f.BoolVar(&o.JSON, "json", false, "print NDJSON: one object per transport message")
	f.DurationVar(&o.StatsEvery, "stats-every", 0, "print a summary line on stderr this often (e.g. 10s)")
	input.AddServerFlag(f, &o.Servers)
	f.BoolVar(&o.StatsOnly, "stats-only", false, "do not print messages, only the statistics")
	output.AddQuietFlag(f, &o.Quiet)
	input.AddFilterFlags(f, &o.Read, true)
	f.BoolVarP(&o.Hex, "hex-dump", "x", false, "add each datagram's decrypted bytes in hex and ASCII under its first message shown")
	f.BoolVar(&o.Promisc, "promisc", false, "put the interface in promiscuous mode (capture traffic not addressed to this host)")
	f.IntVar(&o.Snaplen, "snaplen", 262144, "keep at most this many bytes of each packet")
	o.Checksums.AddFlag(f)
	f.BoolVar(&o.Recvmsg, "recvmsg", false, "read each packet with its own system call instead of the memory-mapped ring (for comparison; bench/live-cpu.sh)")
	_ = f.MarkHidden("recvmsg")
	f.StringVar(&o.Metrics, "metrics", "", "serve Prometheus metrics at http://ADDR/metrics (e.g. 127.0.0.1:9120)")
	return cmd
}

// Run captures and prints until stopped.
func Run(o *Options) error {
	l, ring, servers, err := newLiveRun(o)
	if err != nil {
		return err
	}
	h, err := live.Open(o.Iface, live.Options{Filter: l.filter(), Promiscuous: o.Promisc, Snaplen: o.Snaplen, NoRing: o.Recvmsg})
	if err != nil {
		return &exit.Error{Code: exit.CodeUsage, Err: err}
	}
	defer h.Close()
	l.h = h
	if o.Write != "" {
		if err := l.startWriter(ring); err != nil {
			return err
		}
		defer l.rw.Abort() // after a failure; a clean end commits first
	}
	if o.Metrics != "" {
		ep, err := l.serveMetrics()
		if err != nil {
			return err
		}
		defer ep.Close()
	}
	parent := o.Ctx
	if parent == nil {
		parent = context.Background()
	}
	ctx, stop := signal.NotifyContext(parent, os.Interrupt, syscall.SIGTERM)
	defer stop()
	if o.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Duration)
		defer cancel()
	}
	return l.run(ctx, servers)
}

// newLiveRun checks the flags and makes the run's state; ring is -b's.
func newLiveRun(o *Options) (*liveRun, ringOptions, []netip.AddrPort, error) {
	var ring ringOptions
	if o.Iface == "" {
		return nil, ring, nil, exit.Usage("give the interface to capture on with -i IFACE (e.g. -i eth0; see --help)")
	}
	if o.Port < 1 || o.Port > 65535 {
		return nil, ring, nil, exit.Usage("--port %d: ports are 1-65535", o.Port)
	}
	if o.Count < 0 || o.Duration < 0 || o.StatsEvery < 0 {
		return nil, ring, nil, exit.Usage("-c, --duration and --stats-every cannot be negative")
	}
	if o.Snaplen < 64 || o.Snaplen > 262144 {
		return nil, ring, nil, exit.Usage("--snaplen %d: use 64-262144", o.Snaplen)
	}
	ring, err := parseRing(o.Ring)
	if err != nil {
		return nil, ring, nil, err
	}
	if len(o.Ring) > 0 && o.Write == "" {
		return nil, ring, nil, exit.Usage("-b needs -w FILE (the files to switch)")
	}
	servers, err := input.ParseServers(o.Servers)
	if err != nil {
		return nil, ring, nil, err
	}
	yflt, err := o.Read.CompileFilter()
	if err != nil {
		return nil, ring, nil, err
	}
	tf, err := o.Read.TimeFormat()
	if err != nil {
		return nil, ring, nil, err
	}
	base := pcapfilter.UDPPort(uint16(o.Port))
	if o.Filter != "" {
		if base, err = pcapfilter.Parse(o.Filter); err != nil {
			return nil, ring, nil, exit.Usage("-f: %v", err)
		}
	}
	if o.Write != "" {
		// With -b the files get new names (counter and time): FILE itself
		// is never written.
		if err := (output.Target{Flag: "-w", Path: o.Write, NoClobber: !ring.rotating(), Force: o.Force}).Check(); err != nil {
			return nil, ring, nil, err
		}
	}
	l := &liveRun{o: o, base: base, learned: map[uint16]bool{uint16(o.Port): true},
		display: yflt, displayCtx: &filter.Context{File: o.Iface}, timeFormat: tf}
	return l, ring, servers, nil
}

// startWriter starts -w: one capture file, a ring of them (-b), or the
// capture on standard output.
func (l *liveRun) startWriter(ring ringOptions) error {
	o := l.o
	create := o.create
	if create == nil {
		create = createAtomic
	}
	if o.Write == "-" { // tshark's habit: the capture on standard output
		if ring.rotating() {
			return exit.Usage("-w - writes one stream to standard output; -b switches files, give -w FILE")
		}
		create = func(string) (captureFile, error) { return stdoutCapture{o.IO.Out}, nil }
		o.StatsOnly = true // standard output carries the capture; no lines in it
	}
	rw := &ringWriter{path: o.Write, ring: ring, link: l.h.LinkType(), iface: o.Iface, create: create}
	if ring.rotating() && !o.Quiet {
		rw.onSwitch = func(name string, frames int) {
			fmt.Fprintf(l.err, "bcwire live: %s complete, %d packets\n", name, frames)
		}
	}
	if err := rw.Start(time.Now()); err != nil {
		return exit.IOError(o.Write, explainWriteError(err))
	}
	l.rw = rw
	return nil
}

// serveMetrics starts --metrics' endpoint.
func (l *liveRun) serveMetrics() (*metrics.Endpoint, error) {
	o := l.o
	l.m = metrics.NewDissector()
	ep, err := metrics.Listen(o.Metrics, l.m)
	if err != nil {
		return nil, exit.Usage("--metrics %s: %v", o.Metrics, err)
	}
	if w := ep.Warning(); w != "" {
		// Straight to stderr: l.err, the buffered writer of run's lines,
		// does not exist yet.
		fmt.Fprintf(o.IO.Err, "bcwire live: warning: %s\n", w)
	}
	if o.MetricsReady != nil {
		o.MetricsReady(ep.Addr())
	}
	return ep, nil
}

// maxSummaries caps the session lines kept for the final summary, so a
// capture running for weeks does not grow without bound.
const maxSummaries = 500

// liveRun is the state of one capture.
type liveRun struct {
	o       *Options
	h       *live.Handle
	base    *pcapfilter.Expr
	learned map[uint16]bool // server ports the --auto filter passes
	rw      *ringWriter     // -w
	werr    error
	src     *live.Source
	m       *metrics.Dissector // --metrics
	err     *bufio.Writer

	keep func(*flow.Record) bool // --server
	// display (-Y) chooses the records printed; displayCtx counts its
	// times from the first record.
	display    *filter.Filter
	displayCtx *filter.Context
	timeFormat report.TimeFormat // -t
	p          *report.DecodePrinter
	b          *session.Builder
	tr         *flow.Tracker
	sessions   int      // ended
	summaries  []string // of the first maxSummaries sessions
	sp         *report.StatsPrinter

	start, lastTick, lastFlush time.Time
	lastMetrics                time.Time
	datagrams, bytes           int // since start
	tickDatagrams, tickBytes   int // at the last stats line
	damaged                    int
	printErr                   error
}

// filter is the kernel filter: the base filter, and with --auto the probe
// for server-looking datagrams and every port learned so far.
func (l *liveRun) filter() *pcapfilter.Expr {
	if !l.o.Auto {
		return l.base
	}
	parts := []*pcapfilter.Expr{l.base, pcapfilter.UDPFirstByte(0x01, '\\')}
	ports := make([]int, 0, len(l.learned))
	for p := range l.learned {
		ports = append(ports, int(p))
	}
	slices.Sort(ports)
	for _, p := range ports {
		if p != l.o.Port || l.o.Filter != "" {
			parts = append(parts, pcapfilter.UDPPort(uint16(p)))
		}
	}
	return pcapfilter.Or(parts...)
}

func (l *liveRun) run(ctx context.Context, servers []netip.AddrPort) error {
	o := l.o
	l.err = bufio.NewWriter(o.IO.Err)
	defer l.err.Flush()
	format := report.DecodeText
	switch {
	case o.JSON:
		format = report.DecodeJSON
	case o.Verbose:
		format = report.DecodeVerbose
	}
	l.p = report.NewDecodePrinter(o.IO.Out, format, o.IO.Color && !o.JSON)
	l.p.SetTimeFormat(l.timeFormat)
	l.p.SetHexDump(o.Hex)
	l.sp = report.NewStatsPrinter(o.IO.Err, false, false, false)
	l.b = session.NewBuilder(session.Options{}, func(s *session.Session) {
		l.sessions++
		if len(l.summaries) < maxSummaries {
			l.summaries = append(l.summaries, sessionLine(s))
		}
		_ = l.sp.Session(o.Iface, s)
	})
	l.tr = flow.New(flow.Options{Servers: servers})
	if len(servers) > 0 {
		l.keep = scan.KeepServers(servers)
	}
	l.start = time.Now()
	l.lastTick, l.lastFlush = l.start, l.start

	src := &live.Source{H: l.h, Ctx: ctx, MaxFrames: o.Count, OnFrame: l.frame, Tick: l.tick,
		Capture: o.Checksums.Options()}
	l.src = src
	if !o.Quiet {
		fmt.Fprintf(l.err, "bcwire live: capturing on %s, filter %q", o.Iface, filterText(l.filter()))
		if o.Write != "" {
			fmt.Fprintf(l.err, ", writing %s (as %s until complete)", o.Write, l.rw.Current())
		}
		fmt.Fprintln(l.err, " (Ctrl-C stops)")
		l.err.Flush()
	}
	if o.Ready != nil {
		o.Ready()
	}
	sum, runErr := flow.Run(src, l.tr, l.record)
	// Stopped early (output failed): the frames the kernel passed are
	// still written to -w. After a normal end this does nothing.
	src.Finish()
	l.b.Finish()
	if l.m != nil {
		l.m.Update(l.b, l.tr.Stats(), src.Stats())
	}
	l.p.Flush()
	if l.rw != nil {
		if err := l.rw.Close(); err != nil && l.werr == nil {
			l.werr = err
		}
	}
	l.final(sum, src.Frames())
	if o.Stopped != nil {
		o.Stopped()
	}
	switch {
	case l.werr != nil:
		kept := ""
		if p := l.rw.Partial(); p != "" {
			kept = fmt.Sprintf(" (the packets written until then are in %s)", p)
		}
		return &exit.Error{Code: exit.CodeUsage, Err: fmt.Errorf("-w %s: %w%s", o.Write, explainWriteError(l.werr), kept)}
	case runErr != nil && !errors.Is(runErr, l.werr):
		return &exit.Error{Code: exit.CodeUsage, Err: runErr}
	case l.printErr != nil:
		return &exit.Error{Code: exit.CodeUsage, Err: l.printErr}
	case sum.Damage > 0:
		return &exit.Error{Code: exit.CodeDamaged, Err: fmt.Errorf("%d damaged packets or messages (see the output)%s", sum.Damage, input.ChecksumHint(sum.Capture.BadChecksums))}
	}
	return nil
}

func filterText(e *pcapfilter.Expr) string {
	s := e.String()
	if s == "" {
		return "(all packets)"
	}
	return s
}

// frame writes a captured frame to the -w file.
func (l *liveRun) frame(b []byte, ci gopacket.CaptureInfo) error {
	l.datagrams++
	l.bytes += ci.Length
	if l.rw == nil {
		return nil
	}
	// The kernel's receive time is the clock for -b duration: no extra
	// clock read per packet.
	if err := l.rw.WriteFrame(ci.Timestamp, ci.Timestamp, b); err != nil {
		l.werr = err
		return err
	}
	return nil
}

// record prints one decoded record and feeds the session builder.
func (l *liveRun) record(r *flow.Record) bool {
	if r.Err != nil {
		l.damaged++
	}
	if l.keep != nil && !l.keep(r) {
		if l.o.Auto {
			l.learn(r)
		}
		return true
	}
	l.b.Add(r)
	if l.m != nil {
		l.m.Observe(r)
	}
	if l.o.Auto {
		l.learn(r)
	}
	l.p.Observe(r)
	if l.displayCtx.Start.IsZero() && !r.Time.IsZero() {
		l.displayCtx.Start = r.Time
	}
	if !l.o.StatsOnly && (l.keep == nil || l.keep(r)) && (l.display == nil || l.display.Match(r, l.displayCtx)) {
		if err := l.p.Print(r); err != nil {
			l.printErr = err
			return false
		}
	}
	if l.display != nil && l.display.Err() != nil {
		l.printErr = l.display.Err() // a -Y budget ran out, or a comparison that cannot be made: stop, and say so
		return false
	}
	return true
}

// learn adds the port of a newly confirmed server to the kernel filter.
func (l *liveRun) learn(r *flow.Record) {
	if r.Err != nil || !r.Server.IsValid() || l.learned[r.Server.Port()] {
		return
	}
	ok := r.Kind == flow.KindMessage || (r.Kind == flow.KindGameSpy && r.GameSpy != nil && !r.GameSpy.Query && r.Src == r.Server)
	if !ok || !l.tr.IsServer(r.Server) {
		return
	}
	l.learned[r.Server.Port()] = true
	f := l.filter()
	if err := l.h.SetFilter(f); err != nil {
		fmt.Fprintf(l.err, "bcwire live: found a server at %s but could not widen the kernel filter: %v\n", r.Server, err)
		return
	}
	fmt.Fprintf(l.err, "bcwire live: found a server at %s; kernel filter now %q\n", r.Server, filterText(f))
}

// tick flushes output and prints the periodic line when due.
func (l *liveRun) tick(now time.Time) {
	if l.printErr == nil {
		if err := l.p.Flush(); err != nil {
			l.printErr = err
		}
	}
	if l.rw != nil && now.Sub(l.lastFlush) >= time.Second {
		l.lastFlush = now
		if err := l.rw.Tick(now); err != nil && l.werr == nil {
			l.werr = err
		}
	}
	if l.m != nil && now.Sub(l.lastMetrics) >= metrics.Interval {
		l.lastMetrics = now
		l.m.Update(l.b, l.tr.Stats(), l.src.Stats())
	}
	if l.o.StatsEvery > 0 && now.Sub(l.lastTick) >= l.o.StatsEvery {
		secs := now.Sub(l.lastTick).Seconds()
		l.lastTick = now
		drops := "kernel drops unknown"
		if st, err := l.h.Stats(); err == nil {
			drops = fmt.Sprintf("%d kernel drops", st.Drops)
		}
		fmt.Fprintf(l.err, "bcwire live: %s  %d sessions open (%d ended), %.1f datagrams/s, %s/s, %d retransmissions, %d errors, %s\n",
			now.Sub(l.start).Round(time.Second), l.b.Live(), l.b.Emitted(),
			float64(l.datagrams-l.tickDatagrams)/secs, byteRate(float64(l.bytes-l.tickBytes)/secs),
			l.b.Retransmissions(), l.damaged, drops)
		l.tickDatagrams, l.tickBytes = l.datagrams, l.bytes
	}
	l.err.Flush()
}

func byteRate(b float64) string {
	switch {
	case b >= 1<<20:
		return fmt.Sprintf("%.1f MiB", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", b/(1<<10))
	}
	return fmt.Sprintf("%.0f B", b)
}
