package replay

import (
	"fmt"
	"strings"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/session/diff"
)

// GameSpyIgnore are the GameSpy reply fields that say how busy a server
// is, not how it speaks the protocol or how it is set up: the player count
// and the reply's query id. RulesComparer tolerates them.
var GameSpyIgnore = []string{"gamespy.numplayers", "gamespy.queryid"}

// ConfigFields are the configuration fields verify sets apart (see
// diff.ConfigFields).
var ConfigFields = diff.ConfigFields

// RulesComparer judges messages under the diff engine's tolerances
// (session/diff Rules: ignored fields such as game time and scores, object
// ids by their offset in the owner's slot block, float tolerance), and
// GameSpy replies field by field with GameSpyIgnore added to the rules'
// ignore list. It is the adaptive verifier's default.
type RulesComparer struct {
	Rules *diff.Rules
	// Config reports whether a field is configuration (diff.IsConfig by
	// default; nil: none is).
	Config func(path string) bool
}

// NewRulesComparer returns a comparer with r's tolerances plus
// GameSpyIgnore.
func NewRulesComparer(r diff.Rules) *RulesComparer {
	r.Ignore = append(append([]string(nil), r.Ignore...), GameSpyIgnore...)
	return &RulesComparer{Rules: &r, Config: diff.IsConfig}
}

// Compare implements Comparer: configuration differences count.
func (c *RulesComparer) Compare(ours, stock game.Message) (bool, string) {
	return c.judgeGame(ours, stock).compared()
}

