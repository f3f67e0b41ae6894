package replay

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
)

const corpus = "../../testdata/pcaps/"

var (
	loadMu sync.Mutex
	loaded = map[string]*Capture{}
)

// load reads a bundled capture once per test binary.
func load(t *testing.T, name string) *Capture {
	t.Helper()
	loadMu.Lock()
	defer loadMu.Unlock()
	if c := loaded[name]; c != nil {
		return c
	}
	c, err := Load(corpus+name, LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	loaded[name] = c
	return c
}

// listen opens a loopback UDP socket.
func listen(t *testing.T) net.PacketConn {
	t.Helper()
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return pc
}

func addrOf(pc net.PacketConn) netip.AddrPort {
	return pc.LocalAddr().(*net.UDPAddr).AddrPort()
}

// logSink collects log lines for assertions.
type logSink struct {
	mu    sync.Mutex
	lines []string
}

func (l *logSink) logf(format string, args ...any) {
	l.mu.Lock()
	l.lines = append(l.lines, fmt.Sprintf(format, args...))
	l.mu.Unlock()
}

func (l *logSink) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.lines, "\n")
}

// serving is a replay server running on a loopback socket.
type serving struct {
	srv  *Server
	pc   net.PacketConn
	stop func() error
	log  *logSink
}

// serve starts a replay server for c; stop cancels it and returns Serve's
// error once it has returned.
func serve(t *testing.T, c *Capture, opts ServerOptions, wrap func(net.PacketConn) net.PacketConn) *serving {
	t.Helper()
	pc := listen(t)
	log := &logSink{}
	if opts.Logf == nil {
		opts.Logf = log.logf
	}
	srv := NewServer(c, opts)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	conn := pc
	if wrap != nil {
		conn = wrap(pc)
	}
	go func() { done <- srv.Serve(ctx, conn) }()
	s := &serving{srv: srv, pc: pc, log: log}
	var once sync.Once
	var err error
	s.stop = func() error {
		once.Do(func() {
			cancel()
			select {
			case err = <-done:
			case <-time.After(5 * time.Second):
				err = fmt.Errorf("Serve did not return within 5s of cancellation")
			}
			pc.Close()
		})
		return err
	}
	t.Cleanup(func() { _ = s.stop() })
	return s
}

func verifyAgainst(t *testing.T, c *Capture, target netip.AddrPort, opts VerifyOptions) (*Result, error) {
	t.Helper()
	opts.Target = target
	if opts.AnswerTimeout == 0 {
		// Long: it only ends the wait for an answer that never comes, and
		// the tests that expect one missing set their own. A short one
		// turns an answer a loaded machine delivers late into "missing"
		// then "unexpected" (seen at 300 ms beside two busy loops).
		opts.AnswerTimeout = 5 * time.Second
	}
	opts.Listen = func() (net.PacketConn, error) { return net.ListenPacket("udp4", "127.0.0.1:0") }
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return Verify(ctx, c, opts)
}

// checkGoroutines fails when goroutines started by the test outlive it.
func checkGoroutines(t *testing.T) {
	t.Helper()
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(2 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<16)
			buf = buf[:runtime.Stack(buf, true)]
			t.Errorf("%d goroutines left running (was %d):\n%s", n, before, buf)
		}
	})
}

