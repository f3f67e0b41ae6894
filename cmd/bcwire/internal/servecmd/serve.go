// Package servecmd implements `bcwire serve`. Without --replay it runs the
// native server (native.go, server/native); with --replay CAPTURE
// it stands in for the captured server and answers live clients byte for
// byte from the capture (package server/replay). console.go reads the
// native server's console from stdin; metrics.go dissects the server's own
// traffic for --metrics.
package servecmd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	stdio "io"
	"net"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/input"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/output"
	"github.com/bcwire/bcwire/server/replay"
	"github.com/spf13/cobra"
)

// Options of `bcwire serve`.
type Options struct {
	IO         *iostreams.IOStreams
	Replay     string // capture file to replay
	Listen     string
	Timing     string
	Strict     bool
	JSON       bool   // the report as JSON on stdout instead of the table
	Output     string // also write the JSON report to this file ("-" for stdout)
	Force      bool
	Server     string // the captured server to replay, when there are several
	Quiet      bool
	ExitOnDone bool
	WaitLimit  time.Duration // with ExitOnDone: give up after this long without a datagram
	// Native holds the native server's flags (and --listen, --port).
	Native *NativeOptions

	// Ready, when set, is called with the bound address once the server
	// listens (tests use it with --listen 127.0.0.1:0).
	Ready func(addr net.Addr)
}

