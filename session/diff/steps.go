package diff

// The join steps of a matched pair of sessions, aligned by the client
// message that drives them and compared answer by answer.

import (
	"fmt"
	"strings"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
)

// run is one or more consecutive messages of the same kind in an answer.
type run struct {
	name string
	msgs []*Msg
}

// runs filters an answer and collapses it into runs.
func (x *context) runs(msgs []Msg, skipObj bool) []run {
	var out []run
	for i := range msgs {
		m := &msgs[i]
		if g := m.Game; g != nil {
			op := g.Opcode()
			if x.background[op] || x.missing[op] {
				continue
			}
			if skipObj && (op == game.OpObjCreate || op == game.OpObjCreateTeam) {
				continue
			}
		}
		name := m.Name()
		if len(out) > 0 && out[len(out)-1].name == name {
			out[len(out)-1].msgs = append(out[len(out)-1].msgs, m)
			continue
		}
		out = append(out, run{name: name, msgs: []*Msg{m}})
	}
	return out
}

// oneAck is rs with every run of ACKs cut to its first.
func oneAck(rs []run) []run {
	out := make([]run, len(rs))
	for i, r := range rs {
		if r.name == "ack" && len(r.msgs) > 1 {
			r.msgs = r.msgs[:1]
		}
		out[i] = r
	}
	return out
}

func runNames(rs []run) string {
	var b strings.Builder
	for i, r := range rs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(r.name)
		if len(r.msgs) > 1 {
			b.WriteString("+")
		}
	}
	return b.String()
}

// bundling writes runs with their datagram boundaries: "+" joins messages in
// one datagram, " | " separates datagrams.
func bundling(rs []run) string {
	var b strings.Builder
	for i, r := range rs {
		if i > 0 {
			if rs[i-1].msgs[len(rs[i-1].msgs)-1].Frame == r.msgs[0].Frame {
				b.WriteString(" + ")
			} else {
				b.WriteString(" | ")
			}
		}
		b.WriteString(r.name)
	}
	return b.String()
}

func lines(msgs []Msg) []string {
	out := make([]string, 0, len(msgs))
	for i := range msgs {
		out = append(out, msgs[i].String())
	}
	if len(out) == 0 {
		out = append(out, "(no answer)")
	}
	return out
}

func frames(msgs []Msg) []int {
	var out []int
	for i := range msgs {
		if n := len(out); n == 0 || out[n-1] != msgs[i].Frame {
			out = append(out, msgs[i].Frame)
		}
	}
	return out
}

func stepFrames(st *Step) []int {
	return append([]int{st.Trigger.Frame}, frames(st.Reply)...)
}

// compareSessions compares the join steps of two sessions that joined at
// the same position.
func (x *context) compareSessions(c *collector, o, s *Session) {
	pos := o.Index + 1
	keys := []string{}
	seen := map[string]bool{}
	for _, st := range append(append([]*Step(nil), s.Steps...), o.Steps...) {
		if !seen[st.Key] {
			seen[st.Key] = true
			keys = append(keys, st.Key)
		}
	}
	for _, k := range keys {
		so, ss := o.Step(k), s.Step(k)
		switch {
		case so == nil:
			x.stepMissing(c, pos, k, ss, s, o, "ours")
		case ss == nil:
			x.stepMissing(c, pos, k, so, o, s, "stock")
		default:
			x.compareStep(c, pos, so, ss)
		}
	}
	if o.Keepalive != nil && s.Keepalive != nil {
		x.compareMsg(c, pos, "keepalive", PhaseHandshake, o.Keepalive, s.Keepalive)
		if po, ps := o.PhaseAt(o.Keepalive.Time), s.PhaseAt(s.Keepalive.Time); po != ps {
			// Both send keepalives: say in which phase one side has none.
			late, n := "ours", o.Keepalives
			if ps > po {
				late, n = "stock", s.Keepalives
			}
			d := Difference{Phase: min(po, ps), Severity: Major, Kind: "keepalive", Key: "keepalive phase " + late,
				Summary: fmt.Sprintf("the %s server sends no keepalive during the %s: its first comes in the %s (%d in the session)",
					late, min(po, ps), max(po, ps), n),
				Ours: []string{o.Keepalive.String()}, Stock: []string{s.Keepalive.String()},
				Frames: Frames{Ours: []int{o.Keepalive.Frame}, Stock: []int{s.Keepalive.Frame}}}
			c.add(d, pos)
		}
	} else if (o.Keepalive == nil) != (s.Keepalive == nil) && o.Disconnect.IsZero() == s.Disconnect.IsZero() {
		d := Difference{Phase: PhaseHandshake, Severity: Major, Kind: "keepalive", Key: "keepalive missing",
			Summary: "one server sends no keepalive (peer-info) to its clients"}
		d.Ours, d.Stock = []string{"none"}, []string{"none"}
		if o.Keepalive != nil {
			d.Ours, d.Frames.Ours = []string{o.Keepalive.String()}, []int{o.Keepalive.Frame}
		} else {
			d.Stock, d.Frames.Stock = []string{s.Keepalive.String()}, []int{s.Keepalive.Frame}
		}
		c.add(d, pos)
	}
}

