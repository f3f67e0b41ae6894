package replay

import (
	"fmt"
	"strings"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/session/diff"
)

// GameSpyIgnore are the GameSpy reply fields that say how a server is
// configured or how busy it is, not how it speaks the protocol: its name
// (with the '*' a password adds), the mission and map shown, player counts
// and names, the game mode (settings or openplaying, depending on whether a
// game is running when the query comes) and the reply's query id.
// RulesComparer tolerates them; every other key, and the order of the keys,
// must agree. The time and frag limits and the star system are compared:
// they are the match settings that MISSION_INIT carries too, and the
// default rules compare those there, so a server set up for a different
// match is reported either way.
var GameSpyIgnore = []string{
	"gamespy.hostname", "gamespy.missionscript", "gamespy.mapname",
	"gamespy.numplayers", "gamespy.maxplayers", "gamespy.gamemode",
	"gamespy.player_*", "gamespy.queryid",
}

// RulesComparer judges messages under the diff engine's tolerances
// (session/diff Rules: ignored fields such as game time and scores, object
// ids by their offset in the owner's slot block, float tolerance), and
// GameSpy replies field by field with GameSpyIgnore added to the rules'
// ignore list. It is the adaptive verifier's default.
type RulesComparer struct {
	Rules *diff.Rules
}

// NewRulesComparer returns a comparer with r's tolerances plus
// GameSpyIgnore.
func NewRulesComparer(r diff.Rules) *RulesComparer {
	r.Ignore = append(append([]string(nil), r.Ignore...), GameSpyIgnore...)
	return &RulesComparer{Rules: &r}
}

// Compare implements Comparer.
func (c *RulesComparer) Compare(ours, stock game.Message) (bool, string) {
	ds := c.Rules.CompareGame(ours, stock)
	if len(ds) == 0 {
		return true, ""
	}
	return false, fieldText(stock, ds)
}

func fieldText(stock game.Message, ds []diff.FieldDiff) string {
	var parts []string
	for i, d := range ds {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(ds)-3))
			break
		}
		parts = append(parts, d.String())
	}
	name := "message"
	if stock != nil {
		name = stock.Opcode().String()
	}
	return fmt.Sprintf("%s fields differ: %s", name, strings.Join(parts, "; "))
}

// CompareGameSpy implements GameSpyComparer: the same keys in the same
// order, and the same values except where the rules ignore the field
// ("gamespy.KEY").
func (c *RulesComparer) CompareGameSpy(ours, stock *dissect.GameSpy) (bool, string) {
	if ours.Query != stock.Query || ours.Kind != stock.Kind || ours.Final != stock.Final {
		return false, fmt.Sprintf("GameSpy %s, captured %s", ours.Kind, stock.Kind)
	}
	var diffs []string
	if ours.QueryID != stock.QueryID && !c.Rules.Ignored("gamespy.queryid") {
		diffs = append(diffs, fmt.Sprintf("queryid %q, captured %q", ours.QueryID, stock.QueryID))
	}
	// Player lists (player_N) run as long as the server has players.
	listed := func(fs []dissect.GameSpyField) []dissect.GameSpyField {
		var out []dissect.GameSpyField
		for _, f := range fs {
			if !strings.HasPrefix(f.Key, "player_") || !c.Rules.Ignored("gamespy."+f.Key) {
				out = append(out, f)
			}
		}
		return out
	}
	og, sg := *ours, *stock
	og.Fields, sg.Fields = listed(ours.Fields), listed(stock.Fields)
	ours, stock = &og, &sg
	if len(ours.Fields) != len(stock.Fields) {
		diffs = append(diffs, fmt.Sprintf("%d fields, captured %d", len(ours.Fields), len(stock.Fields)))
	} else {
		for i, f := range ours.Fields {
			s := stock.Fields[i]
			switch {
			case f.Key != s.Key:
				diffs = append(diffs, fmt.Sprintf("field %d is %q, captured %q", i+1, f.Key, s.Key))
			case f.Value != s.Value && !c.Rules.Ignored("gamespy."+f.Key):
				diffs = append(diffs, fmt.Sprintf("%s %q, captured %q", f.Key, f.Value, s.Value))
			}
		}
	}
	if len(diffs) == 0 {
		return true, ""
	}
	return false, "GameSpy reply differs: " + strings.Join(diffs, "; ")
}

// GameSpyComparer is implemented by a Comparer that can also judge two
// GameSpy datagrams; without it GameSpy datagrams must be byte-identical.
type GameSpyComparer interface {
	CompareGameSpy(ours, stock *dissect.GameSpy) (equivalent bool, detail string)
}

// compareGameSpy compares two GameSpy datagrams in clear under cmp.
func compareGameSpy(got, want []byte, cmp Comparer) (bool, string) {
	if string(got) == string(want) {
		return true, ""
	}
	gc, ok := cmp.(GameSpyComparer)
	if !ok {
		return false, "GameSpy datagrams differ"
	}
	g, gerr := dissect.ParseGameSpy(got)
	w, werr := dissect.ParseGameSpy(want)
	if gerr != nil || werr != nil {
		return false, "GameSpy datagrams differ (undecodable)"
	}
	return gc.CompareGameSpy(&g, &w)
}
