package statscmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/internal/golden"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// fixture is the two-player capture timelinecmd's tests generate.
const fixture = "../timelinecmd/testdata/two-players.pcap"

func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Compare(t, filepath.Join("testdata", name), got, *update)
}

func run(t *testing.T, o *Options, color bool) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	o.IO = &iostreams.IOStreams{Out: &out, Err: &errb, Color: color}
	err := Run(o)
	if err != nil {
		var ee *exit.Error
		if !errors.As(err, &ee) {
			t.Fatalf("error without an exit status: %v", err)
		}
		return out.String(), errb.String() + err.Error(), ee.Code
	}
	return out.String(), errb.String(), 0
}

func TestStatsGolden(t *testing.T) {
	out, errs, code := run(t, &Options{Files: []string{fixture}, Quiet: true}, false)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d: %s", code, errs)
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("color codes in piped output")
	}
	checkGolden(t, "stats.golden", []byte(out))

	colored, _, _ := run(t, &Options{Files: []string{fixture}, Quiet: true}, true)
	if !strings.Contains(colored, "\x1b[") {
		t.Errorf("no color codes with Color set")
	}
	totals, _, _ := run(t, &Options{Files: []string{fixture}, Quiet: true, NoSessions: true}, false)
	if strings.Contains(totals, "Session ") || !strings.HasPrefix(totals, "Total:") {
		t.Errorf("--no-sessions printed sessions:\n%s", totals)
	}
}

func TestStatsJSON(t *testing.T) {
	out, errs, code := run(t, &Options{Files: []string{fixture}, JSON: true, Quiet: true}, true)
	if code != 0 || errs != "" {
		t.Fatalf("exit %d: %s", code, errs)
	}
	checkGolden(t, "stats.json.golden", []byte(out))
	var doc struct {
		Opcodes []struct {
			Dir    string
			Opcode int
			Name   string
			Count  int
			Bytes  int
		}
		Transport []struct {
			Dir   string
			Type  int
			Count int
		}
		GameSpy []struct {
			Kind  string
			Count int
		}
		Sessions []struct {
			Name    string
			Opcodes []map[string]any
		}
		SessionCount int `json:"session_count"`
		Measures     []struct {
			File    string
			Cadence []struct {
				Dir, Family string
				Intervals   int
				P50         float64 `json:"interval_p50_ms"`
				P90         float64 `json:"interval_p90_ms"`
			}
			FlagFamilies map[string]map[string]int `json:"flag_families"`
			Relay        []struct {
				Opcode   string
				Messages int
				ToOthers int `json:"to_others"`
				ToSender int `json:"to_sender"`
			} `json:"relay_matrix"`
			Bundling []struct {
				Dir       string
				Datagrams int
				Max       int
				Counts    map[string]int `json:"distribution"`
			} `json:"messages_per_datagram"`
			Deaths []any `json:"deaths"`
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	find := func(dir string, op int) (count, bytes int) {
		for _, o := range doc.Opcodes {
			if o.Dir == dir && o.Opcode == op {
				return o.Count, o.Bytes
			}
		}
		return 0, 0
	}
	// Every C->S StateUpdate of the fixture is 10 bytes: 100 from Alice, 85
	// from Bob (the capture starts after his first).
	if n, b := find("C->S", 0x1C); n != 185 || b != 1850 {
		t.Errorf("C->S StateUpdate: %d messages, %d bytes", n, b)
	}
	if n, _ := find("S->C", 0x20); n != 5 {
		t.Errorf("S->C ChecksumRequest: %d", n)
	}
	if n, _ := find("C->S", 0x21); n != 5 { // one travelled in two fragments: still one message
		t.Errorf("C->S ChecksumResponse: %d", n)
	}
	var acks int
	for _, tr := range doc.Transport {
		if tr.Type == 1 {
			acks += tr.Count
		}
	}
	if acks == 0 || len(doc.GameSpy) != 2 || doc.GameSpy[1].Kind != "status" || doc.GameSpy[1].Count != 6 {
		t.Errorf("transport %+v gamespy %+v", doc.Transport, doc.GameSpy)
	}
	// The capture's measures (issue 29.4): the fixture's clients send a
	// position-only (0x0x) StateUpdate every 100 ms.
	if len(doc.Measures) != 1 || doc.Measures[0].File != fixture {
		t.Fatalf("measures: %+v", doc.Measures)
	}
	m := doc.Measures[0]
	cadence := false
	for _, c := range m.Cadence {
		if c.Dir == "C->S" && c.Family == "all" {
			cadence = c.Intervals == 182 && c.P50 == 100 && c.P90 == 100
		}
	}
	if !cadence || m.FlagFamilies["C->S"]["0x0x"] != 185 {
		t.Errorf("cadence %+v, families %v", m.Cadence, m.FlagFamilies)
	}
	if len(m.Bundling) != 2 || m.Bundling[1].Dir != "S->C" || m.Bundling[1].Max != 4 || m.Bundling[1].Counts["4"] == 0 {
		t.Errorf("messages per datagram: %+v", m.Bundling)
	}
	chat := false
	for _, r := range m.Relay {
		chat = chat || r.Opcode == "CHAT" && r.Messages == 1 && r.ToOthers == 1 && r.ToSender == 0
	}
	if !chat || m.Deaths == nil {
		t.Errorf("relay matrix %+v, deaths %v", m.Relay, m.Deaths)
	}
	if out, _, _ := run(t, &Options{Files: []string{fixture}, JSON: true, Quiet: true, NoMeasures: true}, false); strings.Contains(out, `"measures"`) {
		t.Error("--no-measures: the measures are listed")
	}
	if doc.SessionCount != 2 || len(doc.Sessions) != 2 || doc.Sessions[0].Name != "Alice" || len(doc.Sessions[0].Opcodes) == 0 {
		t.Errorf("sessions: %+v", doc.Sessions)
	}
}

func TestStatsErrors(t *testing.T) {
	if _, errs, code := run(t, &Options{Files: []string{"testdata/nope.pcap"}}, false); code != exit.CodeUsage || !strings.Contains(errs, "nope.pcap") {
		t.Errorf("missing file: exit %d %q", code, errs)
	}
	raw, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	// Flip a byte inside the first datagram's encrypted payload: framing
	// or decoding fails, and the output says where.
	damaged := bytes.Clone(raw)
	damaged[24+16+14+20+8+1] ^= 0xFF
	path := filepath.Join(t.TempDir(), "damaged.pcap")
	os.WriteFile(path, damaged, 0o644)
	_, errs, code := run(t, &Options{Files: []string{path}}, false)
	if code != exit.CodeDamaged || !strings.Contains(errs, path+": frame 1 ") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
}
