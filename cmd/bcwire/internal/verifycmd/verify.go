// Package verifycmd implements `bcwire verify`: play the client side of a
// capture's sessions against a live server and report where its answers
// differ from the captured server's: step by step (--mode exact), or as
// diff's ranked verdict on the live exchange (--mode adaptive, verdict.go).
package verifycmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/input"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/output"
	"github.com/bcwire/bcwire/server/manifest"
	"github.com/bcwire/bcwire/server/replay"
	"github.com/bcwire/bcwire/session/diff"
	"github.com/spf13/cobra"
)

// Options of `bcwire verify`.
type Options struct {
	IO       *iostreams.IOStreams
	File     string
	Target   string
	Mode     string
	Timing   string
	JSON     bool   // the report as JSON on stdout instead of text
	Output   string // also write the JSON report to this file
	Force    bool
	Server   string
	Timeout  time.Duration
	GiveUp   int
	MaxShown int
	Verbose  bool
	Rules    string
	Manifest string
	Sources  []string
	FailOn   []string
	Write    string // -w: the live exchange as a capture
	// Quiet (-q) is accepted as in every command; verify writes no
	// summary, progress or log lines on stderr (only damage and errors).
	Quiet bool

	// Listen, when set, opens each session's socket (tests); the default
	// listens on the local address that routes to the target.
	Listen func() (net.PacketConn, error)
}

