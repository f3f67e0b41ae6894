package root

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Every command that writes a file: synth's capture (-w, format by name),
// report's page (-o), never over an input or, without --force, a capture.
func TestCommandsWriteFilesSafely(t *testing.T) {
	dir := t.TempDir()
	ng := filepath.Join(dir, "x.pcapng")
	pc := filepath.Join(dir, "x.pcap")
	for path, magic := range map[string][]byte{ng: {0x0A, 0x0D, 0x0D, 0x0A}, pc: {0x4D, 0x3C, 0xB2, 0xA1}} {
		if _, errs, code := run(t, "synth", "-q", "-w", path, "--players", "1", "--duration", "5s"); code != 0 {
			t.Fatalf("synth -w %s: exit %d %s", path, code, errs)
		}
		if b, _ := os.ReadFile(path); !bytes.HasPrefix(b, magic) {
			t.Errorf("synth -w %s: starts % X", path, b[:4])
		}
	}
	orig, _ := os.ReadFile(pc)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"synth", "-o", pc}, "-w FILE"},
		{[]string{"report", "-q", "-o", pc, pc}, "inputs"},
		{[]string{"report", "-q", "-o", pc, ng}, "pcap capture"},
		{[]string{"report", "-q", pc, "-o", ng}, "pcapng capture"},
		{[]string{"report", "-q", pc, "-o", filepath.Join(dir, "..", filepath.Base(dir), "x.pcap")}, "inputs"},
	} {
		if _, errs, code := run(t, c.args...); code != 2 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d %q, want 2 and %q", c.args, code, errs, c.want)
		}
	}
	if b, _ := os.ReadFile(pc); !bytes.Equal(b, orig) {
		t.Fatal("a refused command changed the capture")
	}
	// --force replaces a capture that is not an input.
	if _, errs, code := run(t, "report", "-q", "--force", "-o", pc, ng); code != 0 {
		t.Fatalf("report --force: exit %d %s", code, errs)
	}
	page, _ := os.ReadFile(pc)
	if !bytes.HasPrefix(page, []byte("<!DOCTYPE html>")) {
		t.Errorf("report --force wrote %.20q", page)
	}
	// A failing run (one input missing) leaves the old page.
	if _, _, code := run(t, "report", "-q", "-o", pc, ng, filepath.Join(dir, "missing.pcap")); code != 2 {
		t.Errorf("missing input: exit %d", code)
	}
	if b, _ := os.ReadFile(pc); !bytes.Equal(b, page) {
		t.Error("a failed report changed its old output")
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}
