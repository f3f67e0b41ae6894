package statscmd

import (
	"os"
	"runtime/debug"
	"testing"
)

// stats raises the collector's target (gcPercent) unless GOGC is set.
func TestTuneGC(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	t.Setenv("GOGC", "") // restored after the test
	for _, c := range []struct {
		gogc string // "" unset
		want int
	}{{"", gcPercent}, {"100", 100}, {"off", 100}} {
		if c.gogc == "" {
			os.Unsetenv("GOGC")
		} else {
			os.Setenv("GOGC", c.gogc)
		}
		debug.SetGCPercent(100)
		tuneGC()
		if got := debug.SetGCPercent(100); got != c.want {
			t.Errorf("GOGC %q: GC percent %d, want %d", c.gogc, got, c.want)
		}
	}
}