// NewCmdVerify builds the cobra command. runF, when set, is called with the
// parsed options instead of running the command (tests check flags with it).
func NewCmdVerify(io *iostreams.IOStreams, runF func(*Options) error) *cobra.Command {
	o := &Options{IO: io}
	cmd := &cobra.Command{
		Use:   "verify --target ADDR [flags] CAPTURE",
		Short: "Play a capture's clients against a server and report where its answers differ",
		Long: `Play the client side of every session in CAPTURE against the server at
--target, each session from its own UDP socket, starting them in the
captured join order, and compare what the server sends back with what the
captured server sent.

--mode exact (the default) sends the captured client datagrams unchanged,
except the client's own address and port in connect requests, keepalives and
disconnects (rewritten to the socket's address and re-encrypted), and
expects byte-identical answers.

--mode adaptive is a protocol-aware client: it ACKs what it actually
receives, numbers its reliable messages as captured, answers each checksum
request with the captured response for that round, and compares the
server's messages one by one after decoding - so a server that numbers,
bundles or times its datagrams differently is still compared message by
message instead of derailing the replay.

--manifest FILE answers each checksum request from a checksum manifest
instead of the capture, so that a server checking the answers against its
own manifest accepts them: bcwire's TOML (see 'bcwire serve
--print-manifest') or OpenBC's hash-manifest JSON.

Each session sends from its own socket. Against a loopback target each
session also has its own source address (127.0.0.2, 127.0.0.3, ...), so
that a server limiting reconnects per address sees one client per address,
as in the capture; --source chooses the addresses. Sessions that share an
address start no sooner after each other than in the capture.

--timing capture (the default) sends each client datagram at its captured
offset from the session's start; --timing asap sends it as soon as the
answers before it have arrived. A server replaying a capture with
'bcwire serve --replay' must use the same timing.

In adaptive mode the verdict is the one 'bcwire diff' gives: the live
exchange - every datagram the clients sent and received, as a capture
(-w FILE keeps it) - is compared with the replayed capture by the diff
engine, as 'bcwire diff LIVE CAPTURE' would, and the differences are
listed by phase, most severe first, with both sides' messages or figures.
Game state (positions, directions, speeds, damage amounts) is compared
only as shapes within the rules' tolerances; protocol facts (opcodes,
order, bundling, flags, lengths, reliability, relay targets) exactly.
Added to them is what only a live run shows: sessions the server refused
(refused) or stopped answering (no-answer), joins that never reached the
lobby (join-failed), and how long the join's answers took (answer-latency;
a round trip, as the client saw it). --all-steps lists the per-step
comparison as well.

In exact mode each server step is reported as identical (byte for byte), equivalent (same
decoded content; game time and addresses set aside), different (shown
decoded side by side), missing (nothing arrived within --answer-timeout) or
unexpected (arrived, but the capture has nothing like it). The first
divergence of each session is shown with its capture frame number. A session
that gets no answer at all to --give-up datagrams in a row is abandoned.

--json prints the report as JSON on stdout instead of text; -o FILE
writes the same JSON to FILE ("-" for stdout): {"target", "mode", "timing", "sessions": [{"session",
"client", "captured", "joined", "phases", "identical", "equivalent",
"different", "missing", "unexpected", "sent", "not_sent", "abandoned",
"first_divergence", "steps": [...]}], "summary": {...}}.
"joined" means the session reached the lobby: Settings and GameInit
arrived. "phases" are the join phases of the live exchange, as in
'bcwire timeline --json'.

A server replaying a capture taken at its own interface loses nothing on
loopback, so against 'serve --replay' of the same capture every captured
server datagram - retransmissions included - must arrive identical.

A difference only in how the server is set up - GameSpy name, mission,
map, limits, game mode and player list, Settings values, MISSION_INIT's
match settings - is "config": every such key is listed, and it is never
the first divergence nor counted in the exit status unless --fail-on
config. A session the server refuses (a boot, a checksum failure) opens
with that refusal and the client step it answered; one the server stops
answering opens with the client step after which nothing came ("no answer
after frame 5 (ChecksumResponse round 0)"); the rest of an abandoned
session is "not reached".

A damaged capture is named at the start (counts and the first frames) and
in the JSON ("capture_damage").

Exit status: in adaptive mode 0 when no difference reaches the --fail-on
severity (info, minor - the default -, major, critical; add ",config" to
count configuration differences too), in exact mode 0 when every step was
identical, equivalent or config; 1 when some differed or the replayed
sessions' captured traffic was damaged, 2 for usage or I/O errors and when
the target never answers.`,
		Example: `  # check a replay server (or any server) against the 4-player battle
  bcwire verify --target 127.0.0.1:22101 testdata/pcaps/battle.pcap
  # as fast as answers allow, against 'bcwire serve --replay lossy.pcap --timing asap'
  bcwire verify --target 127.0.0.1:22101 --timing asap testdata/pcaps/lossy.pcap
  # a server of your own: compare decoded messages, keep every step as JSON
  bcwire verify --target 192.168.1.20:22101 --mode adaptive -o steps.json capture.pcap
  # fail only on major differences, keep the live exchange for 'bcwire decode'
  bcwire verify --target 127.0.0.1:22101 --mode adaptive --fail-on major -w live.pcap battle.pcap`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) == 0 {
				return exit.Usage("give exactly one capture file (see --help)")
			}
			if len(args) > 1 {
				return exit.Usage("give exactly one capture file, not %q (--json is a switch; -o FILE writes the JSON report)", args)
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			o.File = args[0]
			if runF != nil {
				return runF(o)
			}
			ctx := c.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			return Run(ctx, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Target, "target", "", "the server under test, `HOST:PORT` (required)")
	f.StringVar(&o.Mode, "mode", "exact", "exact: datagrams byte for byte; adaptive: a protocol-aware client comparing decoded messages")
	f.StringVar(&o.Timing, "timing", "capture", "capture: captured offsets; asap: as soon as the answers allow")
	f.BoolVar(&o.JSON, "json", false, "print the report as JSON instead of text")
	f.StringVarP(&o.Output, "output", "o", "", "also write the report as JSON to `FILE` (\"-\" for stdout)")
	f.BoolVar(&o.Force, "force", false, "let -o replace a file that holds a capture")
	f.StringVar(&o.Server, "server", "", "the captured server `HOST:PORT` whose sessions to play (needed when the capture has several)")
	f.DurationVar(&o.Timeout, "answer-timeout", time.Second, "how long to wait for an expected answer")
	f.IntVar(&o.GiveUp, "give-up", 5, "abandon a session after this many client datagrams in a row get no answer")
	f.IntVar(&o.MaxShown, "max-divergences", 5, "divergences shown per session in the text report (0: only the first)")
	f.BoolVar(&o.Verbose, "all-steps", false, "list every step in the text report")
	f.StringVar(&o.Rules, "rules", "", "tolerances for --mode adaptive from a JSON rules `FILE`, as 'bcwire diff --rules' reads")
	f.StringVar(&o.Manifest, "manifest", "", "answer checksum requests from this checksum manifest `FILE` (bcwire's TOML or OpenBC's JSON; --mode adaptive)")
	f.StringSliceVar(&o.FailOn, "fail-on", nil, "exit 1 on differences of this `SEVERITY` or worse (adaptive: info, minor (default), major, critical); add config to count configuration differences too")
	f.StringVarP(&o.Write, "write", "w", "", "write the live exchange (every datagram the clients sent and received) as a pcap `FILE`")
	output.AddQuietFlag(f, &o.Quiet)
	f.StringSliceVar(&o.Sources, "source", nil, "local `ADDRS` the sessions send from, one per session in join order (default: 127.0.0.2, 127.0.0.3, ... against a loopback target)")
	return cmd
}

// Run verifies and prints.
func Run(ctx context.Context, o *Options) error {
	vo, lo, err := parseFlags(o)
	if err != nil {
		return err
	}
	c, err := input.LoadReplay(ctx, o.IO.Err, o.File, lo)
	if err != nil {
		return err
	}
	rules, failOn, err := parseAdaptiveFlags(o, &vo)
	if err != nil {
		return err
	}
	res, err := replay.Verify(ctx, c, vo)
	if err != nil {
		if errors.Is(err, replay.ErrUnreachable) {
			return &exit.Error{Code: exit.CodeUsage, Err: err}
		}
		if ctx.Err() != nil {
			return &exit.Error{Code: exit.CodeUsage, Err: fmt.Errorf("interrupted: %w", err)}
		}
		return &exit.Error{Code: exit.CodeUsage, Err: err}
	}
	res.Damage = c.DamageReport()
	res.NonStock = c.NonStockReport()
	failing := 0
	if vo.Mode == replay.ModeAdaptive {
		if failing, err = judge(o, c, res, vo.Target, &rules, failOn, vo.FailOnConfig); err != nil {
			return err
		}
	} else if o.Write != "" {
		if err := output.WriteFile(o.Write, nil, res.WriteLive); err != nil {
			return exit.IOError(o.Write, err)
		}
	}
	if err := printResult(o, res); err != nil {
		return err
	}
	if vo.Mode == replay.ModeAdaptive && failing > 0 {
		return &exit.Error{Code: exit.CodeDamaged, Err: fmt.Errorf("%s differs from %s: %d difference(s) of severity %s or worse", o.Target, o.File, failing, failOn)}
	}
	if vo.Mode != replay.ModeAdaptive && !res.Summary.OK {
		return &exit.Error{Code: exit.CodeDamaged, Err: fmt.Errorf("%s differs from %s (first divergences above)", o.Target, o.File)}
	}
	if c.DamageAffects(len(res.Sessions)) {
		return &exit.Error{Code: exit.CodeDamaged, Err: fmt.Errorf("%s is damaged (listed at the start): its sessions were replayed as far as they could be read", o.File)}
	}
	return nil
}

// parseFlags reads and checks the flags that come before the capture is
// loaded: the target, mode, timing and limits, --server, and -o and -w
// (which must not be inputs).
func parseFlags(o *Options) (replay.VerifyOptions, replay.LoadOptions, error) {
	var vo replay.VerifyOptions
	var lo replay.LoadOptions
	if o.Target == "" {
		return vo, lo, exit.Usage("--target HOST:PORT is required (the server to verify)")
	}
	var err error
	if vo.Target, err = resolve(o.Target); err != nil {
		return vo, lo, exit.Usage("--target %q: %v", o.Target, err)
	}
	if vo.Mode, err = replay.ParseMode(o.Mode); err != nil {
		return vo, lo, exit.Usage("--mode: %v", err)
	}
	if vo.Timing, err = replay.ParseTiming(o.Timing); err != nil {
		return vo, lo, exit.Usage("--timing: %v", err)
	}
	if o.Timeout <= 0 {
		return vo, lo, exit.Usage("--answer-timeout %s: must be positive", o.Timeout)
	}
	if o.MaxShown < 0 {
		return vo, lo, exit.Usage("--max-divergences %d: cannot be negative", o.MaxShown)
	}
	if o.GiveUp <= 0 {
		return vo, lo, exit.Usage("--give-up %d: must be at least 1", o.GiveUp)
	}
	vo.AnswerTimeout, vo.GiveUp, vo.Listen = o.Timeout, o.GiveUp, o.Listen
	if lo, err = input.ReplayServer(o.Server); err != nil {
		return vo, lo, err
	}
	if o.Output != "" {
		out := output.Target{Flag: "-o", Path: o.Output, Document: true, Force: o.Force}
		if err := out.Check(o.File, o.Rules, o.Manifest); err != nil {
			return vo, lo, err
		}
	}
	if o.Write != "" {
		out := output.Target{Flag: "-w", Path: o.Write}
		if err := out.Check(o.File, o.Rules, o.Manifest, o.Output); err != nil {
			return vo, lo, err
		}
	}
	return vo, lo, nil
}

// parseAdaptiveFlags reads, once the capture is loaded, the flags that
// shape the comparison: --rules, --manifest (adaptive mode only),
// --source and --fail-on. It returns the diff rules and the --fail-on
// severity.
func parseAdaptiveFlags(o *Options, vo *replay.VerifyOptions) (diff.Rules, diff.Severity, error) {
	rules := diff.DefaultRules()
	if o.Rules != "" {
		if vo.Mode != replay.ModeAdaptive {
			return rules, 0, exit.Usage("--rules applies to --mode adaptive")
		}
		r, err := diff.LoadRules(o.Rules)
		if err != nil {
			return rules, 0, exit.Usage("--rules: %v", err)
		}
		rules = r
		vo.Comparer = replay.NewRulesComparer(r)
	}
	if o.Manifest != "" {
		if vo.Mode != replay.ModeAdaptive {
			return rules, 0, exit.Usage("--manifest applies to --mode adaptive (exact mode sends the captured bytes)")
		}
		mf, err := manifest.Load(o.Manifest)
		if err != nil {
			return rules, 0, exit.Usage("--manifest: %v", err)
		}
		vo.Manifest = mf
	}
	for _, s := range o.Sources {
		a, err := netip.ParseAddr(strings.TrimSpace(s))
		if err != nil || !a.Is4() {
			return rules, 0, exit.Usage("--source %q: want IPv4 addresses, e.g. 127.0.0.2,127.0.0.3", s)
		}
		vo.Sources = append(vo.Sources, a)
	}
	failOn, failConfig, err := parseFailOn(o.FailOn, vo.Mode)
	vo.FailOnConfig = failConfig
	return rules, failOn, err
}

// printResult prints the report (text, or --json) and writes -o's JSON.
func printResult(o *Options, res *replay.Result) error {
	encode := func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		return enc.Encode(res)
	}
	switch {
	case o.Output == "-": // the JSON is stdout
	case o.JSON:
		if err := encode(o.IO.Out); err != nil {
			return &exit.Error{Code: exit.CodeUsage, Err: err}
		}
	default:
		Print(o.IO.Out, o.File, res, o.MaxShown, o.Verbose)
		printVerdict(o.IO.Out, res, o.IO.Color)
	}
	if o.Output != "" {
		if err := output.WriteFile(o.Output, o.IO.Out, encode); err != nil {
			return exit.IOError(o.Output, err)
		}
	}
	return nil
}

