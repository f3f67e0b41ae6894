package livecmd

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/report"
)

func needRoot(t *testing.T) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("live capture is Linux-only")
	}
	if os.Geteuid() != 0 {
		t.Skip("live capture needs root (CAP_NET_RAW); CI runs this test as root")
	}
}

// loopbackReplay plays a capture over 127.0.0.1 by sending each captured
// datagram from a socket standing for its sender to one standing for its
// receiver (TestAutoLearnsServerPort needs to pause after the GameSpy
// exchange, which serve and verify do not allow).
type loopbackReplay struct {
	Server    netip.AddrPort // the loopback address playing the capture's server
	Datagrams int            // datagrams Send sends, each one captured packet
	socks     map[netip.AddrPort]*net.UDPConn
	packets   []replayPacket
}

type replayPacket struct {
	src, dst netip.AddrPort // in the capture
	payload  []byte
}

// prepareReplay reads the capture at path and opens one loopback socket
// per endpoint in it (one for the server, one for each client).
func prepareReplay(t *testing.T, path string) *loopbackReplay {
	t.Helper()
	rd, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	rp := &loopbackReplay{socks: map[netip.AddrPort]*net.UDPConn{}}
	t.Cleanup(func() {
		for _, c := range rp.socks {
			c.Close()
		}
	})
	var server netip.AddrPort
	for {
		p, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		rp.packets = append(rp.packets, replayPacket{p.Src, p.Dst, bytes.Clone(p.Payload)})
		for _, ep := range []netip.AddrPort{p.Src, p.Dst} {
			if ep.Port() == flow.DefaultPort {
				server = ep
			}
			if rp.socks[ep] == nil {
				c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
				if err != nil {
					t.Fatal(err)
				}
				rp.socks[ep] = c
			}
		}
	}
	if !server.IsValid() {
		t.Fatalf("%s: no server on port %d", path, flow.DefaultPort)
	}
	rp.Server = rp.socks[server].LocalAddr().(*net.UDPAddr).AddrPort()
	rp.Datagrams = len(rp.packets)
	return rp
}

// Send sends every datagram, in capture order, from the socket playing its
// sender to the one playing its receiver, pausing briefly now and then so
// the capture socket keeps up.
func (rp *loopbackReplay) Send(ctx context.Context) error {
	return rp.sendRange(ctx, 0, len(rp.packets))
}

func (rp *loopbackReplay) sendRange(ctx context.Context, from, to int) error {
	for i := from; i < to; i++ {
		p := rp.packets[i]
		if err := ctx.Err(); err != nil {
			return err
		}
		to := rp.socks[p.dst].LocalAddr().(*net.UDPAddr)
		if _, err := rp.socks[p.src].WriteToUDP(p.payload, to); err != nil {
			return fmt.Errorf("datagram %d: %w", i+1, err)
		}
		if i%50 == 49 {
			time.Sleep(2 * time.Millisecond)
		}
	}
	return nil
}