// stepMissing reports a step one side has and the other lacks; it matters
// only when the lacking session went on long enough to reach it.
func (x *context) stepMissing(c *collector, pos int, key string, st *Step, has, lacks *Session, side string) {
	if (key == "connect" && lacks.LegacyConnect > 0) || (key == "disconnect" && lacks.LegacyDisconnect > 0) {
		return // its connect is legacy-framed, its disconnect type 0x06: the deviation findings say so
	}
	reach := st.Trigger.Time.Sub(has.Start)
	sev := Info
	if lacks.End.Sub(lacks.Start) > reach+time.Duration(x.r.ReplyWindow) && key != "disconnect" {
		sev = Major
	}
	d := Difference{Phase: st.Phase, Severity: sev, Kind: "step-missing", Key: "step missing " + key + " in " + side,
		Summary: fmt.Sprintf("the %s session never sends %q (the other does)", side, key)}
	if side == "ours" {
		d.Ours, d.Stock, d.Frames.Stock = []string{"not seen"}, []string{st.Trigger.String()}, []int{st.Trigger.Frame}
	} else {
		d.Ours, d.Stock, d.Frames.Ours = []string{st.Trigger.String()}, []string{"not seen"}, []int{st.Trigger.Frame}
	}
	c.add(d, pos)
}