// NewCmdServe builds the cobra command: the native server, or with
// --replay the stand-in for a captured server. Both share --listen. runF,
// when set, is called with the parsed options instead of running.
func NewCmdServe(io *iostreams.IOStreams, runF func(*Options) error) *cobra.Command {
	o := &Options{IO: io}
	var no *NativeOptions
	cmd := &cobra.Command{
		Use:   "serve [--replay CAPTURE] [flags]",
		Short: "Run a dedicated server: the native one, or a stand-in that answers from a capture",
		Long: `Serve Bridge Commander clients on one UDP port (22101 unless --port or
--listen say otherwise).

NATIVE SERVER (without --replay)

A Bridge Commander 1.1 dedicated server that speaks the stock protocol. It
answers GameSpy queries (\basic\, \status\, \info\, \rules\, \players\,
\echo\, \secure\; the query's \queryid\ echoed) and game traffic on one
port, registers with GameSpy masters given with --master (heartbeats at
start, every 60 s, on a state change and on shutdown), and takes stock clients through the join exactly
as the stock server does: connect reply with checksum round 0, the five
checksum rounds one at a time, 0x28 + Settings + GameInit in one datagram,
then MISSION_INIT, DeletePlayerUI and the scores on NewPlayerInGame, and
every live ship for late joiners. In the game it relays each client's game
messages unchanged to the others (team chat to the team only), except, as
the stock host, StateUpdates, CollisionEffects, 0x0D and 0x13, and object
requests (0x1D, 0x1E), which it answers itself: it keeps those and sends
its own StateUpdates, ten a second per ship, with the subsystems at full
health (it simulates no damage) and the motion each owner reported. Reliable delivery, ACKs, fragmentation, bundling,
keepalives (one a second), the 45 s silence timeout and graceful
disconnects follow the stock transport. Unknown sources get at most one
small reply a second. --log-level debug logs every dropped datagram with its
reason (at most ten lines a second); the stop line counts them by reason.

Console (on a terminal, or with --console): players, say TEXT, boot SLOT,
endgame, restart, help, quit. Ctrl-C stops the server after telling every
client it is going. Settings come from flags, or from a TOML or YAML file
(--config) with the keys name, port, map, max_players, collision_damage,
friendly_fire, time_limit, frag_limit, password, checksum_manifest; flags
given override the file.

REPLAY (--replay CAPTURE)

bcwire stands in for the server recorded in the capture. Each captured
session becomes a script: the client's datagrams, the server datagrams that
answered each of them, and the server datagrams sent on their own
(keepalives, relayed traffic, StateUpdates) with their offsets from the
session's first datagram. Each new client address that sends a datagram is
given the next captured session, in join order.

Every datagram received is decrypted and compared with the next datagram
the captured client sent (fields carrying the client's own address are
ignored). On a match the captured answers go back byte for byte - except
the fields that must differ on a live run: the client's IPv4 address and
port in connect requests, peer-info keepalives (0x00) and disconnects
(0x05) are rewritten to the live client's address and the datagram is
re-encrypted. Each field rewritten is logged once per session.

A datagram that matches nothing is logged with both decodings side by side
and left unanswered; the server re-synchronises on the next datagram that
matches one of the following 16 captured ones (--strict ends the session
instead). A repeat of a datagram already matched (the client retransmitting)
is answered again with the captured answers.

--timing capture (the default) sends the datagrams that answer nothing no
earlier than their captured offset; --timing asap sends them as soon as the
script reaches them. Use the same timing for 'bcwire verify' against it.

On exit (Ctrl-C, or --exit-when-done) it prints per session the client
datagrams matched, mismatched, skipped and repeated, the server datagrams
sent and the fields rewritten; --json prints it as JSON instead, and
-o FILE also writes the JSON to FILE.
--exit-when-done gives up after --wait-limit (1m) without a client datagram.
A damaged capture (unreadable records, datagrams that do not parse) is
named at the start, with counts and the first frames, and in the JSON
("capture_damage").

Exit status: 0 (replay: every datagram matched), 1 (replay: some did not,
the replayed sessions' captured traffic was damaged, or --wait-limit ran
out), 2 for usage or I/O errors.`,
		Example: `  # the native server
  bcwire serve --name "Friday night" --max-players 4 --time-limit 20
  bcwire serve --config server.toml --log-json 2>server.log
  bcwire serve -w native.pcap --stop-after 5m   # capture for bcwire decode / diff
  bcwire serve --print-manifest > manifest.toml      # then edit, and:
  bcwire serve --checksum-manifest manifest.toml

  # stand in for the server of battle.pcap on the stock port
  bcwire serve --replay testdata/pcaps/battle.pcap
  # as fast as the client allows, and check it with verify from another shell
  bcwire serve --replay testdata/pcaps/lossy.pcap --listen 127.0.0.1:22101 --timing asap
  bcwire verify --target 127.0.0.1:22101 --timing asap testdata/pcaps/lossy.pcap
  # stop after every captured session has been played; keep a JSON report
  bcwire serve --replay join.pcap --exit-when-done -o serve.json`,
		Args: func(c *cobra.Command, args []string) error {
			if len(args) > 0 {
				return exit.Usage("serve takes no arguments, got %q (--json is a switch; write the report with -o FILE)", args[0])
			}
			return nil
		},
		RunE: func(c *cobra.Command, args []string) error {
			if o.Replay == "" {
				if name := firstChanged(c, replayOnly); name != "" {
					return exit.Usage("--%s needs --replay CAPTURE (it has no meaning for the native server)", name)
				}
			} else {
				if name := firstChanged(c, nativeOnly); name != "" {
					return exit.Usage("--%s is a setting of the native server; it has no meaning with --replay", name)
				}
				o.Listen = no.Listen
				if o.Listen == "" {
					o.Listen = ":" + strconv.Itoa(no.Port)
				} else if _, _, err := net.SplitHostPort(o.Listen); err != nil {
					o.Listen = net.JoinHostPort(o.Listen, strconv.Itoa(no.Port))
				}
			}
			o.Native = no
			if runF != nil {
				return runF(o)
			}
			ctx := c.Context()
			if ctx == nil {
				ctx = context.Background()
			}
			ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
			defer stop()
			if o.Replay == "" {
				no.Force = o.Force
				return RunNative(ctx, io, no)
			}
			return RunReplay(ctx, o)
		},
	}
	f := cmd.Flags()
	no = AddNativeFlags(f) // --listen and --port are shared
	no.Flags = f
	f.StringVar(&o.Replay, "replay", "", "stand in for the server captured in `FILE` instead of running the native server")
	f.StringVar(&o.Timing, "timing", "capture", "replay: capture keeps the captured timing; asap goes as fast as the script allows")
	f.BoolVar(&o.Strict, "strict", false, "replay: end a session at its first client datagram that matches nothing")
	f.BoolVar(&o.JSON, "json", false, "replay: print the per-session report as JSON instead of a table")
	f.StringVarP(&o.Output, "output", "o", "", "replay: also write the per-session report as JSON to `FILE` (\"-\" for stdout)")
	f.BoolVar(&o.Force, "force", false, "let -w replace an existing file; replay: let -o replace a file that holds a capture")
	f.StringVar(&o.Server, "server", "", "replay: the captured server `HOST:PORT` to stand in for (needed when the capture has several)")
	f.BoolVarP(&o.Quiet, "quiet", "q", false, "replay: "+output.QuietUsage)
	f.BoolVar(&o.ExitOnDone, "exit-when-done", false, "replay: exit once every captured session has been played to its end")
	f.DurationVar(&o.WaitLimit, "wait-limit", time.Minute, "replay with --exit-when-done: give up (exit 1) after this long without a client datagram, before the first session or between sessions")
	return cmd
}

