package servecmd

// The native mode of `bcwire serve`: a Bridge Commander dedicated server
// (server/native) that speaks the stock protocol on its own.

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/output"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/report/metrics"
	"github.com/bcwire/bcwire/server/native"
	"github.com/spf13/pflag"
)

// NativeOptions are the flags of the native server.
type NativeOptions struct {
	ConfigFile          string
	Listen              string
	Port                int
	Name                string
	Map                 string
	MaxPlayers          int
	Collision           bool
	FriendlyFire        bool
	TimeLimit           int
	FragLimit           int
	Password            string
	Manifest            string
	PrintManifest       bool
	Write               string
	Force               bool // -w may replace an existing file (serve's --force)
	LogJSON             bool
	LogLevel            string
	Console             bool
	EndAfter            time.Duration
	RestartAfter        time.Duration
	StopAfter           time.Duration
	Masters             []string
	AcceptLegacyFraming bool
	Metrics             string // serve Prometheus metrics at http://ADDR/metrics

	// For tests: the flag set (to tell set flags from defaults), a socket
	// to serve on instead of listening, and the console's input (default
	// the streams' In).
	Flags *pflag.FlagSet
	Conn  net.PacketConn
	Stdin io.Reader
	// MetricsReady, when set, is called with the metrics address once it
	// listens and a function that makes the next scrape current (tests).
	MetricsReady func(addr net.Addr, flush func())
}

