package livecmd

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
)

// scrape fetches url and returns each sample's value by its name and labels
// as the text format writes them (e.g. `bcwire_datagrams_total{dir="c2s"}`).
func scrape(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") {
		t.Errorf("Content-Type %q, want the text format", ct)
	}
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
	if err := sc.Err(); err != nil && err != io.EOF {
		t.Fatal(err)
	}
	return out
}

// TestMetricsMatchFile captures on lo while the battle is replayed against
// `serve --replay`, scrapes --metrics over HTTP once the capture ended, and
// checks the figures against decoding the capture file: datagrams by
// direction, game messages by direction and opcode, GameSpy by kind, the
// sessions the final summary lists.
func TestMetricsMatchFile(t *testing.T) {
	needRoot(t)
	path := filepath.Join("..", "..", "..", "..", "testdata", "pcaps", "battle.pcap")
	rp := startServeVerify(t, path)
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), replayGuard)
	defer cancel()
	ready := make(chan struct{})
	var url string
	var final map[string]float64
	var during map[string]float64
	o := &Options{IO: &iostreams.IOStreams{Out: &stdout, Err: &stderr}, Iface: "lo", Port: int(rp.Server.Port()),
		Servers: []string{rp.Server.String()}, StatsOnly: true, Count: rp.Datagrams, Snaplen: 262144,
		Metrics: "127.0.0.1:0", Ctx: ctx, Ready: func() { close(ready) },
		MetricsReady: func(a net.Addr) { url = "http://" + a.String() + "/metrics" },
		Stopped:      func() { final = scrape(t, url) }}
	done := make(chan error, 1)
	go func() { done <- Run(o) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("live ended before capturing: %v\n%s", err, stderr.String())
	}
	during = scrape(t, url) // served while capturing
	if err := rp.Send(ctx); err != nil {
		cancel()
		<-done
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("live: %v\n%s", err, stderr.String())
	}
	if ctx.Err() != nil {
		t.Fatalf("stopped by the timeout, not by -c (datagrams lost?)\n%s", stderr.String())
	}
	if _, ok := during["process_cpu_seconds_total"]; !ok {
		t.Error("no process metrics while capturing")
	}

	// What decoding the file gives.
	want := map[string]float64{}
	dirLabel := map[string]string{"C->S": "c2s", "S->C": "s2c"}
	for _, l := range decodeLines(t, path, nil) {
		var r struct {
			Dir     string `json:"dir"`
			Msg     *int   `json:"msg"`
			Opcode  *int   `json:"opcode"`
			Name    string `json:"name"`
			GameSpy *struct {
				Kind  string `json:"kind"`
				Query bool   `json:"query"`
			} `json:"gamespy"`
		}
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		d := dirLabel[r.Dir]
		switch {
		case r.GameSpy != nil:
			kind := "reply"
			if r.GameSpy.Query {
				kind = r.GameSpy.Kind
			}
			want[`bcwire_gamespy_datagrams_total{kind="`+kind+`"}`]++
		case r.Msg != nil && *r.Msg == 0:
			want[`bcwire_datagrams_total{dir="`+d+`"}`]++
		}
		if r.Opcode != nil && r.Name != "" {
			// (The text format sorts the labels by name.)
			want[`bcwire_messages_total{dir="`+d+`",name="`+r.Name+`",opcode="0x`+strconv.FormatUint(uint64(*r.Opcode)|0x100, 16)[1:]+`"}`]++
		}
	}
	want[`bcwire_sessions_ended_total`] = float64(strings.Count(stderr.String(), "\n  session "))
	if len(want) < 10 {
		t.Fatalf("the file decoded to too little: %v", want)
	}
	for k, v := range want {
		if final[k] != v {
			t.Errorf("%s = %v, want %v (file)", k, final[k], v)
		}
	}
	var msgs, wantMsgs float64
	for k, v := range final {
		if strings.HasPrefix(k, "bcwire_messages_total{") {
			msgs += v
		}
	}
	for k, v := range want {
		if strings.HasPrefix(k, "bcwire_messages_total{") {
			wantMsgs += v
		}
	}
	if msgs != wantMsgs {
		t.Errorf("bcwire_messages_total adds up to %v, the file has %v game messages", msgs, wantMsgs)
	}
	// The datagram bytes are the UDP payloads: at least one byte each.
	for _, d := range []string{"c2s", "s2c"} {
		b, n := final[`bcwire_datagram_bytes_total{dir="`+d+`"}`], final[`bcwire_datagrams_total{dir="`+d+`"}`]
		if n == 0 || b < n {
			t.Errorf("%s: %v bytes in %v datagrams", d, b, n)
		}
	}
	// ACKs were timed, and the histogram is consistent.
	if c := final["bcwire_ack_rtt_seconds_count"]; c == 0 || final[`bcwire_ack_rtt_seconds_bucket{le="+Inf"}`] != c {
		t.Errorf("ack_rtt_seconds: count %v, +Inf bucket %v", c, final[`bcwire_ack_rtt_seconds_bucket{le="+Inf"}`])
	}
	if final[`bcwire_damage_total{kind="framing"}`] != 0 || final[`bcwire_damage_total{kind="game_decode"}`] != 0 {
		t.Errorf("damage in a clean replay: %v", final)
	}
	t.Logf("%d samples; %v datagrams C->S, %v S->C; %v sessions; %v ACKs timed",
		len(final), final[`bcwire_datagrams_total{dir="c2s"}`], final[`bcwire_datagrams_total{dir="s2c"}`],
		final[`bcwire_sessions_ended_total`], final["bcwire_ack_rtt_seconds_count"])
}

// TestMetricsBeyondLoopbackWarns: --metrics on every interface is warned
// about on stderr before the capture starts (it used to panic: the warning
// went to a writer made only later).
func TestMetricsBeyondLoopbackWarns(t *testing.T) {
	needRoot(t)
	var stderr bytes.Buffer
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // the capture ends as soon as it starts
	err := Run(&Options{IO: &iostreams.IOStreams{Out: io.Discard, Err: &stderr}, Iface: "lo", Port: 9, Snaplen: 262144,
		StatsOnly: true, Metrics: "0.0.0.0:0", Ctx: ctx})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stderr.String(), "listens on every interface") {
		t.Errorf("no warning about the endpoint:\n%s", stderr.String())
	}
}