// resolve reads HOST:PORT, looking the host up when it is a name.
func resolve(s string) (netip.AddrPort, error) {
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
	}
	ua, err := net.ResolveUDPAddr("udp4", s)
	if err != nil {
		return netip.AddrPort{}, err
	}
	ap := ua.AddrPort()
	if ap.Port() == 0 {
		return netip.AddrPort{}, errors.New("no port given")
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
}

// Print writes the text report.
func Print(w io.Writer, file string, r *replay.Result, maxShown int, verbose bool) {
	fmt.Fprintf(w, "verify %s against %s (%s mode, %s timing)\n", file, r.Target, r.Mode, r.Timing)
	if r.Judged != nil && !verbose {
		printSessions(w, r)
		return
	}
	for _, s := range r.Sessions {
		if s == nil {
			continue
		}
		joined := "did not reach the lobby"
		if s.Joined {
			joined = "joined"
		}
		fmt.Fprintf(w, "session %d  %s as %s  %s  %d identical, %d equivalent, %d different, %d missing, %d unexpected%s%s  (%d client datagrams sent)\n",
			s.Session, s.Captured, s.Client, joined, s.Identical, s.Equivalent, s.Different, s.Missing, s.Unexpected, notDue(s.NotDue), extraCounts(s.Counts), s.Sent)
		if r.Mode == replay.ModeAdaptive.String() {
			fmt.Fprintf(w, "  join: %d checksum rounds, 0x28+Settings+GameInit in one datagram: %s, MISSION_INIT: %s; %d relayed game messages received\n",
				s.ChecksumRounds, yes(s.Bundle), yes(s.MissionInit), s.Relayed)
		}
		if s.Abandoned != "" {
			fmt.Fprintf(w, "  abandoned: %s; %d client datagrams not sent\n", s.Abandoned, s.NotSent)
		}
		if cfg := configLines(s); len(cfg) > 0 {
			fmt.Fprintf(w, "  configuration differs (not a protocol divergence; --fail-on config counts it):\n")
			for _, l := range cfg {
				fmt.Fprintf(w, "    %s\n", l)
			}
		}
		if verbose {
			for i := range s.Steps {
				fmt.Fprint(w, indent(s.Steps[i].Text()))
			}
			continue
		}
		if s.First == nil || r.Judged != nil { // the verdict below says what differs
			continue
		}
		fmt.Fprint(w, "  FIRST DIVERGENCE: "+indent(s.First.Text())[2:])
		shown := 0
		for i := range s.Steps {
			st := &s.Steps[i]
			if !st.IsDivergence() || (st.Step == s.First.Step && st.Status == s.First.Status && st.AtMS == s.First.AtMS) {
				continue
			}
			if shown == maxShown {
				fmt.Fprintf(w, "  ... and more (--max-divergences N, --all-steps, or -o FILE for every step)\n")
				break
			}
			shown++
			fmt.Fprint(w, indent(st.Text()))
		}
	}
	sm := r.Summary
	if r.Judged != nil {
		fmt.Fprintf(w, "steps: %d sessions (%d joined), %d identical, %d equivalent, %d different, %d missing, %d unexpected%s%s (live game state never repeats the captured; the verdict below compares it as the diff rules do, --all-steps lists each step)\n",
			sm.Sessions, sm.Joined, sm.Identical, sm.Equivalent, sm.Different, sm.Missing, sm.Unexpected, notDue(sm.NotDue), extraCounts(sm.Counts))
		return
	}
	verdict := "all identical"
	switch {
	case !sm.OK:
		verdict = "DIFFERENCES"
	case sm.Equivalent > 0:
		verdict = "all identical or equivalent"
	}
	fmt.Fprintf(w, "total: %d sessions (%d joined), %d identical, %d equivalent, %d different, %d missing, %d unexpected%s%s: %s\n",
		sm.Sessions, sm.Joined, sm.Identical, sm.Equivalent, sm.Different, sm.Missing, sm.Unexpected, notDue(sm.NotDue), extraCounts(sm.Counts), verdict)
}

// extraCounts shows configuration differences and steps never reached,
// when there are any.
func extraCounts(c replay.Counts) string {
	s := ""
	if c.Config > 0 {
		s += fmt.Sprintf(", %d config", c.Config)
	}
	if c.NotReached > 0 {
		s += fmt.Sprintf(", %d not reached", c.NotReached)
	}
	return s
}

// configLines lists a session's configuration differences, each once, in
// the order they first appear.
func configLines(s *replay.SessionResult) []string {
	var out []string
	seen := map[string]bool{}
	for i := range s.Steps {
		for _, c := range s.Steps[i].Config {
			if !seen[c] {
				seen[c] = true
				out = append(out, c)
			}
		}
	}
	return out
}

// notDue shows the messages an asap run ended before (adaptive mode).
func notDue(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf(", %d not due", n)
}

func yes(b bool) string {
	if b {
		return "yes"
	}
	return "NO"
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "\n", "\n  ") + "\n"
}
