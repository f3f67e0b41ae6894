package statscmd

import (
	"os"
	"runtime/debug"
	"testing"
)

// stats --json raises the collector's target (jsonGCPercent) unless GOGC
// is set; text stats and a GOGC of the user's keep theirs.
func TestTuneGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	t.Setenv("GOGC", "") // restored after the test
	os.Unsetenv("GOGC")
	cases := []struct {
		gogc   string // "" unset
		asJSON bool
		want   int
	}{
		{"", true, jsonGCPercent},
		{"", false, 100},
		{"100", true, 100},
		{"off", true, 100},
	}
	for _, c := range cases {
		if c.gogc == "" {
			os.Unsetenv("GOGC")
		} else {
			os.Setenv("GOGC", c.gogc)
		}
		debug.SetGCPercent(100)
		tuneGC(c.asJSON)
		if got := debug.SetGCPercent(100); got != c.want {
			t.Errorf("GOGC %q, JSON %v: GC percent %d, want %d", c.gogc, c.asJSON, got, c.want)
		}
	}
}
