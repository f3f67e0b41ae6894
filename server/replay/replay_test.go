package replay

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
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
		opts.AnswerTimeout = 300 * time.Millisecond
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
