package livecmd

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/input"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
)

// TestLiveDisplayFilter: live -Y prints only the messages the filter
// holds for, as many as decoding the replayed file finds, with -x's dump.
func TestLiveDisplayFilter(t *testing.T) {
	needRoot(t)
	path := filepath.Join("..", "..", "..", "..", "testdata", "pcaps", "join.pcap")
	rp := startServeVerify(t, path)
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), replayGuard)
	defer cancel()
	ready := make(chan struct{})
	o := &Options{IO: &iostreams.IOStreams{Out: &stdout, Err: &stderr}, Iface: "lo", Port: int(rp.Server.Port()),
		Servers: []string{rp.Server.String()}, JSON: true, Count: rp.Datagrams, Hex: true, Quiet: true,
		Read:    input.ReadFlags{Filter: `name == "ChecksumRequest" or name == "ChecksumResponse"`, Time: "r"},
		Snaplen: 262144, Ctx: ctx, Ready: func() { close(ready) }}
	done := make(chan error, 1)
	go func() { done <- Run(o) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("live ended before capturing: %v\n%s", err, stderr.String())
	}
	if err := rp.Send(ctx); err != nil {
		cancel()
		<-done
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("live: %v\n%s", err, stderr.String())
	}
	want := 0
	for _, l := range decodeLines(t, path, nil) {
		if strings.Contains(l, `"name":"ChecksumRequest"`) || strings.Contains(l, `"name":"ChecksumResponse"`) {
			want++
		}
	}
	lines := splitLines(stdout.String())
	if want == 0 || len(lines) != want {
		t.Fatalf("live -Y printed %d lines, the file has %d such messages", len(lines), want)
	}
	for _, l := range lines {
		var r struct{ Name, Datagram string }
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(r.Name, "Checksum") || r.Datagram == "" {
			t.Errorf("line %s", l)
		}
	}
}

func TestLiveDisplayFilterUsage(t *testing.T) {
	err := Run(&Options{IO: &iostreams.IOStreams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}, Iface: "lo", Port: 22101, Snaplen: 262144,
		Read: input.ReadFlags{Filter: `name ==`, Time: "r"}})
	if err == nil || !strings.Contains(err.Error(), "column 8") {
		t.Errorf("bad -Y: %v", err)
	}
	err = Run(&Options{IO: &iostreams.IOStreams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}, Iface: "lo", Port: 22101, Snaplen: 262144,
		Read: input.ReadFlags{Time: "q"}})
	if err == nil || !strings.Contains(err.Error(), "-t") {
		t.Errorf("bad -t: %v", err)
	}
}
