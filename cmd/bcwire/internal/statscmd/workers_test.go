package statscmd

import (
	"testing"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/input"
)

// --workers N must print exactly what one worker prints, text and JSON,
// on clean and damaged captures alike (exit status and stderr included).
func TestStatsWorkersSameOutput(t *testing.T) {
	files := []string{"../../../../testdata/pcaps/battle.pcap", "../../../../testdata/pcaps/damaged.pcap", "../../../../testdata/pcaps/lossy.pcap"}
	for _, json := range []bool{false, true} {
		want, werr, wcode := run(t, &Options{Files: files, JSON: json}, false)
		if want == "" {
			t.Fatal("no output")
		}
		for _, w := range []int{2, 4} {
			got, gerr, gcode := run(t, &Options{Files: files, JSON: json, Caps: input.Caps{Workers: w}}, false)
			if got != want || gerr != werr || gcode != wcode {
				t.Errorf("json=%v workers=%d: output differs from one worker (exit %d vs %d)\nstderr: %s\nwant stderr: %s", json, w, gcode, wcode, gerr, werr)
			}
		}
	}
}

func TestStatsCapsFlagsRejectNegative(t *testing.T) {
	_, _, code := run(t, &Options{Files: []string{fixture}, Caps: input.Caps{Flows: -1}}, false)
	if code != exit.CodeUsage {
		t.Fatalf("exit %d, want %d", code, exit.CodeUsage)
	}
}
