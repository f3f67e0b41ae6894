package root

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Messages a person can act on (issue 17.4).
func TestUsageMessages(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		args []string
		want string // in stderr
	}{
		{nil, "give a command"},
		{[]string{"cipher"}, "bcwire cipher needs one of its commands"},
		{[]string{"help", "nonexistent"}, `no help topic "nonexistent"`},
		{[]string{"decode", "-c", "-5", "x.pcap"}, "-c -5"},
		{[]string{"decode", "--workers", "0", "x.pcap"}, "--workers 0"},
		{[]string{"stats", "--workers", "0", "x.pcap"}, "--workers 0"},
		{[]string{"decode", "--dir", "C", "x.pcap"}, "s2c"},
		{[]string{"synth", "-w", filepath.Join(dir, "s.pcap"), "--players", "0"}, "--players 0"},
		{[]string{"verify", "--target", "127.0.0.1:1", "--max-divergences", "-1", "x.pcap"}, "--max-divergences -1"},
	} {
		_, errs, code := run(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
	// The file name once, and what is wrong with it. (The whole path is
	// counted: the base of a TempDir, "001", can also be part of its
	// parent's random name.)
	for _, cmd := range []string{"decode", "stats", "timeline"} {
		_, errs, code := run(t, cmd, dir)
		if code != 2 || strings.Count(errs, dir) != 1 || !strings.Contains(errs, "is a directory") {
			t.Errorf("%s DIR: exit %d %q", cmd, code, errs)
		}
		_, errs, _ = run(t, cmd, filepath.Join(dir, "missing.pcap"))
		if strings.Count(errs, "missing.pcap") != 1 {
			t.Errorf("%s missing.pcap: %q", cmd, errs)
		}
	}
	gz := filepath.Join(dir, "c.pcap.gz")
	os.WriteFile(gz, []byte{0x1F, 0x8B, 8, 0, 0, 0, 0, 0}, 0o644)
	if _, errs, code := run(t, "decode", gz); code != 2 || !strings.Contains(errs, "gzip") || strings.Count(errs, "c.pcap.gz") != 1 {
		t.Errorf("gzip: exit %d %q", code, errs)
	}
	// Help and version.
	if out, _, code := run(t, "--version"); code != 0 || !strings.HasPrefix(out, "bcwire ") || strings.Contains(out, "unknown") {
		t.Errorf("--version: exit %d %q", code, out)
	}
	if out, _, code := run(t, "help", "decode"); code != 0 || !strings.Contains(out, "bcwire decode") {
		t.Errorf("help decode: exit %d", code)
	}
	// Every help example pastes as shown: no unquoted > or < in a flag value
	// (--dir S->C made a file named C).
	for _, args := range [][]string{{"decode", "--help"}, {"live", "--help"}, {"diff", "--help"}, {"verify", "--help"}, {"serve", "--help"}} {
		out, _, _ := run(t, args...)
		ex := out[strings.Index(out, "Examples:"):]
		ex = ex[:strings.Index(ex, "Flags:")]
		for _, line := range strings.Split(ex, "\n") {
			if strings.Contains(line, "->") && !strings.Contains(line, "'") && !strings.Contains(line, `"`) {
				t.Errorf("%s example has an unquoted ->: %s", args[0], line)
			}
		}
	}
}

// decode's damage goes to stderr with its details, so that it survives
// `| jq` and `> /dev/null`; its JSON damage records carry no zero values.
func TestDecodeDamageOnStderr(t *testing.T) {
	damaged := filepath.Join(corpusDir, "damaged.pcap")
	out, errs, code := run(t, "decode", "--json", damaged)
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	if !strings.Contains(errs, "damaged.pcap: frame ") || strings.Count(errs, "damaged.pcap: ") < 4 || !strings.Contains(errs, "3 damaged packets or messages") {
		t.Errorf("stderr lacks the damage details:\n%s", errs)
	}
	_, qerrs, _ := run(t, "decode", "-q", "--json", damaged)
	if !strings.Contains(qerrs, "damaged.pcap: frame ") || strings.Contains(qerrs, " records, ") {
		t.Errorf("-q: damage must stay, the summary go:\n%s", qerrs)
	}
	n := 0
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if !strings.Contains(line, `"error"`) {
			continue
		}
		n++
		var rec map[string]any
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"0001-01-01", "invalid AddrPort", `"dir":"?"`, `"raw":""`} {
			if strings.Contains(line, bad) {
				t.Errorf("zero value %s in %s", bad, line)
			}
		}
	}
	if n != 3 {
		t.Errorf("%d damage records in the JSON, want 3", n)
	}
}