func (x *context) compareStep(c *collector, pos int, o, s *Step) {
	what := "the answer to " + describe(o.Key)
	mk := func(kind string, sev Severity, key, summary string) Difference {
		return Difference{Phase: o.Phase, Severity: sev, Kind: kind, Key: kind + " " + o.Key + key, Summary: summary,
			Ours: lines(o.Reply), Stock: lines(s.Reply), Frames: Frames{Ours: stepFrames(o), Stock: stepFrames(s)}}
	}
	if o.Answered != s.Answered {
		side := "ours"
		if !s.Answered {
			side = "stock"
		}
		c.add(mk("reply-content", Critical, "", fmt.Sprintf("%s: %s server does not answer", what, side)), pos)
		return
	}
	skipObj := o.Key == "new player in game"
	ro, rs := x.runs(o.Reply, skipObj), x.runs(s.Reply, skipObj)
	if o.Trigger.Fragment != s.Trigger.Fragment {
		// One client sent its message in fragments, the other whole: the
		// server ACKs each fragment, so only whether it ACKs compares.
		ro, rs = oneAck(ro), oneAck(rs)
	}
	if no, ns := runNames(ro), runNames(rs); no != ns {
		missing, extra := multisetDiff(ro, rs)
		sev := Major
		if o.Phase == PhaseHandshake {
			sev = Critical
		}
		switch {
		case len(missing) > 0 || len(extra) > 0:
			var parts []string
			if len(missing) > 0 {
				parts = append(parts, "ours lacks "+strings.Join(missing, ", "))
			}
			if len(extra) > 0 {
				parts = append(parts, "ours adds "+strings.Join(extra, ", "))
			}
			c.add(mk("reply-content", sev, "", fmt.Sprintf("%s differs: %s", what, strings.Join(parts, "; "))), pos)
			// The messages both answers carry still compare field by
			// field: a missing SCORE must not hide a DeletePlayerUI
			// aimed elsewhere.
			x.compareCommon(c, pos, o, s, skipObj)
		default:
			c.add(mk("reply-order", Major, "", fmt.Sprintf("%s is in another order: ours %s, stock %s", what, no, ns)), pos)
		}
	} else {
		if bo, bs := bundling(ro), bundling(rs); bo != bs {
			c.add(mk("bundling", Major, "", fmt.Sprintf("%s is bundled differently: ours %s, stock %s", what, bo, bs)), pos)
		}
		var flags []string
		for i := range ro {
			mo, ms := ro[i].msgs[0], rs[i].msgs[0]
			if mo.Type != ms.Type || mo.Reliable != ms.Reliable || mo.Ordered != ms.Ordered {
				flags = append(flags, fmt.Sprintf("%s: ours %s, stock %s", ro[i].name, framing(mo), framing(ms)))
			}
			if len(ro[i].msgs) != len(rs[i].msgs) {
				c.add(mk("reply-count", Info, " "+ro[i].name, fmt.Sprintf("%s has %d %s, stock %d (depends on the players present)",
					what, len(ro[i].msgs), ro[i].name, len(rs[i].msgs))), pos)
			}
			x.compareMsg(c, pos, o.Key, o.Phase, mo, ms)
		}
		if len(flags) > 0 {
			c.add(mk("reliability", Major, "", fmt.Sprintf("%s travels with other transport flags: %s", what, strings.Join(flags, "; "))), pos)
		}
	}
	if o.Answered && s.Answered {
		if d := o.Latency - s.Latency; d > time.Duration(x.r.Latency) || -d > time.Duration(x.r.Latency) {
			c.add(mk("latency", Minor, "", fmt.Sprintf("%s comes after %s, stock after %s",
				what, o.Latency.Round(time.Millisecond), s.Latency.Round(time.Millisecond))), pos)
		}
	}
	if skipObj {
		x.compareReplicated(c, pos, o, s)
	}
	if o.Key == "disconnect" {
		x.compareOthers(c, pos, o, s)
	}
}

// compareReplicated compares the first ship each late joiner was sent.
func (x *context) compareReplicated(c *collector, pos int, o, s *Step) {
	first := func(st *Step) *Msg {
		for i := range st.Reply {
			if g := st.Reply[i].Game; g != nil && (g.Opcode() == game.OpObjCreate || g.Opcode() == game.OpObjCreateTeam) {
				return &st.Reply[i]
			}
		}
		return nil
	}
	if mo, ms := first(o), first(s); mo != nil && ms != nil {
		x.compareMsg(c, pos, "replication", PhaseLobby, mo, ms)
	}
}

// compareOthers compares what the other clients were told when a client
// left.
func (x *context) compareOthers(c *collector, pos int, o, s *Step) {
	if o.Receivers == 0 && s.Receivers == 0 {
		return
	}
	ro, rs := x.runs(o.Others, false), x.runs(s.Others, false)
	if no, ns := runNames(ro), runNames(rs); no != ns {
		c.add(Difference{Phase: PhaseDisconnect, Severity: Major, Kind: "broadcast", Key: "broadcast disconnect",
			Summary: fmt.Sprintf("when a client leaves, the others are sent %s; stock sends %s", orText(no), orText(ns)),
			Ours:    lines(o.Others), Stock: lines(s.Others),
			Frames: Frames{Ours: append([]int{o.Trigger.Frame}, frames(o.Others)...), Stock: append([]int{s.Trigger.Frame}, frames(s.Others)...)}}, pos)
		return
	}
	for i := range ro {
		x.compareMsg(c, pos, "disconnect broadcast", PhaseDisconnect, ro[i].msgs[0], rs[i].msgs[0])
	}
}

func orText(s string) string {
	if s == "" {
		return "nothing"
	}
	return s
}

