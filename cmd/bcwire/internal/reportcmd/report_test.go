package reportcmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/server/synth"
)

// writeCapture generates a small battle into dir and returns its path.
func writeCapture(t *testing.T, dir string) string {
	t.Helper()
	path := filepath.Join(dir, "battle.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := capture.NewWriter(f, capture.PCAP, capture.Ethernet)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := synth.Generate(synth.Config{Players: 3, Duration: 30 * time.Second, Seed: 1}, w); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRun(t *testing.T) {
	dir := t.TempDir()
	capPath := writeCapture(t, dir)
	out := filepath.Join(dir, "report.html")
	var stdout, stderr bytes.Buffer
	err := Run(&Options{IO: &iostreams.IOStreams{Out: &stdout, Err: &stderr}, Files: []string{capPath}, Output: out,
		Timeout: 45 * time.Second})
	if err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr.String())
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "<svg"); n != 4 {
		t.Errorf("%d charts, want 4", n)
	}
	if !strings.Contains(stderr.String(), "3 sessions") || !strings.Contains(stderr.String(), "wrote "+out) {
		t.Errorf("stderr: %s", stderr.String())
	}
	if stdout.Len() != 0 {
		t.Errorf("stdout not empty")
	}
	left, _ := filepath.Glob(filepath.Join(dir, ".*.partial"))
	if len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}

	stdout.Reset()
	if err := Run(&Options{IO: &iostreams.IOStreams{Out: &stdout, Err: &stderr}, Files: []string{capPath}, Output: "-",
		Timeout: 45 * time.Second, Quiet: true}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(stdout.String(), "<!DOCTYPE html>") {
		t.Errorf("-o - wrote %.100q", stdout.String())
	}

	err = Run(&Options{IO: &iostreams.IOStreams{Out: &stdout, Err: &stderr}, Files: []string{filepath.Join(dir, "missing.pcap")},
		Output: out, Timeout: time.Second})
	if err == nil {
		t.Errorf("missing file: no error")
	}
}
