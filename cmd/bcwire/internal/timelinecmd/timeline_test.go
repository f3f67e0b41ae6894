package timelinecmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/internal/golden"
)

// checkGolden compares got with testdata/name, rewriting it with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Compare(t, filepath.Join("testdata", name), got, *update)
}

func run(t *testing.T, o *Options) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	o.IO = &iostreams.IOStreams{Out: &out, Err: &errb}
	if o.Timeout == 0 {
		o.Timeout = 45e9
	}
	err := Run(o)
	code = exit.CodeOK
	if err != nil {
		var ee *exit.Error
		if !errors.As(err, &ee) {
			t.Fatalf("error without an exit status: %v", err)
		}
		code = ee.Code
		errb.WriteString("bcwire: " + err.Error() + "\n")
	}
	return out.String(), errb.String(), code
}

func TestTimelineGolden(t *testing.T) {
	TestFixture(t)
	out, errs, code := run(t, &Options{Files: []string{FixturePath}})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	checkGolden(t, "timeline.golden", []byte(out))
	if !strings.Contains(errs, "2 sessions") {
		t.Errorf("summary: %q", errs)
	}
}

func TestTimelineJSON(t *testing.T) {
	TestFixture(t)
	out, errs, code := run(t, &Options{Files: []string{FixturePath}, JSON: true, Quiet: true})
	if code != 0 || errs != "" {
		t.Fatalf("exit %d: %s", code, errs)
	}
	checkGolden(t, "timeline.json.golden", []byte(out))
	var doc struct {
		Sessions []struct {
			File, Server, Client, Name string
			Slot                       int
			Phases                     map[string]*string
			Events                     []map[string]any
			Reliability                map[string]map[string]map[string]any
			MidCapture                 bool `json:"mid_capture"`
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Sessions) != 2 {
		t.Fatalf("%d sessions", len(doc.Sessions))
	}
	alice, bob := doc.Sessions[0], doc.Sessions[1]
	if alice.Name != "Alice" || alice.Slot != 3 || alice.Client != "10.0.0.2:53000" || alice.Server != "10.0.0.1:22101" || alice.File != FixturePath {
		t.Errorf("alice: %+v", alice)
	}
	for _, k := range []string{"connect", "checksum_done", "lobby", "in_game", "end"} {
		v, ok := alice.Phases[k]
		if !ok || v == nil {
			t.Errorf("alice phase %s = %v", k, v)
		}
		if v, ok := bob.Phases[k]; !ok || (v == nil) != (k != "in_game" && k != "end") {
			t.Errorf("bob (seen mid-way) phase %s = %v", k, v)
		}
	}
	if !bob.MidCapture {
		t.Errorf("bob not marked mid-capture")
	}
	if r := alice.Reliability["S->C"]["data"]; r["retransmissions"] != 1.0 || r["unacked"] != 0.0 {
		t.Errorf("alice S->C data: %v", r)
	}
}

func TestTimelineNoSessions(t *testing.T) {
	TestFixture(t)
	path := filepath.Join(t.TempDir(), "empty.pcap")
	raw, _ := os.ReadFile(FixturePath)
	os.WriteFile(path, raw[:24], 0o644) // the pcap file header alone
	out, _, code := run(t, &Options{Files: []string{path}, JSON: true, Quiet: true})
	if code != 0 || out != "{\"sessions\":[]}\n" {
		t.Errorf("exit %d, output %q", code, out)
	}
}

func TestTimelineDamaged(t *testing.T) {
	TestFixture(t)
	raw, err := os.ReadFile(FixturePath)
	if err != nil {
		t.Fatal(err)
	}
	// Cut the file inside its last record: a truncated capture.
	path := filepath.Join(t.TempDir(), "cut.pcap")
	if err := os.WriteFile(path, raw[:len(raw)-5], 0o644); err != nil {
		t.Fatal(err)
	}
	out, errs, code := run(t, &Options{Files: []string{path}})
	if code != exit.CodeDamaged {
		t.Errorf("exit %d, want %d", code, exit.CodeDamaged)
	}
	if !strings.Contains(errs, path+": capture record: frame 444") || !strings.Contains(out, `"Alice"`) {
		t.Errorf("stderr %q does not name the file and packet, or no output", errs)
	}
}

func TestTimelineUsage(t *testing.T) {
	_, errs, code := run(t, &Options{Files: []string{filepath.Join(t.TempDir(), "missing.pcap")}})
	if code != exit.CodeUsage || !strings.Contains(errs, "missing.pcap") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	if _, _, code := run(t, &Options{Files: []string{FixturePath}, Servers: []string{"nonsense"}}); code != exit.CodeUsage {
		t.Errorf("bad --server: exit %d", code)
	}
	notCapture := filepath.Join(t.TempDir(), "x.txt")
	os.WriteFile(notCapture, []byte("hello, this is not a capture file"), 0o644)
	if _, errs, code := run(t, &Options{Files: []string{notCapture}}); code != exit.CodeUsage || !strings.Contains(errs, "x.txt") {
		t.Errorf("not a capture: exit %d, %q", code, errs)
	}
}
