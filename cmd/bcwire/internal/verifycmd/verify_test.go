package verifycmd_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/root"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/servecmd"
	"github.com/spf13/cobra"
)

const corpus = "../../../../testdata/pcaps/"

// serve is linked in bcwire-full only: these tests run it in process.
func init() {
	root.Full = func(io *iostreams.IOStreams) []*cobra.Command { return []*cobra.Command{servecmd.NewCmdServe(io, nil)} }
}

func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	code = root.ExecuteIO(&iostreams.IOStreams{Out: &out, Err: &errb}, args)
	return out.String(), errb.String(), code
}

// replayServer runs `serve --replay` in-process on a loopback port; stop
// ends it and returns its exit error and output; exited waits up to d for
// it to end by itself.
func replayServer(t *testing.T, file string, extra func(o *servecmd.Options)) (addr string, stop func() (string, string, error), exited func(d time.Duration) bool) {
	t.Helper()
	var out, errb bytes.Buffer
	ready := make(chan net.Addr, 1)
	o := &servecmd.Options{IO: &iostreams.IOStreams{Out: &out, Err: &errb}, Replay: file, Listen: "127.0.0.1:0",
		Timing: "asap", Ready: func(a net.Addr) { ready <- a }}
	if extra != nil {
		extra(o)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- servecmd.RunReplay(ctx, o) }()
	select {
	case a := <-ready:
		addr = a.String()
	case err := <-done:
		cancel()
		t.Fatalf("serve ended at once: %v\n%s", err, errb.String())
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("serve did not start listening within 30s")
	}
	ended := false
	var res error
	exited = func(d time.Duration) bool {
		if !ended {
			select {
			case res = <-done:
				ended = true
			case <-time.After(d):
			}
		}
		return ended
	}
	stop = func() (string, string, error) {
		cancel()
		if !exited(30 * time.Second) {
			t.Fatal("serve did not return within 30s")
		}
		return out.String(), errb.String(), res
	}
	t.Cleanup(func() { stop() })
	return addr, stop, exited
}

// noLeaks fails the test when it leaves goroutines running. os/signal's
// watcher, started once per process by the commands' Ctrl-C handling and
// never stopped, is started first so that it is not counted.
func noLeaks(t *testing.T) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt)
	signal.Stop(c)
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(2 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<16)
			t.Errorf("%d goroutines left (was %d):\n%s", n, before, buf[:runtime.Stack(buf, true)])
		}
	})
}

func TestVerifyCommandAgainstServeReplay(t *testing.T) {
	noLeaks(t)
	serveJSON := filepath.Join(t.TempDir(), "serve.json")
	addr, stop, exited := replayServer(t, corpus+"lossy.pcap", func(o *servecmd.Options) {
		o.ExitOnDone = true
		o.Output = serveJSON
	})
	jsonPath := filepath.Join(t.TempDir(), "v.json")
	// Every answer comes, and a complete window ends the wait at once: a
	// long answer timeout costs nothing, and a short one (300 ms) let an
	// answer a loaded machine delivered late count as missing, then
	// unexpected.
	out, errs, code := run(t, "verify", "--target", addr, "--timing", "asap", "--answer-timeout", "10s", "-o", jsonPath, corpus+"lossy.pcap")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
	if !strings.Contains(out, "total: 3 sessions (3 joined), 942 identical, 0 equivalent, 0 different, 0 missing, 0 unexpected: all identical") {
		t.Errorf("text report:\n%s", out)
	}
	var rep struct {
		Sessions []struct {
			Client     string         `json:"client"`
			Joined     bool           `json:"joined"`
			Phases     map[string]any `json:"phases"`
			Identical  int            `json:"identical"`
			Equivalent int            `json:"equivalent"`
			Different  int            `json:"different"`
			Missing    int            `json:"missing"`
			Unexpected int            `json:"unexpected"`
			Steps      []struct {
				Status    string   `json:"status"`
				Rewritten []string `json:"rewritten"`
			} `json:"steps"`
		} `json:"sessions"`
		Summary struct {
			OK        bool `json:"ok"`
			Identical int  `json:"identical"`
		} `json:"summary"`
	}
	b, err := os.ReadFile(jsonPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	if len(rep.Sessions) != 3 || !rep.Summary.OK || rep.Summary.Identical != 942 {
		t.Fatalf("JSON summary %+v, %d sessions", rep.Summary, len(rep.Sessions))
	}
	for i, s := range rep.Sessions {
		if !s.Joined || s.Phases["lobby"] == nil || s.Phases["connect"] == nil || !strings.HasPrefix(s.Client, fmt.Sprintf("127.0.0.%d:", i+2)) {
			t.Errorf("session %d: joined %v phases %v client %s", i+1, s.Joined, s.Phases, s.Client)
		}
		rewritten := 0
		for _, st := range s.Steps {
			rewritten += len(st.Rewritten)
		}
		if rewritten < 2 { // at least the connect request's address and port
			t.Errorf("session %d: %d rewritten fields reported", i+1, rewritten)
		}
	}
	// --exit-when-done: serve ends by itself once every session is played.
	if !exited(30 * time.Second) {
		t.Fatal("serve --exit-when-done still running 30s after the last session")
	}
	sout, slog, serr := stop()
	if serr != nil {
		t.Fatalf("serve: %v\n%s", serr, slog)
	}
	if strings.Count(sout, "/") < 3 || !strings.Contains(sout, "peer-info ip") {
		t.Errorf("serve report:\n%s", sout)
	}
	// Against loopback each session sends from its own address, 127.0.0.2 on.
	if !strings.Contains(slog, "rewrote peer-info ip 10.0.1.10 -> 127.0.0.2") {
		t.Errorf("serve log does not say which fields were rewritten:\n%s", slog)
	}
	var srep servecmd.Report
	if b, err := os.ReadFile(serveJSON); err != nil {
		t.Fatal(err)
	} else if err := json.Unmarshal(b, &srep); err != nil {
		t.Fatal(err)
	}
	if len(srep.Sessions) != 3 || srep.Captured != 3 {
		t.Fatalf("serve JSON: %+v", srep)
	}
	for _, s := range srep.Sessions {
		if !s.Done || s.Matched != s.Expected || s.Mismatched != 0 || s.Rewritten["peer-info ip"] == 0 {
			t.Errorf("serve JSON session %+v", s)
		}
	}
}

func TestVerifyCommandDifferences(t *testing.T) {
	noLeaks(t)
	addr, stop, _ := replayServer(t, corpus+"duel.pcapng", nil)
	// The answers that differ arrive (1 s leaves a loaded machine room to
	// deliver them); the ones that never come cost a timeout each.
	out, _, code := run(t, "verify", "--target", addr, "--timing", "asap", "--answer-timeout", "1s", corpus+"join.pcap")
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out)
	}
	for _, want := range []string{"FIRST DIVERGENCE: step 5 (capture frame 6) S->C", "different", "captured", "received", "DIFFERENCES"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	sout, _, err := stop()
	if err == nil || !strings.Contains(sout, "mismatched") {
		t.Errorf("serve of a mismatching run: err %v\n%s", err, sout)
	}
}