// replayOnly and nativeOnly are the flags that belong to one mode; giving
// one in the other mode is a usage error rather than silently ignored.
var (
	replayOnly = []string{"timing", "strict", "json", "output", "server", "quiet", "exit-when-done", "wait-limit"}
	nativeOnly = []string{"config", "name", "map", "max-players", "collision", "friendly-fire",
		"time-limit", "frag-limit", "password", "checksum-manifest", "print-manifest", "write",
		"log-json", "log-level", "console", "end-after", "restart-after", "stop-after"}
)

func firstChanged(c *cobra.Command, names []string) string {
	for _, n := range names {
		if c.Flags().Changed(n) {
			return n
		}
	}
	return ""
}

// Report is the JSON form of a replay run.
type Report struct {
	Capture  string                 `json:"capture"`
	Listen   string                 `json:"listen"`
	Timing   string                 `json:"timing"`
	Sessions []replay.ServerSession `json:"sessions"`
	// Captured is the number of sessions in the capture; Ignored counts
	// datagrams from clients that came after all of them were taken.
	Captured int `json:"captured"`
	Ignored  int `json:"ignored"`
	// Damage is the capture's damage (nil when clean); WaitedOut is set
	// when --wait-limit ended a run with sessions left to play.
	Damage *replay.DamageReport `json:"capture_damage,omitempty"`
	// NonStock is the capture's non-stock messages (nil when none): not damage.
	NonStock  *replay.NonStockReport `json:"capture_nonstock,omitempty"`
	WaitedOut bool                   `json:"waited_out,omitempty"`
}

// RunReplay serves o.Replay until ctx ends (or every session is done with
// --exit-when-done), then prints the report.
func RunReplay(ctx context.Context, o *Options) error {
	timing, c, err := loadReplay(ctx, o)
	if err != nil {
		return err
	}
	pc, err := net.ListenPacket("udp", o.Listen)
	if err != nil {
		return &exit.Error{Code: exit.CodeUsage, Err: fmt.Errorf("--listen %s: %w", o.Listen, err)}
	}
	defer pc.Close()

	srv := newReplayServer(o, c, timing, pc.LocalAddr())
	if o.Ready != nil {
		o.Ready(pc.LocalAddr())
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watched := make(chan struct{})
	waitedOut := false
	if !o.ExitOnDone {
		close(watched)
	} else {
		go func() {
			defer close(watched)
			waitedOut = watchDone(ctx, srv, o.WaitLimit)
			cancel()
		}()
	}
	serveErr := srv.Serve(ctx, pc)
	cancel()
	<-watched

	rep := Report{Capture: o.Replay, Listen: pc.LocalAddr().String(), Timing: timing.String(),
		Sessions: srv.Report(), Captured: len(c.Sessions), Ignored: srv.Ignored(),
		Damage: c.DamageReport(), NonStock: c.NonStockReport(), WaitedOut: waitedOut}
	if err := writeReport(o, &rep); err != nil {
		return err
	}
	if serveErr != nil {
		return &exit.Error{Code: exit.CodeUsage, Err: serveErr}
	}
	for _, s := range rep.Sessions {
		if s.Mismatched > 0 || s.Skipped > 0 {
			return &exit.Error{Code: exit.CodeDamaged,
				Err: errors.New("some client datagrams did not match the capture (see the report)")}
		}
	}
	return replayDamage(c, &rep, o.WaitLimit)
}

// loadReplay checks the replay's flags and loads its capture.
func loadReplay(ctx context.Context, o *Options) (replay.Timing, *replay.Capture, error) {
	timing, err := replay.ParseTiming(o.Timing)
	if err != nil {
		return timing, nil, exit.Usage("--timing: %v", err)
	}
	lo, err := input.ReplayServer(o.Server)
	if err != nil {
		return timing, nil, err
	}
	if o.Output != "" {
		out := output.Target{Flag: "-o", Path: o.Output, Document: true, Force: o.Force}
		if err := out.Check(o.Replay); err != nil {
			return timing, nil, err
		}
	}
	c, err := input.LoadReplay(ctx, o.IO.Err, o.Replay, lo)
	if err != nil {
		return timing, nil, err
	}
	if o.WaitLimit <= 0 {
		o.WaitLimit = time.Minute
	}
	return timing, c, nil
}

// newReplayServer makes the replay server of c, logging on stderr unless
// -q, and says what it replays.
func newReplayServer(o *Options, c *replay.Capture, timing replay.Timing, addr net.Addr) *replay.Server {
	var logMu sync.Mutex
	logf := func(format string, args ...any) {
		logMu.Lock()
		defer logMu.Unlock()
		fmt.Fprintf(o.IO.Err, format+"\n", args...)
	}
	opts := replay.ServerOptions{Timing: timing, Strict: o.Strict}
	if !o.Quiet {
		opts.Logf = logf
	}
	srv := replay.NewServer(c, opts)
	steps := 0
	for _, s := range c.Sessions {
		steps += len(s.Steps)
	}
	if !o.Quiet {
		logf("replaying %d sessions (%d datagrams) of %s, server %s, on %s (timing %s)",
			len(c.Sessions), steps, o.Replay, c.Server, addr, timing)
	}
	return srv
}

// watchDone waits, for --exit-when-done, until every captured session has
// been played (false) or --wait-limit passed without a client datagram
// (true), or ctx ends (false).
func watchDone(ctx context.Context, srv *replay.Server, wait time.Duration) (waitedOut bool) {
	t := time.NewTicker(50 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			if srv.AllDone() {
				return false
			}
			if srv.Idle(time.Now()) > wait {
				return true
			}
		}
	}
}

