package diff

import (
	"strings"
	"testing"

	"github.com/bcwire/bcwire/session/measure"
)

// The measure rules on hand-made measures: OpenBC's shape (downstream
// updates forwarded in the client's families, chat not echoed, bigger
// bundles) against stock's, each difference with both sides' numbers and
// the published figure.
func TestMeasureRules(t *testing.T) {
	r := DefaultRules()
	stock := &measure.Measures{
		FlagFamilies: map[string]map[string]int{"C->S": {"0x9x": 940, "0x8x": 60}, "S->C": {"0x3x": 700, "0x2x": 300}},
		Relay:        []*measure.RelayRow{{Opcode: "TEAM_CHAT", Messages: 10, ToSender: 10, ToOthers: 30, Expected: 30}},
		Bundling:     [2]measure.Bundling{{Dir: "C->S"}, {Dir: "S->C", Datagrams: 500, P90: 4, Max: 9, Mean: 2.8}},
	}
	ours := &measure.Measures{
		FlagFamilies: map[string]map[string]int{"C->S": {"0x9x": 900, "0x8x": 100}, "S->C": {"0x9x": 600, "0x2x": 400}},
		Relay:        []*measure.RelayRow{{Opcode: "TEAM_CHAT", Messages: 10, ToSender: 0, ToOthers: 30, Expected: 30}},
		Bundling:     [2]measure.Bundling{{Dir: "C->S"}, {Dir: "S->C", Datagrams: 500, P90: 12, Max: 40, Mean: 6}},
	}
	x := &context{r: &r, ours: &Capture{Measures: ours}, stock: &Capture{Measures: stock}}
	c := &collector{r: &r, diffs: map[string]*Difference{}}
	x.compareFamilies(c)
	x.compareBundling(c)
	names, o, s := x.relayReceivers()
	if len(c.diffs) != 2 {
		t.Fatalf("%d differences, want the S->C family mix and the bundling: %v", len(c.diffs), c.diffs)
	}
	fam := c.diffs["stateupdate families S->C"]
	if fam == nil || fam.Severity != Major || !strings.Contains(fam.Summary, "0x9x 60%, stock 0%") ||
		!strings.Contains(fam.Summary, "0x3x 0%, stock 70%") || !strings.Contains(fam.Summary, measure.StockFamilies) {
		t.Errorf("family mix: %+v", fam)
	}
	if fam != nil && (fam.Ours[0] != "0x9x 60%, 0x2x 40% of 1000 updates" || fam.Stock[0] != "0x3x 70%, 0x2x 30% of 1000 updates") {
		t.Errorf("family mix sides: %q | %q", fam.Ours, fam.Stock)
	}
	b := c.diffs["datagram-size S->C"]
	if b == nil || !strings.Contains(b.Summary, "12 messages in a datagram at the 90th percentile (max 40), stock 4 (max 9)") ||
		!strings.Contains(b.Summary, "110") {
		t.Errorf("bundling: %+v", b)
	}
	if len(names) != 1 || !strings.Contains(o[0], "0 of 10 back to the sender (0%)") || !strings.Contains(s[0], "10 of 10 back to the sender (100%)") {
		t.Errorf("relay receivers: %q %q %q", names, o, s)
	}
}