// waitFor polls cond until it holds or d has passed.
func waitFor(t *testing.T, d time.Duration, cond func() bool) bool {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

func describeFirst(r *Result) string {
	var sb strings.Builder
	for _, s := range r.Sessions {
		if s != nil && s.First != nil {
			fmt.Fprintf(&sb, "session %d: %s", s.Session, s.First.Text())
		}
	}
	return sb.String()
}

func TestExactAgainstReplayEveryCapture(t *testing.T) {
	checkGoroutines(t)
	for _, name := range []string{"join.pcap", "battle.pcap", "lossy.pcap", "duel.pcapng", "sll.pcap", "damaged.pcap"} {
		t.Run(name, func(t *testing.T) {
			c := load(t, name)
			s := serve(t, c, ServerOptions{Timing: TimingASAP}, nil)
			start := time.Now()
			res, err := verifyAgainst(t, c, addrOf(s.pc), VerifyOptions{Timing: TimingASAP})
			if err != nil {
				t.Fatal(err)
			}
			// The last client datagrams may answer nothing: give the server
			// a moment to take them in.
			waitFor(t, 2*time.Second, s.srv.AllDone)
			if err := s.stop(); err != nil {
				t.Fatal(err)
			}
			if len(res.Sessions) != len(c.Sessions) {
				t.Fatalf("%d sessions verified, want %d", len(res.Sessions), len(c.Sessions))
			}
			for i, sr := range res.Sessions {
				want := len(c.Sessions[i].Steps) - c.Sessions[i].Clients()
				if sr.Identical != want || !sr.OK() || sr.Equivalent != 0 || sr.Sent != c.Sessions[i].Clients() {
					t.Errorf("session %d: %d identical of %d server datagrams, %d equivalent, %d different, %d missing, %d unexpected, %d of %d sent\n%s",
						sr.Session, sr.Identical, want, sr.Equivalent, sr.Different, sr.Missing, sr.Unexpected, sr.Sent, c.Sessions[i].Clients(), describeFirst(res))
				}
			}
			if !res.Summary.OK || res.Summary.SessionsIdentical != len(c.Sessions) {
				t.Errorf("summary %+v", res.Summary)
			}
			for _, st := range s.srv.Report() {
				if st.Matched != st.Expected || st.Mismatched != 0 || st.Skipped != 0 || !st.Done {
					t.Errorf("server side %+v\n%s", st, s.log)
				}
			}
			t.Logf("%s: %d sessions, %d identical server datagrams in %v", name, len(res.Sessions), res.Summary.Identical, time.Since(start).Round(time.Millisecond))
		})
	}
}

func TestVerifyAgainstDifferentCaptureFails(t *testing.T) {
	checkGoroutines(t)
	c, other := load(t, "join.pcap"), load(t, "duel.pcapng")
	s := serve(t, other, ServerOptions{Timing: TimingASAP}, nil)
	res, err := verifyAgainst(t, c, addrOf(s.pc), VerifyOptions{Timing: TimingASAP, AnswerTimeout: 150 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if res.Summary.OK || res.Summary.SessionsOK != 0 {
		t.Fatalf("a replay of another capture passed: %+v", res.Summary)
	}
	sr := res.Sessions[0]
	if sr.First == nil {
		t.Fatal("no first divergence reported")
	}
	// Both captures open with the same GameSpy query and connect; the
	// duel's server then sends the keepalive where join's sent the
	// checksum request of round 1: capture frame 6 of join.pcap.
	f := sr.First
	if f.Frame != 6 || f.Status != StatusDifferent || f.Dir != "S->C" {
		t.Errorf("first divergence %+v, want frame 6 different", f)
	}
	text := f.Text()
	for _, want := range []string{"capture frame 6", "different", "2 transport messages, captured 3", "ChecksumRequest round=1", "peer-info"} {
		if !strings.Contains(text, want) {
			t.Errorf("first divergence text lacks %q:\n%s", want, text)
		}
	}
	// The steps before it were all answered as captured.
	for _, st := range sr.Steps {
		if st.Step >= 0 && st.Frame < 6 && st.Dir == "S->C" && st.Status != StatusIdentical {
			t.Errorf("step before the divergence: %+v", st)
		}
	}
	if s.srv.Report()[0].Mismatched == 0 {
		t.Error("the replay server saw no mismatching client datagram")
	}
	if !strings.Contains(s.log.String(), "does not match the expected one") {
		t.Errorf("server log shows no mismatch:\n%s", s.log)
	}
}

// dropWriter loses the datagrams that drop selects, on the server's way out.
type dropWriter struct {
	net.PacketConn
	mu      sync.Mutex
	drop    func(b []byte) bool
	dropped int
}

func (d *dropWriter) WriteTo(b []byte, addr net.Addr) (int, error) {
	d.mu.Lock()
	lose := d.drop(b)
	if lose {
		d.dropped++
	}
	d.mu.Unlock()
	if lose {
		return len(b), nil
	}
	return d.PacketConn.WriteTo(b, addr)
}

func TestVerifyNoticesDroppedServerDatagram(t *testing.T) {
	checkGoroutines(t)
	c := load(t, "join.pcap")
	// Lose the server datagram carrying checksum round 2's request (it has
	// no address field, so its wire bytes are as captured).
	var target *Datagram
	for i := range c.Sessions[0].Steps {
		d := &c.Sessions[0].Steps[i]
		if !d.IsClient() && !d.GameSpy && strings.Contains(strings.Join(Describe(d.Plain, game.ServerToClient), "\n"), "ChecksumRequest round=2") {
			target = d
			break
		}
	}
	if target == nil {
		t.Fatal("join.pcap has no checksum round 2 request")
	}
	var dw *dropWriter
	s := serve(t, c, ServerOptions{Timing: TimingASAP}, func(pc net.PacketConn) net.PacketConn {
		dw = &dropWriter{PacketConn: pc, drop: func(b []byte) bool { return string(b) == string(target.Wire) }}
		return dw
	})
	res, err := verifyAgainst(t, c, addrOf(s.pc), VerifyOptions{Timing: TimingASAP, AnswerTimeout: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if dw.dropped != 1 {
		t.Fatalf("dropped %d datagrams, want 1", dw.dropped)
	}
	sr := res.Sessions[0]
	want := len(c.Sessions[0].Steps) - c.Sessions[0].Clients()
	if sr.Missing != 1 || sr.Identical != want-1 || sr.Different != 0 || sr.Unexpected != 0 {
		t.Fatalf("counts %+v, want 1 missing and %d identical\n%s", sr.Counts, want-1, describeFirst(res))
	}
	if sr.First == nil || sr.First.Frame != target.Frame || sr.First.Status != StatusMissing {
		t.Fatalf("first divergence %+v, want frame %d missing", sr.First, target.Frame)
	}
	if !strings.Contains(sr.First.Text(), "ChecksumRequest round=2") {
		t.Errorf("the missing step does not show what was expected:\n%s", sr.First.Text())
	}
	if res.Summary.OK {
		t.Error("summary OK despite a missing datagram")
	}
}

// rawClient is a test client that sends script steps by hand.
type rawClient struct {
	t    *testing.T
	pc   net.PacketConn
	to   *net.UDPAddr
	self netip.AddrPort
}

func newRawClient(t *testing.T, server netip.AddrPort) *rawClient {
	pc := listen(t)
	t.Cleanup(func() { pc.Close() })
	return &rawClient{t: t, pc: pc, to: net.UDPAddrFromAddrPort(server), self: addrOf(pc)}
}

func (c *rawClient) send(d *Datagram) {
	c.t.Helper()
	wire, _, _ := Rewrite(d, c.self)
	if _, err := c.pc.WriteTo(wire, c.to); err != nil {
		c.t.Fatal(err)
	}
}

func (c *rawClient) sendRaw(b []byte) {
	c.t.Helper()
	if _, err := c.pc.WriteTo(b, c.to); err != nil {
		c.t.Fatal(err)
	}
}

// recv returns the datagrams that arrive within d.
func (c *rawClient) recv(d time.Duration) [][]byte {
	c.t.Helper()
	var out [][]byte
	buf := make([]byte, 65536)
	deadline := time.Now().Add(d)
	for {
		_ = c.pc.SetReadDeadline(deadline)
		n, _, err := c.pc.ReadFrom(buf)
		if err != nil {
			return out
		}
		out = append(out, append([]byte(nil), buf[:n]...))
	}
}

// answersOf is the rewritten wire form of the server steps after client
// step i, up to the next client step.
func answersOf(sc *Script, i int, live netip.AddrPort) [][]byte {
	var out [][]byte
	for j := i + 1; j < len(sc.Steps) && !sc.Steps[j].IsClient(); j++ {
		w, _, _ := Rewrite(&sc.Steps[j], live)
		out = append(out, w)
	}
	return out
}

func sameDatagrams(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if string(a[i]) != string(b[i]) {
			return false
		}
	}
	return true
}

func TestServerAnswersClientRetransmission(t *testing.T) {
	checkGoroutines(t)
	c := load(t, "join.pcap")
	sc := c.Sessions[0]
	s := serve(t, c, ServerOptions{Timing: TimingASAP}, nil)
	cl := newRawClient(t, addrOf(s.pc))
	// Steps 0 and 2 are the GameSpy query and the connect request; step 3
	// is the connect reply with checksum round 0.
	cl.send(&sc.Steps[0])
	if got := cl.recv(100 * time.Millisecond); !sameDatagrams(got, answersOf(sc, 0, cl.self)) {
		t.Fatalf("GameSpy answer: got %d datagrams", len(got))
	}
	cl.send(&sc.Steps[2])
	first := cl.recv(100 * time.Millisecond)
	if !sameDatagrams(first, answersOf(sc, 2, cl.self)) || len(first) != 1 {
		t.Fatalf("connect answer: got %d datagrams, want the captured one", len(first))
	}
	// The client did not hear the reply and sends its connect again.
	cl.send(&sc.Steps[2])
	again := cl.recv(100 * time.Millisecond)
	if !sameDatagrams(again, first) {
		t.Fatalf("retransmitted connect answered with %d datagrams, want the captured answer again", len(again))
	}
	// And goes on as captured.
	cl.send(&sc.Steps[4])
	if got := cl.recv(100 * time.Millisecond); !sameDatagrams(got, answersOf(sc, 4, cl.self)) {
		t.Fatalf("after the retransmission: got %d datagrams, want the answers of step 4", len(got))
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	st := s.srv.Report()[0]
	if st.Matched != 3 || st.Duplicates != 1 || st.Mismatched != 0 || st.Skipped != 0 || st.Client != cl.self.String() {
		t.Fatalf("server stats %+v", st)
	}
}

func TestServerResynchronisesAndStrictStops(t *testing.T) {
	checkGoroutines(t)
	c := load(t, "join.pcap")
	sc := c.Sessions[0]
	garbage := []byte{0x02, 0x01, 0x32, 0x06, 0x00, 0x1C, 0xDE, 0xAD}
	dissect.Encrypt(garbage, garbage)

	s := serve(t, c, ServerOptions{Timing: TimingASAP}, nil)
	cl := newRawClient(t, addrOf(s.pc))
	cl.send(&sc.Steps[0])
	cl.recv(50 * time.Millisecond)
	cl.sendRaw(garbage) // matches nothing: logged, not answered
	if got := cl.recv(50 * time.Millisecond); len(got) != 0 {
		t.Fatalf("a datagram that matches nothing got %d answers", len(got))
	}
	cl.send(&sc.Steps[2])
	cl.recv(50 * time.Millisecond)
	// Step 4 never comes: the client goes on with step 7, the server
	// re-synchronises on it.
	cl.send(&sc.Steps[7])
	if got := cl.recv(100 * time.Millisecond); !sameDatagrams(got, answersOf(sc, 7, cl.self)) {
		t.Fatalf("after re-synchronising: %d datagrams, want step 7's answers", len(got))
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	st := s.srv.Report()[0]
	if st.Matched != 3 || st.Mismatched != 1 || st.Skipped != 1 || st.Ended != "" {
		t.Fatalf("server stats %+v", st)
	}
	log := s.log.String()
	for _, want := range []string{"does not match the expected one (frame 3)", "received", "expected (frame 3)",
		"connect-request ip=10.0.1.10 port=50000", "re-synchronised on frame 8, skipping 1"} {
		if !strings.Contains(log, want) {
			t.Errorf("log lacks %q:\n%s", want, log)
		}
	}

	// --strict: the first mismatch ends the session.
	s2 := serve(t, c, ServerOptions{Timing: TimingASAP, Strict: true}, nil)
	cl2 := newRawClient(t, addrOf(s2.pc))
	cl2.send(&sc.Steps[0])
	cl2.recv(50 * time.Millisecond)
	cl2.sendRaw(garbage)
	cl2.send(&sc.Steps[2])
	if got := cl2.recv(100 * time.Millisecond); len(got) != 0 {
		t.Fatalf("strict server answered %d datagrams after the mismatch", len(got))
	}
	if err := s2.stop(); err != nil {
		t.Fatal(err)
	}
	if st := s2.srv.Report()[0]; st.Ended == "" || st.Mismatched != 1 || st.Matched != 1 {
		t.Fatalf("strict stats %+v", st)
	}
}

func TestVerifyUnreachableTarget(t *testing.T) {
	checkGoroutines(t)
	c := load(t, "battle.pcap")
	// A socket that never answers.
	silent := listen(t)
	defer silent.Close()
	start := time.Now()
	_, err := verifyAgainst(t, c, addrOf(silent), VerifyOptions{Timing: TimingASAP, AnswerTimeout: 200 * time.Millisecond})
	if !errors.Is(err, ErrUnreachable) {
		t.Fatalf("err %v, want ErrUnreachable", err)
	}
	if !strings.Contains(err.Error(), "no answer from "+addrOf(silent).String()) {
		t.Errorf("message %q does not name the target", err)
	}
	// Only a hang is a failure: a loaded machine (CI runs beside other
	// work) can delay every timer.
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v to give up", d)
	}
}

func TestShutdownMidSession(t *testing.T) {
	checkGoroutines(t)
	c := load(t, "battle.pcap")
	// Capture timing: both sides sit in timers when they are stopped.
	s := serve(t, c, ServerOptions{Timing: TimingCapture}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Verify(ctx, c, VerifyOptions{Target: addrOf(s.pc), Timing: TimingCapture,
			Listen: func() (net.PacketConn, error) { return net.ListenPacket("udp4", "127.0.0.1:0") }})
		done <- err
	}()
	waitFor(t, 3*time.Second, func() bool { return len(s.srv.Report()) > 0 && s.srv.Report()[0].Matched > 2 })
	cancel()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		t.Fatal("Verify did not return within 3s of cancellation")
	}
	start := time.Now()
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 5*time.Second { // a hang, not a slow machine
		t.Errorf("Serve took %v to return", d)
	}
	if st := s.srv.Report(); len(st) == 0 || st[0].Done {
		t.Fatalf("the session should have been cut short: %+v", st)
	}
}

// TestCaptureTiming replays the first second of join.pcap in real time.
func TestCaptureTiming(t *testing.T) {
	checkGoroutines(t)
	full := load(t, "join.pcap")
	sc := *full.Sessions[0]
	n := 0
	for n < len(sc.Steps) && sc.Steps[n].At < 800*time.Millisecond {
		n++
	}
	sc.Steps = sc.Steps[:n]
	c := &Capture{Server: full.Server, Sessions: []*Script{&sc}}
	s := serve(t, c, ServerOptions{Timing: TimingCapture}, nil)
	start := time.Now()
	res, err := verifyAgainst(t, c, addrOf(s.pc), VerifyOptions{Timing: TimingCapture})
	if err != nil {
		t.Fatal(err)
	}
	elapsed := time.Since(start)
	waitFor(t, time.Second, s.srv.AllDone)
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	sr := res.Sessions[0]
	if !sr.OK() || sr.Identical != n-sc.Clients() {
		t.Fatalf("%+v\n%s", sr.Counts, describeFirst(res))
	}
	last := sc.Steps[n-1].At
	// Never early; late only by what a loaded machine can add to the
	// timers (an asap replay would be early, which is what this checks).
	if elapsed < last || elapsed > last+5*time.Second {
		t.Errorf("took %v, the script spans %v", elapsed, last)
	}
	// Phases seen live: the session got through the checksums to the lobby.
	if !sr.Joined || sr.Phases.Connect == nil || sr.Phases.Lobby == nil {
		t.Errorf("joined=%v phases %+v", sr.Joined, sr.Phases)
	}
	// Every client datagram and every server datagram that answers nothing
	// went out no earlier than captured (answers go at once).
	for _, st := range sr.Steps {
		if st.Step > 0 && !sc.Steps[st.Step].Answer && time.Duration(st.AtMS*float64(time.Millisecond)) < sc.Steps[st.Step].At-5*time.Millisecond {
			t.Errorf("step %d at %.1fms, captured at %v", st.Step, st.AtMS, sc.Steps[st.Step].At)
		}
	}
}
