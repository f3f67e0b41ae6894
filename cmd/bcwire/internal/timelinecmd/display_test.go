package timelinecmd

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/input"
)

// TestTimelineDisplayFilter: timeline -Y builds the sessions from the
// messages the filter holds for: one player's traffic gives that player's
// session only.
func TestTimelineDisplayFilter(t *testing.T) {
	battle := "../../../../testdata/pcaps/battle.pcap"
	all, _, _ := run(t, &Options{Files: []string{battle}, JSON: true, Quiet: true})
	one, _, code := run(t, &Options{Files: []string{battle}, JSON: true, Quiet: true,
		Read: input.ReadFlags{Filter: `src contains "10.0.1.10:" or dst contains "10.0.1.10:"`}})
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	count := func(s string) (n int, clients []string) {
		var v struct {
			Sessions []struct {
				Client string `json:"client"`
			} `json:"sessions"`
		}
		if err := json.Unmarshal([]byte(s), &v); err != nil {
			t.Fatal(err)
		}
		for _, s := range v.Sessions {
			clients = append(clients, s.Client)
		}
		return len(clients), clients
	}
	na, _ := count(all)
	n1, clients := count(one)
	if na < 2 || n1 != 1 || !strings.HasPrefix(clients[0], "10.0.1.10:") {
		t.Errorf("sessions: %d unfiltered, %d filtered %v; want one, of 10.0.1.10", na, n1, clients)
	}
	if _, errs, code := run(t, &Options{Files: []string{battle}, Read: input.ReadFlags{Filter: "peer >"}}); code != 2 || !strings.Contains(errs, "column 7") {
		t.Errorf("bad -Y: exit %d %q", code, errs)
	}
}
