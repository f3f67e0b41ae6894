package diff

import (
	"sort"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"

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
	// Stock's blocks mostly 0xFF (full health), ours mostly 0x00.
	stock.SubsystemBytes[1] = measure.ByteHistogram{Dir: "S->C", Blocks: 10, Bytes: 100}
	stock.SubsystemBytes[1].Counts[0xFF], stock.SubsystemBytes[1].Counts[0x64] = 80, 20
	ours.SubsystemBytes[1] = measure.ByteHistogram{Dir: "S->C", Blocks: 10, Bytes: 100}
	ours.SubsystemBytes[1].Counts[0x00], ours.SubsystemBytes[1].Counts[0x64] = 80, 20
	x := &context{r: &r, ours: &Capture{Measures: ours}, stock: &Capture{Measures: stock}}
	c := &collector{r: &r, diffs: map[string]*Difference{}}
	x.compareFamilies(c)
	x.compareSubsystemBytes(c)
	x.compareBundling(c)
	names, o, s := x.relayReceivers()
	if len(c.diffs) != 3 {
		t.Fatalf("%d differences, want the S->C family mix, the subsystem bytes and the bundling: %v", len(c.diffs), c.diffs)
	}
	sb := c.diffs["stateupdate subsystem bytes S->C"]
	if sb == nil || sb.Severity != Minor || !strings.Contains(sb.Summary, "80% of them would have to change value") ||
		sb.Ours[0] != "0x00 80%, 0x64 20%, 0x01 0%, 0x02 0% of 100 bytes in 10 blocks" || sb.Stock[0] != "0xFF 80%, 0x64 20%, 0x00 0%, 0x01 0% of 100 bytes in 10 blocks" {
		t.Errorf("subsystem bytes: %+v", sb)
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

// An answer that lacks a message still has the messages both sides carry
// compared field by field: a missing SCORE does not hide a DeletePlayerUI
// aimed at the ship instead of the player list (issue 29: OpenBC's answer to
// NewPlayerInGame), even when DeletePlayerUI is also sent unprompted.
func TestAnswerLackingAMessageStillComparesFields(t *testing.T) {
	r := DefaultRules()
	x := &context{r: &r, ours: &Capture{}, stock: &Capture{},
		background: map[game.Opcode]bool{game.OpDeletePlayerUI: true}, missing: map[game.Opcode]bool{}}
	c := &collector{r: &r, diffs: map[string]*Difference{}}
	ui := func(target game.ObjectID) Msg {
		return Msg{Frame: 1, Type: dissect.TypeData, Reliable: true, Game: &game.DeletePlayerUI{
			Class: game.EventClassDeletePlayer, Code: game.ETNewPlayerInGame, Target: target, Peer: 2}}
	}
	score := Msg{Frame: 1, Type: dissect.TypeData, Reliable: true, Game: &game.Score{}}
	ours := &Step{Key: "new player in game", Phase: PhaseLobby, Answered: true, Reply: []Msg{ui(game.PlayerObjectID(0))}}
	stock := &Step{Key: "new player in game", Phase: PhaseLobby, Answered: true, Reply: []Msg{ui(0x64F), score}}
	x.compareStep(c, 1, ours, stock)
	var kinds []string
	for _, d := range c.diffs {
		kinds = append(kinds, d.Kind+": "+d.Summary)
	}
	sort.Strings(kinds)
	want := []string{
		"field: DeletePlayerUI.target in the answer to NewPlayerInGame: ours 0x3FFFFFFF(slot 0), stock 0x0000064F",
		"reply-content: the answer to NewPlayerInGame differs: ours lacks SCORE",
	}
	if strings.Join(kinds, "\n") != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", strings.Join(kinds, "\n"), strings.Join(want, "\n"))
	}
}