// AddNativeFlags adds the native server's flags to fs.
func AddNativeFlags(fs *pflag.FlagSet) *NativeOptions {
	d := native.DefaultConfig()
	o := &NativeOptions{Flags: fs}
	fs.StringVar(&o.ConfigFile, "config", "", "read settings from a TOML (.toml) or YAML (.yaml) file; flags override it")
	fs.StringVar(&o.Listen, "listen", "", "address to listen on (default all interfaces, --port)")
	fs.IntVar(&o.Port, "port", d.Port, "UDP port for game traffic and GameSpy queries")
	fs.StringVar(&o.Name, "name", d.Name, "server name shown in GameSpy replies")
	fs.StringVar(&o.Map, "map", d.Map, "mission script")
	fs.IntVar(&o.MaxPlayers, "max-players", d.MaxPlayers, "player limit, 1-16")
	fs.BoolVar(&o.Collision, "collision", d.CollisionDamage, "collision damage (--collision=false to turn off)")
	fs.BoolVar(&o.FriendlyFire, "friendly-fire", d.FriendlyFire, "friendly fire")
	fs.IntVar(&o.TimeLimit, "time-limit", d.TimeLimit, "time limit in minutes, 0 for none; END_GAME is broadcast when it runs out")
	fs.IntVar(&o.FragLimit, "frag-limit", d.FragLimit, "frag limit, 0 for none")
	fs.StringVar(&o.Password, "password", "", "advertise the server as password-protected")
	fs.StringVar(&o.Manifest, "checksum-manifest", "", "check clients' checksum responses against this file (default: accept all)")
	fs.BoolVar(&o.PrintManifest, "print-manifest", false, "print the manifest of bcwire's model stock client, as an example of the format, and exit")
	fs.StringVarP(&o.Write, "write", "w", "", "write the server's traffic to a capture `FILE` (.pcap or .pcapng; written beside it as .FILE.*.partial and renamed when the server stops)")
	fs.BoolVar(&o.LogJSON, "log-json", false, "log as JSON lines instead of text")
	fs.StringVar(&o.LogLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.BoolVar(&o.Console, "console", false, "read console commands from stdin even when it is not a terminal")
	fs.DurationVar(&o.EndAfter, "end-after", 0, "broadcast END_GAME this long after the start")
	fs.DurationVar(&o.RestartAfter, "restart-after", 0, "broadcast RESTART_GAME this long after each END_GAME")
	fs.DurationVar(&o.StopAfter, "stop-after", 0, "stop the server after this long (default: run until interrupted)")
	fs.StringArrayVar(&o.Masters, "master", nil, "register with this GameSpy master server, HOST:PORT (repeatable; default none)")
	fs.BoolVar(&o.AcceptLegacyFraming, "accept-legacy-framing", false, "accept clients that connect with the legacy [type][len][flags] framing and leave with type 0x06 (OpenBC's test clients; stock clients never do)")
	fs.StringVar(&o.Metrics, "metrics", "", "serve Prometheus metrics at http://ADDR/metrics (e.g. 127.0.0.1:9121): the server's counters and the dissected traffic")
	return o
}

func (o *NativeOptions) changed(name string) bool { return o.Flags != nil && o.Flags.Changed(name) }

// config merges the defaults, the file and the flags given.
func (o *NativeOptions) config() (native.Config, error) {
	cfg := native.DefaultConfig()
	if o.ConfigFile != "" {
		c, err := native.LoadConfig(o.ConfigFile, cfg)
		if err != nil {
			return cfg, exit.Usage("--config: %v", err)
		}
		cfg = c
	}
	set := func(name string, apply func()) {
		if o.changed(name) || o.Flags == nil {
			apply()
		}
	}
	set("port", func() { cfg.Port = o.Port })
	set("name", func() { cfg.Name = o.Name })
	set("map", func() { cfg.Map = o.Map })
	set("max-players", func() { cfg.MaxPlayers = o.MaxPlayers })
	set("collision", func() { cfg.CollisionDamage = o.Collision })
	set("friendly-fire", func() { cfg.FriendlyFire = o.FriendlyFire })
	set("time-limit", func() { cfg.TimeLimit = o.TimeLimit })
	set("frag-limit", func() { cfg.FragLimit = o.FragLimit })
	set("password", func() { cfg.Password = o.Password })
	set("checksum-manifest", func() { cfg.ChecksumManifest = o.Manifest })
	set("master", func() { cfg.Masters = o.Masters })
	if err := cfg.Validate(); err != nil {
		return cfg, exit.Usage("%v", err)
	}
	for _, d := range []struct {
		flag string
		v    time.Duration
	}{{"--stop-after", o.StopAfter}, {"--end-after", o.EndAfter}, {"--restart-after", o.RestartAfter}} {
		if d.v < 0 {
			return cfg, exit.Usage("%s %s: give a positive duration (0, the default, for never)", d.flag, d.v)
		}
	}
	return cfg, nil
}

func ioErr(err error) error { return &exit.Error{Code: exit.CodeUsage, Err: err} }

// RunNative runs the server until ctx is done, "quit" on the console, or
// --stop-after.
func RunNative(ctx context.Context, io *iostreams.IOStreams, o *NativeOptions) error {
	if o.PrintManifest {
		if err := native.WriteManifest(io.Out, native.StockManifest()); err != nil {
			return ioErr(err)
		}
		return nil
	}
	opts, err := o.serverOptions(io.Err)
	if err != nil {
		return err
	}
	log := opts.Logger
	// The -w target is checked before the port is taken: a refusal
	// leaves nothing running.
	if o.Write != "" {
		if err := (output.Target{Flag: "-w", Path: o.Write, NoClobber: true, Force: o.Force}).Check(o.ConfigFile, opts.Config.ChecksumManifest); err != nil {
			return err
		}
	}
	pc := o.Conn
	if pc == nil {
		if pc, err = o.listen(opts.Config.Port); err != nil {
			return err
		}
		defer pc.Close()
	}
	capw, sm, err := o.taps(&opts)
	if err != nil {
		return err
	}
	srv, err := native.New(opts)
	if err != nil {
		return exit.Usage("%v", err)
	}
	if sm != nil {
		ep, err := o.metricsEndpoint(log, sm, srv)
		if err != nil {
			return err
		}
		defer ep.Close()
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	o.schedule(ctx, &wg, srv, cancel)
	in := o.Stdin
	if in == nil && (o.Console || io.InTTY) {
		in = io.In
	}
	if in != nil {
		// The reader is not waited for: a read from a terminal cannot be
		// interrupted, and the process ends right after Run.
		go console(ctx, io.Out, srv, in, cancel)
	}
	err = srv.Serve(ctx, pc)
	wg.Wait()
	if capw != nil {
		err = o.closeCapture(log, capw, err)
	}
	if err != nil {
		return ioErr(err)
	}
	return nil
}

// serverOptions are the native server's options from the flags and the
// config file, with its logger on errw (--log-level, --log-json).
func (o *NativeOptions) serverOptions(errw io.Writer) (native.Options, error) {
	cfg, err := o.config()
	if err != nil {
		return native.Options{}, err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(o.LogLevel)); err != nil {
		return native.Options{}, exit.Usage("--log-level %q: use debug, info, warn or error", o.LogLevel)
	}
	hopts := &slog.HandlerOptions{Level: level}
	var h slog.Handler = slog.NewTextHandler(errw, hopts)
	if o.LogJSON {
		h = slog.NewJSONHandler(errw, hopts)
	}
	log := slog.New(h)

	opts := native.Options{Config: cfg, Logger: log, AcceptLegacyFraming: o.AcceptLegacyFraming,
		Masters: resolveMasters(log, cfg.Masters)}
	if o.AcceptLegacyFraming {
		log.Warn("accepting the legacy [type][len][flags] framing and transport type 0x06: stock clients never send them")
	}
	if cfg.ChecksumManifest != "" {
		m, err := native.LoadManifest(cfg.ChecksumManifest)
		if err != nil {
			return opts, exit.Usage("checksum manifest: %v", err)
		}
		opts.Manifest = m
	}
	return opts, nil
}

// listen takes the UDP port: --listen's address (with port, when it has
// none), or every address on port.
func (o *NativeOptions) listen(port int) (net.PacketConn, error) {
	addr := o.Listen
	if addr == "" {
		addr = ":" + strconv.Itoa(port)
	} else if _, _, err := net.SplitHostPort(addr); err != nil {
		addr = net.JoinHostPort(addr, strconv.Itoa(port))
	}
	pc, err := net.ListenPacket("udp", addr)
	if err != nil {
		return nil, ioErr(fmt.Errorf("listen: %w", err))
	}
	return pc, nil
}

// taps sets opts.Tap for -w (the capture file) and --metrics (the
// dissector behind it), either or both.
func (o *NativeOptions) taps(opts *native.Options) (*captureFile, *serveMetrics, error) {
	var capw *captureFile
	if o.Write != "" {
		var err error
		if capw, err = createCapture(o.Write); err != nil {
			return nil, nil, ioErr(err)
		}
		opts.Tap = capw.tap
	}
	var sm *serveMetrics
	if o.Metrics != "" {
		sm = newServeMetrics()
		if capTap := opts.Tap; capTap != nil {
			opts.Tap = func(t time.Time, src, dst netip.AddrPort, wire []byte) {
				capTap(t, src, dst, wire)
				sm.tap(t, src, dst, wire)
			}
		} else {
			opts.Tap = sm.tap
		}
	}
	return capw, sm, nil
}

// metricsEndpoint starts --metrics' HTTP endpoint.
func (o *NativeOptions) metricsEndpoint(log *slog.Logger, sm *serveMetrics, srv *native.Server) (*metrics.Endpoint, error) {
	ep, err := metrics.Listen(o.Metrics, sm.d, serverCollector(srv))
	if err != nil {
		return nil, exit.Usage("--metrics %s: %v", o.Metrics, err)
	}
	if w := ep.Warning(); w != "" {
		log.Warn(w)
	}
	if o.MetricsReady != nil {
		o.MetricsReady(ep.Addr(), sm.flush)
	}
	return ep, nil
}

// schedule starts the timers of --stop-after, --end-after and
// --restart-after.
func (o *NativeOptions) schedule(ctx context.Context, wg *sync.WaitGroup, srv *native.Server, cancel func()) {
	if o.StopAfter > 0 {
		after(ctx, wg, o.StopAfter, cancel)
	}
	if o.EndAfter > 0 {
		after(ctx, wg, o.EndAfter, func() {
			srv.EndGame(time.Now(), game.EndOver)
			if o.RestartAfter > 0 {
				after(ctx, wg, o.RestartAfter, func() { srv.Restart(time.Now()) })
			}
		})
	}
}

// closeCapture completes -w's capture, logging the outcome; a failure is
// the run's error unless it has one already.
func (o *NativeOptions) closeCapture(log *slog.Logger, capw *captureFile, err error) error {
	if cerr := capw.close(); cerr != nil {
		log.Error("capture not written", "file", o.Write, "err", cerr)
		if err == nil {
			err = fmt.Errorf("-w %s: %w", o.Write, cerr)
		}
	} else {
		log.Info("capture written", "file", o.Write)
	}
	return err
}

// after runs fn once d has passed, unless ctx ends first.
func after(ctx context.Context, wg *sync.WaitGroup, d time.Duration, fn func()) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
		case <-t.C:
			fn()
		}
	}()
}