// judgeGame sets configuration differences apart from the others.
func (c *RulesComparer) judgeGame(ours, stock game.Message) verdict {
	ds := c.Rules.CompareGame(ours, stock)
	var proto []diff.FieldDiff
	var v verdict
	for _, d := range ds {
		if c.isConfig(d.Path) {
			v.config = append(v.config, d.String())
		} else {
			proto = append(proto, d)
		}
	}
	v.ok = len(proto) == 0
	if !v.ok {
		v.detail = fieldText(stock, proto)
	}
	return v
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
// ("gamespy.KEY"); configuration differences count.
func (c *RulesComparer) CompareGameSpy(ours, stock *dissect.GameSpy) (bool, string) {
	return c.judgeGameSpy(ours, stock).compared()
}

func (c *RulesComparer) isConfig(p string) bool { return c.Config != nil && c.Config(p) }

// judgeGameSpy compares two GameSpy replies, configuration apart. The
// player list (player_N, as long as the server has players) is one field,
// "gamespy.players".
func (c *RulesComparer) judgeGameSpy(ours, stock *dissect.GameSpy) verdict {
	if ours.Query != stock.Query || ours.Kind != stock.Kind || ours.Final != stock.Final {
		return verdict{detail: fmt.Sprintf("GameSpy %s, captured %s", ours.Kind, stock.Kind)}
	}
	var diffs []string
	var v verdict
	if ours.QueryID != stock.QueryID && !c.Rules.Ignored("gamespy.queryid") {
		diffs = append(diffs, fmt.Sprintf("queryid %q, captured %q", ours.QueryID, stock.QueryID))
	}
	players := func(fs []dissect.GameSpyField) (rest []dissect.GameSpyField, list []string) {
		for _, f := range fs {
			if strings.HasPrefix(f.Key, "player_") {
				list = append(list, f.Value)
			} else {
				rest = append(rest, f)
			}
		}
		return rest, list
	}
	of, op := players(ours.Fields)
	sf, sp := players(stock.Fields)
	// A configuration field that only one side sends (hostport, which a
	// server off the stock port adds) is a configuration difference.
	of, sf = c.oneSidedConfig(of, sf, &v, "captured none")
	sf, of = c.oneSidedConfig(sf, of, &v, "")
	if strings.Join(op, "\x00") != strings.Join(sp, "\x00") && !c.Rules.Ignored("gamespy.players") {
		d := fmt.Sprintf("players %q, captured %q", op, sp)
		if c.isConfig("gamespy.players") {
			v.config = append(v.config, d)
		} else {
			diffs = append(diffs, d)
		}
	}
	if len(of) != len(sf) {
		diffs = append(diffs, fmt.Sprintf("%d fields, captured %d", len(of), len(sf)))
	} else {
		for i, f := range of {
			s := sf[i]
			switch {
			case f.Key != s.Key:
				diffs = append(diffs, fmt.Sprintf("field %d is %q, captured %q", i+1, f.Key, s.Key))
			case f.Value == s.Value || c.Rules.Ignored("gamespy."+f.Key):
			case c.isConfig("gamespy." + f.Key):
				v.config = append(v.config, fmt.Sprintf("%s %q, captured %q", f.Key, f.Value, s.Value))
			default:
				diffs = append(diffs, fmt.Sprintf("%s %q, captured %q", f.Key, f.Value, s.Value))
			}
		}
	}
	v.ok = len(diffs) == 0
	if !v.ok {
		v.detail = "GameSpy reply differs: " + strings.Join(diffs, "; ")
	}
	return v
}

// oneSidedFields are the GameSpy reply fields that one server may send
// and another not: hostport, sent only off the stock port.
var oneSidedFields = map[string]bool{"hostport": true}

// oneSidedConfig returns a without the configuration fields whose key b
// lacks, each listed in v.config.
func (c *RulesComparer) oneSidedConfig(a, b []dissect.GameSpyField, v *verdict, note string) (rest, bOut []dissect.GameSpyField) {
	has := func(k string) bool {
		for _, f := range b {
			if f.Key == k {
				return true
			}
		}
		return false
	}
	for _, f := range a {
		if !has(f.Key) && oneSidedFields[f.Key] && c.isConfig("gamespy."+f.Key) {
			if note != "" {
				v.config = append(v.config, fmt.Sprintf("%s %q, %s", f.Key, f.Value, note))
			} else {
				v.config = append(v.config, fmt.Sprintf("%s: none, captured %q", f.Key, f.Value))
			}
			continue
		}
		rest = append(rest, f)
	}
	return rest, b
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

// judgeGameSpyBytes is compareGameSpy with configuration differences set
// apart when cmp can (configJudge).
func judgeGameSpyBytes(got, want []byte, cmp Comparer) verdict {
	if j, ok := cmp.(configJudge); ok && string(got) != string(want) {
		g, gerr := dissect.ParseGameSpy(got)
		w, werr := dissect.ParseGameSpy(want)
		if gerr == nil && werr == nil {
			return j.judgeGameSpy(&g, &w)
		}
	}
	ok, detail := compareGameSpy(got, want, cmp)
	return verdict{ok: ok, detail: detail}
}

// verdict is a comparison with configuration differences set apart: ok
// when nothing else differs (detail says what does), config lists every
// configuration difference.
type verdict struct {
	ok     bool
	detail string
	config []string
}

// compared is the verdict as a Comparer gives it: configuration counts.
func (v verdict) compared() (bool, string) {
	if !v.ok {
		return false, v.detail
	}
	if len(v.config) > 0 {
		return false, "configuration differs: " + strings.Join(v.config, "; ")
	}
	return true, ""
}

// status is the step status of a received message paired with a
// captured one that did not match it: different, else config (only
// configuration differs), else equivalent.
func (v verdict) status() (status, detail string, config []string) {
	switch {
	case !v.ok:
		return StatusDifferent, v.detail, v.config
	case len(v.config) > 0:
		return StatusConfig, "configuration differs: " + strings.Join(v.config, "; "), v.config
	}
	return StatusEquivalent, "", nil
}

// configJudge is implemented by comparers that set configuration
// differences apart (RulesComparer).
type configJudge interface {
	judgeGame(ours, stock game.Message) verdict
	judgeGameSpy(ours, stock *dissect.GameSpy) verdict
}
