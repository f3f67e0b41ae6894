package gctune

import (
	"os"
	"runtime/debug"
	"testing"
)

// Percent sets the target unless GOGC is set, to a number or to off.
func TestPercent(t *testing.T) {
	old := debug.SetGCPercent(100)
	defer debug.SetGCPercent(old)
	t.Setenv("GOGC", "") // restored after the test
	for _, c := range []struct {
		gogc string // "" unset
		want int
	}{{"", 50}, {"100", 100}, {"off", 100}} {
		if c.gogc == "" {
			os.Unsetenv("GOGC")
		} else {
			os.Setenv("GOGC", c.gogc)
		}
		debug.SetGCPercent(100)
		Percent(50)
		if got := debug.SetGCPercent(100); got != c.want {
			t.Errorf("GOGC %q: GC percent %d, want %d", c.gogc, got, c.want)
		}
	}
}
