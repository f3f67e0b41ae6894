package root

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/dissect/capture"
)

// TestWriteRefusesExistingFile: -w over an existing non-empty file is
// refused without --force by every command that writes a capture (exit 2,
// the file untouched), and replaced with it. -w - (standard output) and a
// new or empty file are never refused.
func TestWriteRefusesExistingFile(t *testing.T) {
	battle := filepath.Join(corpusDir, "battle.pcap")
	for _, c := range []struct {
		name     string
		args     []string // -w TARGET is added
		needRoot bool     // for the run with --force
	}{
		{"decode", []string{"decode", "-Y", `name == "CHAT"`, battle}, false},
		{"synth", []string{"synth", "--players", "1", "--duration", "5s"}, false},
		{"serve", []string{"serve", "--listen", "127.0.0.1:0", "--stop-after", "200ms", "--log-level", "error"}, false},
		{"live", []string{"live", "-i", "lo", "--port", "9", "--duration", "200ms", "-q"}, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(dir, "old.pcap")
			old := []byte("a capture that took a week to record")
			os.WriteFile(target, old, 0o644)
			_, errs, code := run(t, append(c.args, "-w", target)...)
			if code != 2 || !strings.Contains(errs, "-w "+target+": the file exists") || !strings.Contains(errs, "--force") {
				t.Errorf("without --force: exit %d, %q; want exit 2 refusing and naming --force", code, errs)
			}
			if b, _ := os.ReadFile(target); !bytes.Equal(b, old) {
				t.Fatalf("the file was changed: %.40q", b)
			}
			if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
				t.Errorf("left %v", left)
			}
			if c.needRoot && os.Geteuid() != 0 {
				t.Skip("the run with --force captures on lo: needs root")
			}
			_, errs, code = run(t, append(c.args, "-w", target, "--force")...)
			if code != 0 {
				t.Fatalf("with --force: exit %d, %s", code, errs)
			}
			rd, err := capture.Open(target)
			if err != nil {
				t.Fatalf("with --force the file is not a capture: %v", err)
			}
			rd.Close()
			// An empty file is no capture to lose: no --force needed.
			os.WriteFile(target, nil, 0o644)
			if _, errs, code := run(t, append(c.args, "-w", target)...); code != 0 {
				t.Errorf("over an empty file: exit %d, %s", code, errs)
			}
		})
	}
}

// TestDecodeRefusesStdinAsTarget is the case: decode reading
// standard input (-r -) with -w naming the very file standard input reads
// would replace the capture with the little it kept of it.
func TestDecodeRefusesStdinAsTarget(t *testing.T) {
	dir := t.TempDir()
	v := filepath.Join(dir, "v.pcap")
	orig, err := os.ReadFile(filepath.Join(corpusDir, "battle.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(v, orig, 0o644)
	in, err := os.Open(v)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	saved := os.Stdin
	os.Stdin = in
	defer func() { os.Stdin = saved }()
	for _, force := range []bool{false, true} {
		args := []string{"decode", "-Y", `name == "CHAT"`, "-w", v, "-r", "-"}
		if force {
			args = append(args, "--force") // --force never lets an input be replaced
		}
		_, errs, code := run(t, args...)
		if code != 2 || !strings.Contains(errs, "standard input") {
			t.Errorf("--force %v: exit %d, %q; want exit 2 naming standard input", force, code, errs)
		}
		if b, _ := os.ReadFile(v); !bytes.Equal(b, orig) {
			t.Fatalf("v.pcap changed: %d bytes, was %d", len(b), len(orig))
		}
	}
}
