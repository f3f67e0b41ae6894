package testutil

import (
	"path/filepath"
	"strings"
	"testing"
)

func TestFirstDiff(t *testing.T) {
	for _, c := range []struct{ want, got, says string }{
		{"a\nb\nc\n", "a\nb\nc\n", ""},
		{"a\nb\nc\n", "a\nB\nc\n", "line 2 differs:\n golden: b\n    got: B"},
		{"a\nb\n", "a\nb\nc\n", "line 3 differs:\n golden: \n    got: c"},
		{"a\nb", "a\nb\nc", "2 lines golden, 3 now"},
	} {
		if got := FirstDiff([]byte(c.want), []byte(c.got)); got != c.says {
			t.Errorf("FirstDiff(%q, %q) = %q, want %q", c.want, c.got, got, c.says)
		}
	}
}

// TestGoldenWritesAndReads: what -update writes, plain and gzipped, reads
// back equal.
func TestGoldenWritesAndReads(t *testing.T) {
	out := []byte(strings.Repeat("line\n", 1000))
	for _, name := range []string{"x.golden", "x.golden.gz"} {
		path := filepath.Join(t.TempDir(), "sub", name)
		Golden(t, path, out, true)
		Golden(t, path, out, false)
	}
}

func TestUnhex(t *testing.T) {
	if got := Unhex(t, "1C FF:00\n\t0a"); string(got) != "\x1c\xff\x00\x0a" {
		t.Errorf("Unhex = % X", got)
	}
}
