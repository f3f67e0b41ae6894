package metrics

import (
	"bufio"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// scrape asks for /metrics on c, keeping the connection alive, and reports
// whether a 200 came back.
func scrape(t *testing.T, c net.Conn) bool {
	t.Helper()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return false
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// closedWithin reports whether the server closes c within d (a read ends
// with EOF or a reset rather than the deadline).
func closedWithin(c net.Conn, d time.Duration) bool {
	_ = c.SetReadDeadline(time.Now().Add(d))
	_, err := c.Read(make([]byte, 4096))
	var ne net.Error
	return err != nil && !(errors.As(err, &ne) && ne.Timeout())
}

func dialT(t *testing.T, e *Endpoint) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", e.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Issue 34.6: 19,980 idle keep-alive connections were never closed (687 MB,
// then "too many open files" and scrapes timing out). Now idle and slow
// connections are closed after their timeouts, and connections beyond the
// cap are closed at once while a scrape on a connection within it works.
func TestEndpointBounds(t *testing.T) {
	lim := Limits{ReadHeader: 300 * time.Millisecond, Read: time.Second, Write: time.Second, Idle: 300 * time.Millisecond, MaxConns: 8}
	e, err := ListenWith("127.0.0.1:0", lim, NewDissector())
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()

	t.Run("idle keep-alive closed", func(t *testing.T) {
		c := dialT(t, e)
		if !scrape(t, c) {
			t.Fatal("no scrape")
		}
		// The timeouts are short here; "within" leaves a busy machine 10 s.
		start := time.Now()
		if !closedWithin(c, 10*time.Second) {
			t.Fatal("an idle kept-alive connection is still open after 10 s (idle timeout 300 ms)")
		}
		if el := time.Since(start); el < lim.Idle/2 {
			t.Errorf("closed after %v, before the idle timeout %v", el, lim.Idle)
		}
	})
	t.Run("slow header closed", func(t *testing.T) {
		c := dialT(t, e)
		io.WriteString(c, "GET /metrics HTTP/1.1\r\nHost: x\r\n")
		if !closedWithin(c, 10*time.Second) {
			t.Fatal("a connection that never ends its header is still open after 10 s (header timeout 300 ms)")
		}
	})
	t.Run("connection cap", func(t *testing.T) {
		// Timeouts longer than the test, so that only the cap closes.
		lim := Limits{ReadHeader: time.Minute, Idle: time.Minute, MaxConns: 8}
		e, err := ListenWith("127.0.0.1:0", lim)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		// 8 kept-alive connections, idle after a scrape each: a ninth
		// takes the place of the one idle longest and is served.
		held := make([]net.Conn, lim.MaxConns)
		for i := range held {
			held[i] = dialT(t, e)
			if !scrape(t, held[i]) {
				t.Fatalf("connection %d within the cap not served", i)
			}
			// The server marks a connection idle after it has written the
			// reply, so the client can read it first; on a loaded machine
			// the next connection could then go idle before this one.
			// Wait for the mark, so that held[0] is the one idle longest.
			deadline := time.Now().Add(10 * time.Second)
			for idleCount(e) < i+1 && time.Now().Before(deadline) {
				time.Sleep(5 * time.Millisecond)
			}
			if n := idleCount(e); n != i+1 {
				t.Fatalf("%d connections idle after %d scrapes", n, i+1)
			}
		}
		ninth := dialT(t, e)
		if !scrape(t, ninth) {
			t.Fatal("a connection beyond the cap, with 8 idle ones, was not served")
		}
		if !closedWithin(held[0], 10*time.Second) {
			t.Error("the connection idle longest was not closed for the new one")
		}
		if e.Displaced() != 1 || e.Refused() != 0 {
			t.Errorf("displaced %d, refused %d; want 1, 0", e.Displaced(), e.Refused())
		}
		for _, c := range append(held[1:], ninth) {
			c.Close()
		}

		// 8 connections that have sent nothing yet (none idle): a ninth is
		// closed at once.
		deadline := time.Now().Add(10 * time.Second)
		for e.ln.open.Load() > 0 && time.Now().Before(deadline) { // the closes above, seen
			time.Sleep(10 * time.Millisecond)
		}
		if n := e.ln.open.Load(); n != 0 {
			t.Fatalf("%d connections still counted open after their clients closed them", n)
		}
		for i := range held {
			held[i] = dialT(t, e)
		}
		for e.ln.open.Load() < int64(lim.MaxConns) && time.Now().Before(deadline) { // accepted
			time.Sleep(10 * time.Millisecond)
		}
		if n := e.ln.open.Load(); n != int64(lim.MaxConns) {
			t.Fatalf("%d connections open, want %d", n, lim.MaxConns)
		}
		over := dialT(t, e)
		if !closedWithin(over, 10*time.Second) {
			t.Fatal("a connection beyond the cap, with none idle, was not closed")
		}
		if e.Refused() != 1 {
			t.Errorf("refused %d, want 1", e.Refused())
		}
	})
}

// ":PORT" listens on every interface: Warning says so; loopback is quiet.
func TestEndpointWarnsBeyondLoopback(t *testing.T) {
	for _, tc := range []struct {
		addr string
		warn string
	}{{"127.0.0.1:0", ""}, {"localhost:0", ""}, {":0", "every interface"}, {"0.0.0.0:0", "every interface"}} {
		e, err := Listen(tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		w := e.Warning()
		e.Close()
		if (tc.warn == "") != (w == "") || !strings.Contains(w, tc.warn) {
			t.Errorf("%s: warning %q, want one with %q", tc.addr, w, tc.warn)
		}
	}
}

// idleCount is how many connections the endpoint counts idle.
func idleCount(e *Endpoint) int {
	e.ln.mu.Lock()
	defer e.ln.mu.Unlock()
	return len(e.ln.idle)
}