// compareMsg compares two messages of the same kind field by field.
func (x *context) compareMsg(c *collector, pos int, where string, ph Phase, mo, ms *Msg) {
	var fd []FieldDiff
	switch {
	case mo.Game != nil && ms.Game != nil:
		fd = x.r.CompareGame(mo.Game, ms.Game)
	case mo.Control != nil && ms.Control != nil:
		fd = x.r.CompareControl(mo.Control, ms.Control)
	default:
		return
	}
	for _, f := range fd {
		sev, kind, what := Major, "field", ""
		if IsConfig(f.Path) {
			// How the server is set up, not how it speaks: listed, not counted.
			sev, kind, what = Info, "config", "configuration: "
		}
		c.add(Difference{Phase: ph, Severity: sev, Kind: kind, Key: kind + " " + where + " " + f.Path,
			Summary: fmt.Sprintf("%s%s in %s: ours %s, stock %s", what, f.Path, answerTo(where), f.Ours, f.Stock),
			Ours:    []string{mo.String()}, Stock: []string{ms.String()},
			Frames: Frames{Ours: []int{mo.Frame}, Stock: []int{ms.Frame}}}, pos)
	}
	if where == "keepalive" && (mo.Reliable != ms.Reliable || mo.Ordered != ms.Ordered || mo.Type != ms.Type) {
		c.add(Difference{Phase: ph, Severity: Major, Kind: "reliability", Key: "reliability keepalive",
			Summary: fmt.Sprintf("keepalives travel as %s, stock %s", framing(mo), framing(ms)),
			Ours:    []string{mo.String()}, Stock: []string{ms.String()},
			Frames: Frames{Ours: []int{mo.Frame}, Stock: []int{ms.Frame}}}, pos)
	}
}

// answerTo says where a compared message was: in the answer to a step's
// client message, or in one of the other places messages are compared.
func answerTo(where string) string {
	switch where {
	case "keepalive", "replication", "disconnect broadcast":
		return describe(where)
	}
	return "the answer to " + describe(where)
}

func describe(key string) string {
	switch key {
	case "connect":
		return "the connect request"
	case "new player in game":
		return "NewPlayerInGame"
	case "disconnect":
		return "the disconnect"
	case "keepalive", "replication", "disconnect broadcast":
		return key
	}
	if strings.HasPrefix(key, "checksum round ") {
		return "the checksum response of round " + strings.TrimPrefix(key, "checksum round ")
	}
	return key
}

func framing(m *Msg) string {
	s := m.Type.String()
	if m.Reliable {
		s += " reliable"
	} else {
		s += " unreliable"
	}
	if m.Ordered {
		s += " ordered"
	}
	return s
}

func multisetDiff(o, s []run) (missing, extra []string) {
	count := map[string]int{}
	for _, r := range s {
		count[r.name]++
	}
	for _, r := range o {
		count[r.name]--
	}
	for _, r := range s {
		if count[r.name] > 0 {
			missing = append(missing, r.name)
			count[r.name] = 0
		}
	}
	for _, r := range o {
		if count[r.name] < 0 {
			extra = append(extra, r.name)
			count[r.name] = 0
		}
	}
	return missing, extra
}

// compareCommon compares the fields of the messages two answers both carry,
// each of ours with the first unmatched one of the same name in stock's;
// messages sent unprompted too (background) count here, since both sides
// put them in this answer.
func (x *context) compareCommon(c *collector, pos int, o, s *Step, skipObj bool) {
	used := make([]bool, len(s.Reply))
	for i := range o.Reply {
		mo := &o.Reply[i]
		if mo.Type == dissect.TypeAck || skipObj && mo.Game != nil &&
			(mo.Game.Opcode() == game.OpObjCreate || mo.Game.Opcode() == game.OpObjCreateTeam) {
			continue
		}
		for j := range s.Reply {
			if !used[j] && s.Reply[j].Name() == mo.Name() {
				used[j] = true
				x.compareMsg(c, pos, o.Key, o.Phase, mo, &s.Reply[j])
				break
			}
		}
	}
}
