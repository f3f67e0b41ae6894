package diffcmd

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/server/synth"
)

// run executes `bcwire diff args...` and returns its output and exit status.
func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := NewCmdDiff(&iostreams.IOStreams{Out: &out, Err: &errb}, nil)
	cmd.SetArgs(args)
	cmd.SetOut(&errb)
	cmd.SetErr(&errb)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	var ee *exit.Error
	switch {
	case err == nil:
		code = 0
	case errors.As(err, &ee):
		code = ee.Code
		errb.WriteString(err.Error())
	default:
		code = exit.CodeUsage
		errb.WriteString(err.Error())
	}
	return out.String(), errb.String(), code
}

func write(t *testing.T, dir, name string, cfg synth.Config) string {
	t.Helper()
	p := filepath.Join(dir, name)
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	w, err := capture.NewWriter(f, capture.PCAP, capture.Ethernet)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := synth.Generate(cfg, w); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestDiffCommand(t *testing.T) {
	dir := t.TempDir()
	cfg := synth.Config{Players: 2, Duration: 20 * time.Second, Seed: 4}
	stock := write(t, dir, "stock.pcap", cfg)
	cfg.Quirks.NoBundling = true
	ours := write(t, dir, "ours.pcap", cfg)

	// A capture against itself: no differences, exit 0.
	out, errs, code := run(t, "-q", stock, stock)
	if code != 0 || !strings.Contains(out, "no differences (2 sessions compared by join order)") {
		t.Fatalf("A A: exit %d\n%s%s", code, out, errs)
	}

	// The quirk: two major bundling differences, listed under the
	// handshake, with both sides and frame numbers; exit 1.
	out, errs, code = run(t, "-q", ours, stock)
	if code != 1 || !strings.Contains(errs, "2 difference(s) of severity minor or worse") {
		t.Fatalf("quirk: exit %d\n%s%s", code, out, errs)
	}
	for _, want := range []string{"2 differences (2 major), worst major", "== HANDSHAKE ==",
		"major    the answer to the connect request is bundled differently", "sessions (join order): 1,2",
		"frame 4: connect-ack R seq=0 O", "frames: ours "} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}

	// --fail-on critical: the same differences no longer fail; adding
	// config changes nothing where no configuration differs.
	if _, _, code := run(t, "-q", "--fail-on", "critical", ours, stock); code != 0 {
		t.Errorf("--fail-on critical: exit %d", code)
	}
	if _, _, code := run(t, "-q", "--fail-on", "critical,config", ours, stock); code != 0 {
		t.Errorf("--fail-on critical,config: exit %d", code)
	}

	// --json: the documented keys; -o: a page with the differences.
	html := filepath.Join(dir, "diff.html")
	out, errs, code = run(t, "-q", "--json", "-o", html, ours, stock)
	if code != 1 {
		t.Fatalf("--json: exit %d %s", code, errs)
	}
	var res struct {
		Differences []map[string]json.RawMessage `json:"differences"`
		Summary     map[string]json.RawMessage   `json:"summary"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json: %v\n%s", err, out)
	}
	if len(res.Differences) != 2 || string(res.Summary["worst"]) != `"major"` {
		t.Fatalf("json: %s", out)
	}
	for _, k := range []string{"phase", "severity", "kind", "summary", "ours", "stock", "frames"} {
		if _, ok := res.Differences[0][k]; !ok {
			t.Errorf("difference lacks %q", k)
		}
	}
	if string(res.Differences[0]["phase"]) != `"handshake"` || string(res.Differences[0]["kind"]) != `"bundling"` {
		t.Errorf("first difference: %s %s", res.Differences[0]["phase"], res.Differences[0]["kind"])
	}
	page, err := os.ReadFile(html)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<!DOCTYPE html>", "bundled differently", `class="sev major"`, "--accent"} {
		if !strings.Contains(string(page), want) {
			t.Errorf("html lacks %q", want)
		}
	}

	// --show major hides nothing here; --show critical hides both, but the
	// exit status still follows --fail-on.
	out, _, code = run(t, "-q", "--show", "critical", ours, stock)
	if code != 1 || !strings.Contains(out, "no differences") {
		t.Errorf("--show critical: exit %d\n%s", code, out)
	}

	// A rules file can lower the severity of a kind.
	rules := filepath.Join(dir, "rules.json")
	os.WriteFile(rules, []byte(`{"severity": {"bundling": "info"}}`), 0o644)
	if out, _, code := run(t, "-q", "--rules", rules, ours, stock); code != 0 || !strings.Contains(out, "2 info") {
		t.Errorf("rules: exit %d\n%s", code, out)
	}
}

func TestDiffUsageErrors(t *testing.T) {
	dir := t.TempDir()
	stock := write(t, dir, "stock.pcap", synth.Config{Players: 1, Duration: 10 * time.Second, Seed: 1})
	empty := filepath.Join(dir, "empty.pcap")
	f, _ := os.Create(empty)
	w, _ := capture.NewWriter(f, capture.PCAP, capture.Ethernet)
	w.Flush()
	f.Close()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{stock}, "give two capture files"},
		{[]string{"--fail-on", "fatal", stock, stock}, "--fail-on"},
		{[]string{"--fail-on", "config,fatal", stock, stock}, "--fail-on"},
		{[]string{"--show", "loud", stock, stock}, "--show"},
		{[]string{filepath.Join(dir, "none.pcap"), stock}, "none.pcap"},
		{[]string{"--rules", filepath.Join(dir, "none.json"), stock, stock}, "--rules"},
		{[]string{"--ignore", "[bad", stock, stock}, "ignore pattern"},
		{[]string{"--rate-ratio", "0.5", stock, stock}, "rate_ratio"},
		{[]string{"-q", empty, stock}, "no Bridge Commander sessions"},
		// The old --html FILE, typed as a switch, once replaced OURS.
		{[]string{"--html", stock, stock, stock}, "-o FILE"},
		{[]string{"-o", stock, stock, stock}, "inputs"},
		{[]string{"-o", filepath.Join(dir, ".", "stock.pcap"), empty, stock}, "inputs"},
	} {
		_, errs, code := run(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q", c.args, code, errs)
		}
	}
}

// -o never destroys a capture: not an input (by name or through a link),
// not another capture without --force, and a failed run leaves the old page.
func TestDiffOutputKeepsFiles(t *testing.T) {
	dir := t.TempDir()
	stock := write(t, dir, "stock.pcap", synth.Config{Players: 1, Duration: 10 * time.Second, Seed: 1})
	before, _ := os.ReadFile(stock)
	link := filepath.Join(dir, "link.html")
	if err := os.Symlink(stock, link); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "other.pcap")
	os.WriteFile(other, before, 0o644)
	for _, args := range [][]string{
		{"-q", "-o", stock, stock, stock},
		{"-q", "-o", link, stock, stock},
		{"-q", "-o", other, stock, stock},
		{"-q", "--html", stock, stock, stock},
	} {
		if _, errs, code := run(t, args...); code != 2 || !strings.Contains(errs, args[2]) && !strings.Contains(errs, "-o FILE") {
			t.Errorf("%v: exit %d, %q; want 2 naming the file", args, code, errs)
		}
	}
	for _, p := range []string{stock, other} {
		if b, _ := os.ReadFile(p); !bytes.Equal(b, before) {
			t.Errorf("%s changed", p)
		}
	}
	if _, errs, code := run(t, "-q", "--force", "-o", other, stock, stock); code != 0 {
		t.Fatalf("--force: exit %d %s", code, errs)
	}
	if b, _ := os.ReadFile(other); !bytes.HasPrefix(b, []byte("<!DOCTYPE html>")) {
		t.Errorf("--force did not write the page")
	}
	// A run that fails (the second capture is missing) leaves the page.
	page, _ := os.ReadFile(other)
	if _, _, code := run(t, "-q", "-o", other, stock, filepath.Join(dir, "none.pcap")); code != 2 {
		t.Errorf("missing input: exit %d", code)
	}
	if b, _ := os.ReadFile(other); !bytes.Equal(b, page) {
		t.Errorf("failed run changed %s", other)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*.partial")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
