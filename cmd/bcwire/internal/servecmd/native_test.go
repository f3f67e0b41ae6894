package servecmd

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/server/native"
	"github.com/bcwire/bcwire/server/stock"
	"github.com/spf13/pflag"
)

// hangGuard bounds the waits for a reply or a state on loopback. Only a
// hang reaches it: an answer ends the wait at once, and on a CI machine
// loaded by other test binaries one can take a second or more (2 s was the
// bound before, too close to that).
const hangGuard = 30 * time.Second

// syncBuffer is a bytes.Buffer safe for the server's and the test's
// goroutines.
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

func parse(t *testing.T, args ...string) *NativeOptions {
	t.Helper()
	fs := pflag.NewFlagSet("serve", pflag.ContinueOnError)
	o := AddNativeFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return o
}

func exitCode(err error) int {
	var ee *exit.Error
	if errors.As(err, &ee) {
		return ee.Code
	}
	if err != nil {
		return -1
	}
	return 0
}

func TestRunServesAndWritesCapture(t *testing.T) {
	dir := t.TempDir()
	pcapPath := filepath.Join(dir, "native.pcap")
	cfgPath := filepath.Join(dir, "server.toml")
	os.WriteFile(cfgPath, []byte("name = \"from file\"\nmax_players = 4\n"), 0o644)
	o := parse(t, "--config", cfgPath, "--name", "from flag", "--write", pcapPath, "--log-json", "--stop-after", "20s")
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	o.Conn = pc
	stdinR, stdinW := io.Pipe()
	o.Stdin = stdinR
	out, logs := &syncBuffer{}, &syncBuffer{}
	rio := &iostreams.IOStreams{Out: out, Err: logs}
	done := make(chan error, 1)
	go func() { done <- RunNative(context.Background(), rio, o) }()

	cl, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	srv := pc.LocalAddr()
	ask := func(b []byte) []byte {
		t.Helper()
		if _, err := cl.WriteTo(b, srv); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 2048)
		_ = cl.SetReadDeadline(time.Now().Add(hangGuard))
		n, _, err := cl.ReadFrom(buf)
		if err != nil {
			t.Fatalf("no reply to % X: %v", b[:min(len(b), 16)], err)
		}
		return buf[:n]
	}
	g, err := dissect.ParseGameSpy(ask([]byte(`\status\`)))
	if err != nil {
		t.Fatal(err)
	}
	fields := map[string]string{}
	for _, f := range g.Fields {
		fields[f.Key] = f.Value
	}
	if fields["hostname"] != "from flag" || fields["maxplayers"] != "4" {
		t.Errorf("status reply %v: the flag should override the file, the file the default", g.Fields)
	}
	req := stock.ConnectRequest(cl.LocalAddr().(*net.UDPAddr).AddrPort())
	d := dissect.Datagram{Peer: stock.ConnectingPeer, Messages: []dissect.Message{{Type: dissect.TypeConnectAck,
		Reliable: true, Ordered: true, Payload: dissect.AppendControl(nil, &req)}}}
	plain := d.Append(nil)
	wire := make([]byte, len(plain))
	dissect.Encrypt(wire, plain)
	reply := ask(wire)
	dissect.Decrypt(reply, reply)
	if err := d.Parse(reply); err != nil || len(d.Messages) != 2 || d.Messages[0].Type != dissect.TypeConnectAck || d.Messages[0].Payload[0] != 2 {
		t.Fatalf("connect reply % X (%v)", reply, err)
	}
	io.WriteString(stdinW, "players\n")
	deadline := time.Now().Add(hangGuard)
	for !strings.Contains(out.String(), "checksum") && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if !strings.Contains(out.String(), "checksum") {
		t.Errorf("players: %q", out.String())
	}
	io.WriteString(stdinW, "quit\n")
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(hangGuard):
		t.Fatal("quit did not stop the server")
	}
	stdinW.Close()
	if !strings.Contains(logs.String(), `"msg":"client connected"`) {
		t.Errorf("JSON logs: %s", logs.String())
	}
	rd, err := capture.Open(pcapPath)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	n := 0
	for {
		if _, err := rd.Next(); err != nil {
			break
		}
		n++
	}
	// query, reply, connect, connect reply, and the disconnect at shutdown
	if n < 5 {
		t.Errorf("capture holds %d datagrams", n)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.partial")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestRunStopsAfter(t *testing.T) {
	o := parse(t, "--stop-after", "150ms", "--end-after", "50ms", "--restart-after", "20ms")
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer pc.Close()
	o.Conn = pc
	start := time.Now()
	if err := RunNative(context.Background(), &iostreams.IOStreams{Out: io.Discard, Err: io.Discard}, o); err != nil {
		t.Fatal(err)
	}
	if el := time.Since(start); el > hangGuard {
		t.Errorf("stop-after 150ms took %v", el)
	}
}

func TestUsageErrors(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "server.toml")
	os.WriteFile(cfg, []byte("name = \"x\"\n"), 0o644)
	for _, args := range [][]string{
		{"--max-players", "17"},
		{"--time-limit", "-1"},
		{"--config", filepath.Join(dir, "missing.toml")},
		{"--config", filepath.Join(dir, "server.ini")},
		{"--write", filepath.Join(dir, "out.txt")},
		{"--log-level", "loud"},
		{"--checksum-manifest", filepath.Join(dir, "missing.toml")},
		{"--config", cfg, "-w", cfg}, // an input
	} {
		o := parse(t, args...)
		err := RunNative(context.Background(), &iostreams.IOStreams{Out: io.Discard, Err: io.Discard}, o)
		if exitCode(err) != exit.CodeUsage {
			t.Errorf("%v: %v (exit %d), want a usage error", args, err, exitCode(err))
		}
	}
}

func TestPrintManifest(t *testing.T) {
	var out bytes.Buffer
	if err := RunNative(context.Background(), &iostreams.IOStreams{Out: &out, Err: io.Discard}, parse(t, "--print-manifest")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "m.toml")
	os.WriteFile(path, out.Bytes(), 0o644)
	m, err := native.LoadManifest(path)
	if err != nil || len(m) != 5 {
		t.Fatalf("printed manifest does not load: %d rounds, %v\n%s", len(m), err, out.String())
	}
}
