package verifycmd_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/server/replay"
)

func TestVerifyCommandAgainstServeReplay(t *testing.T) {
	noLeaks(t)
	serveJSON := filepath.Join(t.TempDir(), "serve.json")
	addr, stop, exited := replayServer(t, corpus+"lossy.pcap", "--exit-when-done", "-o", serveJSON)
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
	sout, slog, scode := stop()
	if scode != 0 {
		t.Fatalf("serve: exit %d\n%s", scode, slog)
	}
	if strings.Count(sout, "/") < 3 || !strings.Contains(sout, "peer-info ip") {
		t.Errorf("serve report:\n%s", sout)
	}
	// Against loopback each session sends from its own address, 127.0.0.2 on.
	if !strings.Contains(slog, "rewrote peer-info ip 10.0.1.10 -> 127.0.0.2") {
		t.Errorf("serve log does not say which fields were rewritten:\n%s", slog)
	}
	var srep struct {
		Sessions []replay.ServerSession `json:"sessions"`
		Captured int                    `json:"captured"`
	}
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
	addr, stop, _ := replayServer(t, corpus+"duel.pcapng")
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
	sout, _, scode := stop()
	if scode != 1 || !strings.Contains(sout, "mismatched") {
		t.Errorf("serve of a mismatching run: exit %d, want 1\n%s", scode, sout)
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