// captureFile is the -w capture. It grows under a temporary name
// beside its target and is renamed over it when the server stops cleanly;
// after a crash the traffic so far is in the .partial file.
type captureFile struct {
	mu  sync.Mutex
	f   *output.AtomicFile
	bw  *bufio.Writer
	w   *capture.Writer
	err error
}

func createCapture(path string) (*captureFile, error) {
	if path == "-" {
		return nil, exit.Usage("-w -: serve's standard output is its console; give the capture a file name (.pcap or .pcapng)")
	}
	format, ok := output.CaptureFormat(path)
	if !ok {
		return nil, exit.Usage("-w %s: name the capture .pcap or .pcapng", path)
	}
	f, err := output.CreateKept(path) // serve completes it when stopped
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	w, err := capture.NewWriter(bw, format, capture.Ethernet)
	if err != nil {
		f.Abort()
		return nil, err
	}
	return &captureFile{f: f, bw: bw, w: w}, nil
}

func (c *captureFile) tap(t time.Time, src, dst netip.AddrPort, wire []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return
	}
	src, dst = ipv4(src), ipv4(dst)
	if !src.Addr().Is4() || !dst.Addr().Is4() {
		return // the capture is IPv4
	}
	c.err = c.w.WriteUDP(t, src, dst, wire)
}

// ipv4 unmaps a; an unspecified address (a server listening on every
// interface) is written as 0.0.0.0.
func ipv4(a netip.AddrPort) netip.AddrPort {
	ip := a.Addr().Unmap()
	if ip.IsUnspecified() {
		ip = netip.IPv4Unspecified()
	}
	return netip.AddrPortFrom(ip, a.Port())
}

func (c *captureFile) close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	err := c.err
	if e := c.w.Flush(); err == nil {
		err = e
	}
	if e := c.bw.Flush(); err == nil {
		err = e
	}
	if err != nil {
		c.f.Abort()
		return err
	}
	return c.f.Commit()
}

// resolveMasters looks up the master servers; one that does not resolve is
// skipped with a warning rather than holding up the start (OpenBC
// docs/protocol/gamespy-protocol.md, "Implementation Notes").
func resolveMasters(log *slog.Logger, masters []string) []netip.AddrPort {
	var out []netip.AddrPort
	for _, m := range masters {
		a, err := net.ResolveUDPAddr("udp4", m)
		if err != nil {
			log.Warn("master server skipped", "master", m, "err", err)
			continue
		}
		ap := a.AddrPort()
		out = append(out, netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()))
	}
	return out
}
