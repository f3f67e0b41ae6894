package servecmd

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/server/stock"
)

// TestServeMetrics runs serve --metrics on loopback, plays a GameSpy query,
// a connect and a console boot against it, and checks the scraped figures:
// the server's counters, and the dissector's view of the same datagrams.
func TestServeMetrics(t *testing.T) {
	o := parse(t, "--metrics", "127.0.0.1:0", "--stop-after", "20s")
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	o.Conn = pc
	stdinR, stdinW := io.Pipe()
	defer stdinW.Close()
	o.Stdin = stdinR
	addr := make(chan string, 1)
	var flush func()
	o.MetricsReady = func(a net.Addr, f func()) { flush = f; addr <- "http://" + a.String() + "/metrics" }
	done := make(chan error, 1)
	go func() {
		done <- RunNative(context.Background(), &iostreams.IOStreams{Out: &syncBuffer{}, Err: &syncBuffer{}}, o)
	}()
	var url string
	select {
	case url = <-addr:
	case err := <-done:
		t.Fatalf("serve ended: %v", err)
	}

	cl, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ask := func(b []byte) []byte {
		t.Helper()
		if _, err := cl.WriteTo(b, pc.LocalAddr()); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 2048)
		_ = cl.SetReadDeadline(time.Now().Add(hangGuard))
		n, _, err := cl.ReadFrom(buf)
		if err != nil {
			t.Fatalf("no reply: %v", err)
		}
		return buf[:n]
	}
	ask([]byte(`\status\`))
	req := stock.ConnectRequest(cl.LocalAddr().(*net.UDPAddr).AddrPort())
	d := dissect.Datagram{Peer: stock.ConnectingPeer, Messages: []dissect.Message{{Type: dissect.TypeConnectAck,
		Reliable: true, Ordered: true, Payload: dissect.AppendControl(nil, &req)}}}
	plain := d.Append(nil)
	wire := make([]byte, len(plain))
	dissect.Encrypt(wire, plain)
	ask(wire)

	flush()
	m := scrapeText(t, url)
	for k, want := range map[string]float64{
		`bcwire_server_gamespy_queries_total`:                            1,
		`bcwire_server_boots_total`:                                      0,
		`bcwire_gamespy_datagrams_total{kind="status"}`:                  1,
		`bcwire_gamespy_datagrams_total{kind="reply"}`:                   1,
		`bcwire_datagrams_total{dir="c2s"}`:                              1,
		`bcwire_server_dropped_datagrams_total{reason="not-connect"}`:    0,
		`bcwire_sessions_open{server="` + pc.LocalAddr().String() + `"}`: 1,
	} {
		if m[k] != want {
			t.Errorf("%s = %v, want %v", k, m[k], want)
		}
	}
	if in := m[`bcwire_server_datagrams_total{dir="in"}`]; in != 2 {
		t.Errorf("server_datagrams_total in = %v, want 2 (query, connect)", in)
	}
	if m[`bcwire_datagrams_total{dir="s2c"}`] < 1 {
		t.Errorf("the dissector saw no server datagram: %v", m)
	}

	if _, ok := m[`bcwire_server_dropped_datagrams_total{reason="bad-peer-id"}`]; !ok {
		t.Error("no dropped-datagram series for reason bad-peer-id")
	}
	// A datagram from nowhere is dropped, and counted by its reason.
	stray, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer stray.Close()
	stray.WriteTo([]byte{0x07, 0x01, 0x02}, pc.LocalAddr())
	deadline := time.Now().Add(hangGuard)
	for m[`bcwire_server_dropped_datagrams_total{reason="not-connect"}`] == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		m = scrapeText(t, url)
	}
	if n := m[`bcwire_server_dropped_datagrams_total{reason="not-connect"}`]; n != 1 {
		t.Errorf("a stray datagram: dropped_datagrams_total{reason=\"not-connect\"} = %v, want 1", n)
	}

	io.WriteString(stdinW, "boot 2\n")
	deadline = time.Now().Add(hangGuard)
	for m[`bcwire_server_boots_total`] == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		m = scrapeText(t, url)
	}
	if m[`bcwire_server_boots_total`] != 1 {
		t.Errorf("after a console boot: server_boots_total = %v", m[`bcwire_server_boots_total`])
	}
	io.WriteString(stdinW, "quit\n")
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(hangGuard):
		t.Fatal("quit did not stop the server")
	}
	if _, err := http.Get(url); err == nil {
		t.Error("the metrics endpoint still answers after the server stopped")
	}
}

// scrapeText fetches url and returns each sample's value by its name and
// labels as the text format writes them.
func scrapeText(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			t.Fatalf("bad sample line %q", line)
		}
		out[line[:i]] = v
	}
	return out
}

// Issue 34.6: --metrics :PORT listens on every interface; serve says so.
func TestServeMetricsWarnsBeyondLoopback(t *testing.T) {
	for _, tc := range []struct {
		addr string
		warn bool
	}{{":0", true}, {"127.0.0.1:0", false}} {
		o := parse(t, "--metrics", tc.addr, "--stop-after", "100ms")
		pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		o.Conn = pc
		var errOut syncBuffer
		err = RunNative(context.Background(), &iostreams.IOStreams{Out: io.Discard, Err: &errOut}, o)
		pc.Close()
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(errOut.String(), "listens on every interface"); got != tc.warn {
			t.Errorf("--metrics %s: warning %v, want %v; log:\n%s", tc.addr, got, tc.warn, errOut.String())
		}
	}
}