func TestCommandErrors(t *testing.T) {
	noLeaks(t)
	if _, errs, code := run(t, "serve", "--timing", "asap"); code != 2 || !strings.Contains(errs, "--timing needs --replay CAPTURE") {
		t.Errorf("a replay flag without --replay: exit %d %q", code, errs)
	}
	if _, errs, code := run(t, "serve", "--replay", corpus+"join.pcap", "--name", "x"); code != 2 || !strings.Contains(errs, "--name is a setting of the native server") {
		t.Errorf("a native flag with --replay: exit %d %q", code, errs)
	}
	if _, errs, code := run(t, "verify", corpus+"join.pcap"); code != 2 || !strings.Contains(errs, "--target") {
		t.Errorf("verify without --target: exit %d %q", code, errs)
	}
	if _, errs, code := run(t, "verify", "--target", "127.0.0.1:1", "--mode", "fuzzy", corpus+"join.pcap"); code != 2 || !strings.Contains(errs, "exact or adaptive") {
		t.Errorf("bad mode: exit %d %q", code, errs)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--manifest", "/nonexistent.json"}, "--manifest applies to --mode adaptive"},
		{[]string{"--mode", "adaptive", "--manifest", "/nonexistent.json"}, "--manifest: open /nonexistent.json"},
		{[]string{"--source", "127.0.0.2,nonsense"}, `--source "nonsense": want IPv4 addresses`},
		{[]string{"--fail-on", "protocol"}, `--fail-on "protocol": want info, minor, major, critical or config`},
		{[]string{"--fail-on", "major"}, `--fail-on major: severities apply to --mode adaptive`},
	} {
		args := append(append([]string{"verify", "--target", "127.0.0.1:1"}, c.args...), corpus+"join.pcap")
		if _, errs, code := run(t, args...); code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d %q, want 2 and %q", c.args, code, errs, c.want)
		}
	}
	if _, errs, code := run(t, "serve", "--replay", "/nonexistent.pcap"); code != 2 || !strings.Contains(errs, "nonexistent") {
		t.Errorf("missing capture: exit %d %q", code, errs)
	}
	// The old "--json FILE" typed as a switch, and -o naming the capture,
	// stop before anything is written (the capture used to become JSON).
	tmp := t.TempDir()
	capPath := filepath.Join(tmp, "join.pcap")
	orig, _ := os.ReadFile(corpus + "join.pcap")
	os.WriteFile(capPath, orig, 0o644)
	for _, args := range [][]string{
		{"verify", "--target", "127.0.0.1:1", "--json", capPath, capPath},
		{"verify", "--target", "127.0.0.1:1", "-o", capPath, capPath},
		{"verify", "--target", "127.0.0.1:1", "-o", filepath.Join(tmp, "..", filepath.Base(tmp), "join.pcap"), capPath},
		{"serve", "--replay", capPath, "--json", capPath},
		{"serve", "--replay", capPath, "-o", capPath},
	} {
		if _, errs, code := run(t, args...); code != 2 || !strings.Contains(errs, capPath) && !strings.Contains(errs, "join.pcap") {
			t.Errorf("%v: exit %d %q; want 2 naming the capture", args, code, errs)
		}
	}
	if b, _ := os.ReadFile(capPath); !bytes.Equal(b, orig) {
		t.Errorf("the capture was changed")
	}
	// Nobody answers on this socket: exit 2 with a clear message.
	silent, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	_, errs, code := run(t, "verify", "--target", silent.LocalAddr().String(), "--timing", "asap", "--answer-timeout", "200ms", corpus+"join.pcap")
	if code != 2 || !strings.Contains(errs, "target unreachable: no answer from "+silent.LocalAddr().String()) {
		t.Errorf("unreachable: exit %d %q", code, errs)
	}
	out, _, code := run(t, "verify", "--help")
	if code != 0 || !strings.Contains(out, "bcwire verify --target 127.0.0.1:22101") || !strings.Contains(out, "adaptive") {
		t.Errorf("help: %s", out)
	}
}