// decodeLines decodes a capture file into the NDJSON lines `decode --json`
// prints.
func decodeLines(t *testing.T, path string, servers []netip.AddrPort) []string {
	t.Helper()
	rd, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var out []string
	if _, err := flow.Run(rd, flow.New(flow.Options{Servers: servers}), func(r *flow.Record) bool {
		out = append(out, string(report.AppendRecordJSON(nil, r)))
		return true
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

// opcodeCounts counts the lines by direction and what they carry: game
// opcode name, transport type, or GameSpy kind.
func opcodeCounts(t *testing.T, lines []string) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for _, l := range lines {
		var r struct {
			Dir      string `json:"dir"`
			Name     string `json:"name"`
			TypeName string `json:"type_name"`
			GameSpy  *struct {
				Kind string `json:"kind"`
			} `json:"gamespy"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("bad JSON line %q: %v", l, err)
		}
		switch {
		case r.Name != "":
			counts[r.Dir+" "+r.Name]++
		case r.GameSpy != nil:
			counts[r.Dir+" gamespy "+r.GameSpy.Kind]++
		default:
			counts[r.Dir+" "+r.TypeName]++
		}
	}
	return counts
}

func splitLines(s string) []string {
	s = strings.TrimSuffix(s, "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// TestLiveMatchesFile captures on lo while `verify --timing asap` replays
// a bundled capture against `serve --replay` on a loopback port, stops the
// capture the moment the replay ends (as Ctrl-C would: no -c), and checks
// that it holds every datagram of the replay, that the live decode saw the
// same messages as decoding the capture file, and that the -w file decodes
// to the very lines the live decode printed.
func TestLiveMatchesFile(t *testing.T) {
	needRoot(t)
	for _, name := range []string{"join.pcap", "duel.pcapng", "battle.pcap"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join("..", "..", "..", "..", "testdata", "pcaps", name)
			rp := startServeVerify(t, path)
			out := filepath.Join(t.TempDir(), "live.pcapng")
			var stdout, stderr bytes.Buffer
			ctx, cancel := context.WithTimeout(context.Background(), replayGuard)
			defer cancel()
			stopCtx, stop := context.WithCancel(ctx)
			defer stop()
			ready := make(chan struct{})
			o := &Options{IO: &iostreams.IOStreams{Out: &stdout, Err: &stderr}, Iface: "lo", Port: int(rp.Server.Port()),
				Servers: []string{rp.Server.String()}, JSON: true, Write: out,
				StatsEvery: 200 * time.Millisecond, Snaplen: 262144, Ctx: stopCtx, Ready: func() { close(ready) }}
			done := make(chan error, 1)
			go func() { done <- Run(o) }()
			select {
			case <-ready:
			case err := <-done:
				t.Fatalf("live ended before capturing: %v\n%s", err, stderr.String())
			case <-ctx.Done():
				t.Fatal("live never became ready")
			}
			if err := rp.Send(ctx); err != nil {
				cancel()
				<-done
				t.Fatal(err)
			}
			stop() // the moment the replay ended
			var runErr error
			select {
			case runErr = <-done:
			case <-time.After(replayGuard + 5*time.Second):
				t.Fatal("live did not stop") // cannot happen: ctx ends it at replayGuard
			}
			if runErr != nil {
				t.Fatalf("live: %v\n%s", runErr, stderr.String())
			}
			if ctx.Err() != nil {
				t.Fatalf("live stopped by the test's timeout, not when the replay ended\n%s", stderr.String())
			}
			// The -w file grew under a temporary name and was renamed at the end.
			if left, _ := filepath.Glob(filepath.Join(filepath.Dir(out), ".*.partial")); len(left) > 0 {
				t.Errorf("temporary files left: %v", left)
			}
			// ... and names the interface it was captured on.
			if rd, err := capture.Open(out); err != nil {
				t.Error(err)
			} else {
				rd.Next()
				if info, _ := rd.Interface(0); info.Name != "lo" {
					t.Errorf("-w file names interface %q, want lo", info.Name)
				}
				rd.Close()
			}

			liveLines := splitLines(stdout.String())
			want := opcodeCounts(t, decodeLines(t, path, nil))
			got := opcodeCounts(t, liveLines)
			if len(want) == 0 {
				t.Fatal("the capture decoded to nothing")
			}
			for k, n := range want {
				if got[k] != n {
					t.Errorf("%s: live %d, file %d", k, got[k], n)
				}
			}
			for k, n := range got {
				if _, ok := want[k]; !ok {
					t.Errorf("%s: live %d, not in the file", k, n)
				}
			}

			// The -w file decodes to exactly the lines printed live.
			again := decodeLines(t, out, []netip.AddrPort{rp.Server})
			if len(again) != len(liveLines) {
				t.Fatalf("-w file decodes to %d lines, live printed %d", len(again), len(liveLines))
			}
			for i := range again {
				if again[i] != liveLines[i] {
					t.Fatalf("line %d differs:\n -w:  %s\n live: %s", i+1, again[i], liveLines[i])
				}
			}

			errText := stderr.String()
			for _, w := range []string{"capturing on lo", fmt.Sprintf("%d packets captured", rp.Datagrams),
				fmt.Sprintf("kernel: %d packets passed the filter, 0 dropped; all %[1]d captured", rp.Datagrams), "session 127.0.0.1:"} {
				if !strings.Contains(errText, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errText)
				}
			}
			t.Logf("%s: %d datagrams replayed, %d lines, %d opcode/type kinds", name, rp.Datagrams, len(liveLines), len(want))
		})
	}
}

// TestDurationStopsIdleCapture checks --duration ends a capture that sees
// nothing, with the final summary and exit status 0.
func TestDurationStopsIdleCapture(t *testing.T) {
	needRoot(t)
	var stdout, stderr bytes.Buffer
	start := time.Now()
	err := Run(&Options{IO: &iostreams.IOStreams{Out: &stdout, Err: &stderr}, Iface: "lo", Port: 9, Snaplen: 262144,
		Duration: 300 * time.Millisecond, StatsEvery: 100 * time.Millisecond})
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if d := time.Since(start); d > 15*time.Second { // a hang, not a loaded machine
		t.Errorf("took %v", d)
	}
	for _, w := range []string{"0 packets captured", "datagrams/s", "kernel drops", "kernel: "} {
		if !strings.Contains(stderr.String(), w) {
			t.Errorf("stderr lacks %q:\n%s", w, stderr.String())
		}
	}
}

func TestUsageErrors(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{}, "-i IFACE"},
		{Options{Iface: "lo", Port: 0, Snaplen: 262144}, "--port 0"},
		{Options{Iface: "lo", Port: 22101, Snaplen: 262144, Count: -1}, "negative"},
		{Options{Iface: "lo", Port: 22101, Snaplen: 10}, "--snaplen"},
		{Options{Iface: "lo", Port: 22101, Snaplen: 262144, Filter: "udp port 1 or ip6"}, "column 15"},
		{Options{Iface: "lo", Port: 22101, Snaplen: 262144, Servers: []string{"x"}}, "--server"},
		{Options{Iface: "bcwire-nope0", Port: 22101, Snaplen: 262144}, "no such interface bcwire-nope0 (available:"},
		{Options{Iface: "lo", Port: 22101, Snaplen: 262144, Write: "x.pcapng", Ring: []string{"filesize:0"}}, "filesize:kB"},
		{Options{Iface: "lo", Port: 22101, Snaplen: 262144, Write: "x.pcapng", Ring: []string{"size:10"}}, "filesize:kB"},
		{Options{Iface: "lo", Port: 22101, Snaplen: 262144, Write: "x.pcapng", Ring: []string{"files:3"}}, "needs -b filesize"},
		{Options{Iface: "lo", Port: 22101, Snaplen: 262144, Ring: []string{"duration:60"}}, "-b needs -w"},
		{Options{Iface: "lo", Port: 22101, Snaplen: 262144, Metrics: "127.0.0.1:99999"}, "--metrics"},
	} {
		o := c.o
		o.IO = &iostreams.IOStreams{Out: io.Discard, Err: io.Discard}
		err := Run(&o)
		var ee *exit.Error
		if !errors.As(err, &ee) || ee.Code != exit.CodeUsage {
			t.Errorf("%+v: err %v, want exit status 2", c.o, err)
			continue
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %q does not say %q", c.o, err, c.want)
		}
	}
}

// syncBuffer is a bytes.Buffer safe to read while Run writes to it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestAutoLearnsServerPort runs --auto with the default port set to one the
// server does not use: the GameSpy query and reply that open join.pcap pass
// the probe part of the kernel filter, the reply makes the server known,
// the filter is widened to its port, and from then on every datagram is
// captured.
func TestAutoLearnsServerPort(t *testing.T) {
	needRoot(t)
	path := filepath.Join("..", "..", "..", "..", "testdata", "pcaps", "join.pcap")
	rp := prepareReplay(t, path)
	var stdout, stderr syncBuffer
	ctx, cancel := context.WithTimeout(context.Background(), replayGuard)
	defer cancel()
	ready := make(chan struct{})
	// No -c: --auto passes every server-looking datagram on lo, and other
	// tests running at the same time (go test runs packages in parallel)
	// have servers on lo too. The capture runs until this test's datagrams
	// are all in, and only lines of this test's server are compared.
	o := &Options{IO: &iostreams.IOStreams{Out: &stdout, Err: &stderr}, Iface: "lo", Port: 9, Auto: true, JSON: true,
		Snaplen: 262144, Ctx: ctx, Ready: func() { close(ready) }}
	done := make(chan error, 1)
	go func() { done <- Run(o) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("live ended before capturing: %v", err)
	}
	stop := func() error {
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(15 * time.Second): // the drain takes ~100 ms; more is a hang
			t.Fatal("live did not stop within 15s of its context ending")
			return nil
		}
	}
	// The first two datagrams are the GameSpy query and reply.
	if err := rp.sendRange(ctx, 0, 2); err != nil {
		stop()
		t.Fatal(err)
	}
	learned := "found a server at " + rp.Server.String()
	for !strings.Contains(stderr.String(), learned) {
		if ctx.Err() != nil {
			stop()
			t.Fatalf("the server port was never learned:\n%s", stderr.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := rp.sendRange(ctx, 2, rp.Datagrams); err != nil {
		stop()
		t.Fatal(err)
	}
	want := opcodeCounts(t, decodeLines(t, path, nil))
	ours := func() map[string]int {
		out := stdout.String()
		out = out[:strings.LastIndexByte(out, '\n')+1] // complete lines only: live may be mid-line
		return opcodeCounts(t, linesOf(t, splitLines(out), rp.Server))
	}
	for !maps.Equal(ours(), want) && ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
	}
	timedOut := ctx.Err() != nil
	// Exit status 1 (damage) may come from other tests' traffic, which
	// --auto also captures; this test's own lines must be clean.
	var ee *exit.Error
	if err := stop(); err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) &&
		!(errors.As(err, &ee) && ee.Code == exit.CodeDamaged) {
		t.Fatalf("live: %v\n%s", err, stderr.String())
	}
	for _, l := range linesOf(t, splitLines(stdout.String()), rp.Server) {
		if strings.Contains(l, `"error":`) {
			t.Errorf("damage reported on this test's own traffic: %s", l)
		}
	}
	got := ours()
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%s: live %d, file %d", k, got[k], n)
		}
	}
	if len(got) != len(want) {
		t.Errorf("live saw %d kinds, the file has %d", len(got), len(want))
	}
	if timedOut {
		t.Errorf("the capture never saw all of the replayed datagrams within 30s")
	}
	if !strings.Contains(stderr.String(), fmt.Sprintf("udp port %d", rp.Server.Port())) {
		t.Errorf("the widened filter is not shown:\n%s", stderr.String())
	}
}

// linesOf keeps the NDJSON lines of datagrams to or from server.
func linesOf(t *testing.T, lines []string, server netip.AddrPort) []string {
	t.Helper()
	var out []string
	for _, l := range lines {
		var r struct {
			Src string `json:"src"`
			Dst string `json:"dst"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("bad JSON line %q: %v", l, err)
		}
		if r.Src == server.String() || r.Dst == server.String() {
			out = append(out, l)
		}
	}
	return out
}