// writeReport prints the report (a table, or --json) and writes -o's JSON.
func writeReport(o *Options, rep *Report) error {
	switch {
	case o.Output == "-": // the JSON is stdout
	case o.JSON:
		if err := writeJSON(o.IO, "-", rep); err != nil {
			return err
		}
	default:
		printReport(o.IO, rep)
	}
	if o.Output != "" {
		if err := writeJSON(o.IO, o.Output, rep); err != nil {
			return err
		}
	}
	return nil
}

func printReport(io *iostreams.IOStreams, r *Report) {
	w := io.Out
	if len(r.Sessions) == 0 {
		fmt.Fprintf(w, "no client connected (%d sessions in %s)\n", r.Captured, r.Capture)
		return
	}
	fmt.Fprintf(w, "%-7s  %-21s  %-21s  %8s  %10s  %7s  %9s  %5s  %s\n",
		"session", "client", "captured as", "matched", "mismatched", "skipped", "repeated", "sent", "rewritten")
	for _, s := range r.Sessions {
		state := ""
		switch {
		case s.Ended != "":
			state = "  (" + s.Ended + ")"
		case !s.Done:
			state = "  (not finished)"
		}
		fmt.Fprintf(w, "%-7d  %-21s  %-21s  %4d/%-3d  %10d  %7d  %9d  %5d  %s%s\n",
			s.Session, s.Client, s.Captured, s.Matched, s.Expected, s.Mismatched, s.Skipped, s.Duplicates,
			s.Sent, strings.Join(replay.SortedFields(s.Rewritten), ", "), state)
	}
	if left := r.Captured - len(r.Sessions); left > 0 {
		fmt.Fprintf(w, "%d captured sessions were not played\n", left)
	}
	if r.Ignored > 0 {
		fmt.Fprintf(w, "%d datagrams ignored from clients beyond the captured sessions\n", r.Ignored)
	}
}

func writeJSON(io *iostreams.IOStreams, path string, v any) error {
	err := output.WriteFile(path, io.Out, func(w stdio.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	})
	if err != nil {
		return exit.IOError(path, err)
	}
	return nil
}

// replayDamage is the exit status of a replay that matched: 1 when the
// captured traffic of a played session was damaged, or the wait limit ended
// the run with sessions left.
func replayDamage(c *replay.Capture, rep *Report, wait time.Duration) error {
	if c.DamageAffects(len(rep.Sessions)) {
		return &exit.Error{Code: exit.CodeDamaged,
			Err: errors.New("the captured traffic of the replayed sessions is damaged (listed at the start)")}
	}
	if rep.WaitedOut {
		return &exit.Error{Code: exit.CodeDamaged,
			Err: fmt.Errorf("no client datagram for %s (--wait-limit) with %d of %d sessions played", wait, len(rep.Sessions), rep.Captured)}
	}
	return nil
}
