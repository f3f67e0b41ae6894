package golden

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

// TestCompareWritesAndReads: what -update writes, plain and gzipped, reads
// back equal.
func TestCompareWritesAndReads(t *testing.T) {
	out := []byte(strings.Repeat("line\n", 1000))
	for _, name := range []string{"x.golden", "x.golden.gz"} {
		path := filepath.Join(t.TempDir(), "sub", name)
		Compare(t, path, out, true)
		Compare(t, path, out, false)
	}
}
