package diff

// Compare: the two captures' models side by side. Sessions are matched by
// join order; the join steps of each matched pair are aligned by the client
// message that drives them; traffic is compared in aggregate, as rates per
// session-minute; findings of the per-side checks become differences when
// only one side shows them.

import (
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/session"
)

// Difference is one way our server behaves differently from stock.
type Difference struct {
	Phase    Phase    `json:"phase"`
	Severity Severity `json:"severity"`
	Kind     string   `json:"kind"`
	Summary  string   `json:"summary"`
	// Ours and Stock show each side: decoded messages (one per line, with
	// their frame numbers) or figures.
	Ours   []string `json:"ours"`
	Stock  []string `json:"stock"`
	Frames Frames   `json:"frames"`
	// Sessions are the join positions (1 = first to join) of the matched
	// sessions it was seen in; empty for differences in aggregate traffic.
	Sessions []int `json:"sessions,omitempty"`
	// Key identifies the difference: the same key in several sessions is
	// one difference.
	Key string `json:"key"`
}

// Frames are packet numbers on each side, for `bcwire decode`.
type Frames struct {
	Ours  []int `json:"ours"`
	Stock []int `json:"stock"`
}

// Result is what Compare found.
type Result struct {
	Differences []*Difference `json:"differences"`
	// Shared are the per-side findings both captures show: the stock
	// server does the same, so they are not differences.
	Shared  []*Finding `json:"shared_findings"`
	Summary Summary    `json:"summary"`
}

// Summary sums a Result up.
type Summary struct {
	Ours          string         `json:"ours"`
	Stock         string         `json:"stock"`
	OursSessions  int            `json:"ours_sessions"`
	StockSessions int            `json:"stock_sessions"`
	Matched       int            `json:"matched_sessions"`
	Differences   int            `json:"differences"`
	BySeverity    map[string]int `json:"by_severity"`
	// Worst is the highest severity found ("none" when nothing differs).
	Worst string `json:"worst"`
}

// MarshalJSON writes the finding for the shared list.
func (f *Finding) MarshalJSON() ([]byte, error) {
	type out struct {
		Phase    Phase    `json:"phase"`
		Severity Severity `json:"severity"`
		Kind     string   `json:"kind"`
		Summary  string   `json:"summary"`
		Detail   []string `json:"detail"`
		Frames   []int    `json:"frames"`
		Count    int      `json:"count"`
	}
	return jsonMarshal(out{f.Phase, f.Severity, f.Kind, f.Summary, f.Detail, f.Frames, f.Count})
}

// Count is the number of differences at or above sev.
func (r *Result) Count(sev Severity) int {
	n := 0
	for _, d := range r.Differences {
		if d.Severity >= sev {
			n++
		}
	}
	return n
}

// Filter keeps the differences at or above sev.
func (r *Result) Filter(sev Severity) {
	kept := r.Differences[:0]
	for _, d := range r.Differences {
		if d.Severity >= sev {
			kept = append(kept, d)
		}
	}
	r.Differences = kept
	r.summarise()
}

type collector struct {
	r     *Rules
	diffs map[string]*Difference
}

func (c *collector) add(d Difference, session int) {
	if sev, ok := c.r.Severity[d.Kind]; ok {
		d.Severity = sev
	}
	g := c.diffs[d.Key]
	if g == nil {
		g = &d
		c.diffs[d.Key] = g
		g.Frames.Ours = capFrames(g.Frames.Ours)
		g.Frames.Stock = capFrames(g.Frames.Stock)
		if session > 0 {
			g.Sessions = []int{session}
		}
		return
	}
	if d.Severity > g.Severity {
		g.Severity = d.Severity
	}
	g.Frames.Ours = capFrames(append(g.Frames.Ours, d.Frames.Ours...))
	g.Frames.Stock = capFrames(append(g.Frames.Stock, d.Frames.Stock...))
	if session > 0 {
		g.Sessions = append(g.Sessions, session)
	}
}

func capFrames(f []int) []int {
	if len(f) > maxFrames {
		return f[:maxFrames]
	}
	return f
}

// context is what the comparison learnt about both sides before looking
// at single steps.
type context struct {
	r          *Rules
	ours       *Capture
	stock      *Capture
	background map[game.Opcode]bool // sent unprompted often enough to land in any answer
	missing    map[game.Opcode]bool // server opcodes one side never sends
}

// Compare compares our capture with the stock one.
func Compare(ours, stock *Capture, r *Rules) *Result {
	c := &collector{r: r, diffs: map[string]*Difference{}}
	x := &context{r: r, ours: ours, stock: stock, background: map[game.Opcode]bool{}, missing: map[game.Opcode]bool{}}
	res := &Result{}
	x.compareFindings(c, res)
	x.comparePresence(c)
	x.findBackground()
	n := len(ours.Sessions)
	if len(stock.Sessions) < n {
		n = len(stock.Sessions)
	}
	for i := 0; i < n; i++ {
		x.compareSessions(c, ours.Sessions[i], stock.Sessions[i])
	}
	x.compareKeepaliveCadence(c)
	x.compareRates(c)
	x.compareStateUpdates(c)
	x.compareRelay(c)
	x.compareRetransmissions(c)
	if len(ours.Sessions) != len(stock.Sessions) {
		c.add(Difference{Phase: PhaseHandshake, Severity: Info, Kind: "sessions", Key: "sessions",
			Summary: fmt.Sprintf("the captures hold %d and %d sessions; the first %d are compared pairwise, all in the rates",
				len(ours.Sessions), len(stock.Sessions), n),
			Ours: []string{fmt.Sprintf("%d sessions", len(ours.Sessions))}, Stock: []string{fmt.Sprintf("%d sessions", len(stock.Sessions))}}, 0)
	}
	for _, d := range c.diffs {
		res.Differences = append(res.Differences, d)
	}
	sort.Slice(res.Differences, func(i, j int) bool {
		a, b := res.Differences[i], res.Differences[j]
		if a.Phase != b.Phase {
			return a.Phase < b.Phase
		}
		if a.Severity != b.Severity {
			return a.Severity > b.Severity
		}
		return a.Key < b.Key
	})
	res.Summary = Summary{Ours: ours.Name, Stock: stock.Name, OursSessions: len(ours.Sessions),
		StockSessions: len(stock.Sessions), Matched: n}
	res.summarise()
	return res
}

func (r *Result) summarise() {
	r.Summary.Differences = len(r.Differences)
	r.Summary.BySeverity = map[string]int{}
	for _, s := range severityNames {
		r.Summary.BySeverity[s] = 0
	}
	r.Summary.Worst = "none"
	worst := -1
	for _, d := range r.Differences {
		r.Summary.BySeverity[d.Severity.String()]++
		if int(d.Severity) > worst {
			worst = int(d.Severity)
			r.Summary.Worst = d.Severity.String()
		}
	}
}

// compareFindings turns findings one side shows into differences.
func (x *context) compareFindings(c *collector, res *Result) {
	stock := map[string]*Finding{}
	for _, f := range x.stock.Findings {
		stock[f.Key] = f
	}
	seen := map[string]bool{}
	for _, f := range x.ours.Findings {
		seen[f.Key] = true
		if s := stock[f.Key]; s != nil {
			res.Shared = append(res.Shared, f)
			continue
		}
		c.add(Difference{Phase: f.Phase, Severity: f.Severity, Kind: f.Kind, Key: "finding " + f.Key,
			Summary: "ours only: " + f.Summary + countText(f),
			Ours:    orNone(f.Detail, "seen"), Stock: []string{"not seen"}, Frames: Frames{Ours: f.Frames}}, 0)
	}
	for _, f := range x.stock.Findings {
		if seen[f.Key] {
			continue
		}
		c.add(Difference{Phase: f.Phase, Severity: Info, Kind: f.Kind, Key: "finding " + f.Key,
			Summary: "stock only: " + f.Summary + countText(f),
			Ours:    []string{"not seen"}, Stock: orNone(f.Detail, "seen"), Frames: Frames{Stock: f.Frames}}, 0)
	}
}

func countText(f *Finding) string {
	return fmt.Sprintf(" (%d times in %d sessions)", f.Count, f.Sessions)
}

func orNone(s []string, none string) []string {
	if len(s) == 0 {
		return []string{none}
	}
	return s
}

// minutes is the length of every session's rate window, summed.
func minutes(c *Capture) float64 {
	m := 0.0
	for _, s := range c.Sessions {
		m += s.RateMinutes()
	}
	return m
}

// lifeMinutes is the length of every session, summed.
func lifeMinutes(c *Capture) float64 {
	m := 0.0
	for _, s := range c.Sessions {
		m += s.End.Sub(s.Start).Minutes()
	}
	return m
}

// comparePresence finds opcodes one server sends and the other never does.
func (x *context) comparePresence(c *collector) {
	mo, ms := lifeMinutes(x.ours), lifeMinutes(x.stock)
	if mo <= 0 || ms <= 0 {
		return
	}
	p := mo / (mo + ms)
	for d := 0; d < 2; d++ {
		for op := 0; op < 256; op++ {
			var a, b, fa, fs int
			var pa, ps Phase
			for _, s := range x.ours.Sessions {
				n, f, ph := sentOrReceived(s, d, op)
				if a == 0 {
					fa, pa = f, ph
				}
				a += n
			}
			for _, s := range x.stock.Sessions {
				n, f, ph := sentOrReceived(s, d, op)
				if b == 0 {
					fs, ps = f, ph
				}
				b += n
			}
			if (a == 0) == (b == 0) || a+b < x.r.MinCount {
				continue
			}
			if binomialP(a, a+b, p) >= x.r.Alpha && !habitual(x.ours, x.stock, d, op) {
				continue
			}
			dir := session.Dirs[d]
			sev, who, verb := Major, "our server", "sends"
			if dir == game.ClientToServer {
				sev, who, verb = Minor, "the clients", "send"
			}
			name := game.Opcode(op).String()
			diff := Difference{Phase: ps, Severity: sev, Kind: "opcode-missing",
				Key:     fmt.Sprintf("opcode %s %s", dir, name),
				Summary: fmt.Sprintf("%s never %s %s (0x%02X) %s; stock: %d times", who, verb, name, op, dir, b),
				Ours:    []string{"0 messages"}, Stock: []string{fmt.Sprintf("%d messages, first in frame %d", b, fs)},
				Frames: Frames{Stock: []int{fs}}}
			if b == 0 {
				diff.Phase = pa
				diff.Kind = "opcode-extra"
				diff.Summary = fmt.Sprintf("%s %s %s (0x%02X) %s, %d times; stock never does", who, verb, name, op, dir, a)
				diff.Ours = []string{fmt.Sprintf("%d messages, first in frame %d", a, fa)}
				diff.Stock = []string{"0 messages"}
				diff.Frames = Frames{Ours: []int{fa}}
			}
			if dir == game.ServerToClient {
				x.missing[game.Opcode(op)] = true
			}
			c.add(diff, 0)
		}
	}
}

// habitual reports whether op is part of the server's answer to join
// steps in at least half of one side's sessions (and two or more) while
// the other side, with two or more sessions, never sends it: a message
// sent once per join or leave is missed whatever the counts say.
func habitual(ours, stock *Capture, d, op int) bool {
	if session.Dirs[d] != game.ServerToClient {
		return false
	}
	in := func(c *Capture) (answered, sent int) {
		for _, s := range c.Sessions {
			if s.Sent[op] > 0 {
				sent++
			}
			if answers(s, game.Opcode(op)) {
				answered++
			}
		}
		return answered, sent
	}
	ao, so := in(ours)
	as, ss := in(stock)
	switch {
	case so == 0:
		return as >= 2 && 2*as >= len(stock.Sessions) && len(ours.Sessions) >= 2
	case ss == 0:
		return ao >= 2 && 2*ao >= len(ours.Sessions) && len(stock.Sessions) >= 2
	}
	return false
}

// answers reports whether op is in one of s's step answers.
func answers(s *Session, op game.Opcode) bool {
	for _, st := range s.Steps {
		for _, list := range [][]Msg{st.Reply, st.Others} {
			for i := range list {
				if g := list[i].Game; g != nil && g.Opcode() == op {
					return true
				}
			}
		}
	}
	return false
}

func sentOrReceived(s *Session, d, op int) (n, frame int, ph Phase) {
	if session.Dirs[d] == game.ServerToClient {
		return s.Sent[op], s.SentFrame[op], s.SentPhase[op]
	}
	return s.Received[op], s.ReceivedFrame[op], s.ReceivedPhase[op]
}

// findBackground marks the server opcodes that arrive unprompted often
// enough (on either side) to fall into an answer by chance.
func (x *context) findBackground() {
	for _, c := range []*Capture{x.ours, x.stock} {
		m := lifeMinutes(c)
		if m <= 0 {
			continue
		}
		var n [256]int
		for _, s := range c.Sessions {
			for op, k := range s.Unsolicited {
				n[op] += k
			}
		}
		for op, k := range n {
			if float64(k)/m >= backgroundPerMinute {
				x.background[game.Opcode(op)] = true
			}
		}
	}
}

// backgroundPerMinute is the rate of unprompted messages per session-minute
// from which an opcode counts as background.
const backgroundPerMinute = 0.5

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
		c.add(Difference{Phase: ph, Severity: Major, Kind: "field", Key: "field " + where + " " + f.Path,
			Summary: fmt.Sprintf("%s in %s: ours %s, stock %s", f.Path, answerTo(where), f.Ours, f.Stock),
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

// compareKeepaliveCadence compares the server's keepalive spacing.
func (x *context) compareKeepaliveCadence(c *collector) {
	mean := func(cp *Capture) (time.Duration, int) {
		var sum time.Duration
		n := 0
		for _, s := range cp.Sessions {
			if s.Info != nil && s.Info.Keepalive.Server.Count >= 3 {
				sum += s.Info.Keepalive.Server.Mean
				n++
			}
		}
		if n == 0 {
			return 0, 0
		}
		return sum / time.Duration(n), n
	}
	mo, no := mean(x.ours)
	ms, ns := mean(x.stock)
	if no == 0 || ns == 0 {
		return
	}
	ratio := float64(mo) / float64(ms)
	if ratio > x.r.KeepaliveRatio || ratio < 1/x.r.KeepaliveRatio {
		c.add(Difference{Phase: PhaseGameplay, Severity: Minor, Kind: "keepalive-cadence", Key: "keepalive cadence",
			Summary: fmt.Sprintf("the server sends a keepalive every %s, stock every %s", mo.Round(time.Millisecond), ms.Round(time.Millisecond)),
			Ours:    []string{fmt.Sprintf("every %s (mean of %d sessions)", mo.Round(time.Millisecond), no)},
			Stock:   []string{fmt.Sprintf("every %s (mean of %d sessions)", ms.Round(time.Millisecond), ns)}}, 0)
	}
}

// compareRates compares per-opcode rates in the game. Client messages are
// counted per session-minute. The server's own messages are counted per
// client game message on the server (StateUpdates aside): most of them
// answer what players do, so their rate per minute grows with the players
// and what they do, and this measure does not.
func (x *context) compareRates(c *collector) {
	ta, tb := minutes(x.ours), minutes(x.stock)
	aa, ab := activity(x.ours), activity(x.stock)
	for d := 0; d < 2; d++ {
		dir := session.Dirs[d]
		ea, eb, unit, scale := ta, tb, "per session-minute", 1.0
		if dir == game.ServerToClient {
			ea, eb, unit, scale = float64(aa), float64(ab), "per 100 client game messages", 100
		}
		if ea <= 0 || eb <= 0 {
			continue
		}
		for op := 0; op < 256; op++ {
			if game.Opcode(op) == game.OpStateUpdate || (dir == game.ServerToClient && x.missing[game.Opcode(op)]) {
				continue
			}
			a, b := 0, 0
			for _, s := range x.ours.Sessions {
				a += s.Opcodes[d][op]
			}
			for _, s := range x.stock.Sessions {
				b += s.Opcodes[d][op]
			}
			x.rate(c, fmt.Sprintf("%s %s", dir, game.Opcode(op)), a, b, ea, eb, unit, scale, dir == game.ServerToClient)
		}
	}
}

func activity(c *Capture) int {
	n := 0
	for _, s := range c.Sessions {
		n += s.Activity
	}
	return n
}

// rate adds a difference when two counts over two exposures differ by more
// than the ratio allows and by more than chance explains.
func (x *context) rate(c *collector, what string, a, b int, ea, eb float64, unit string, scale float64, server bool) {
	if a == 0 && b == 0 {
		return
	}
	ra, rb := float64(a)/ea, float64(b)/eb
	ratio := math.Inf(1)
	if rb > 0 {
		ratio = ra / rb
	}
	if ratio <= x.r.RateRatio && ratio >= 1/x.r.RateRatio {
		return
	}
	if binomialP(a, a+b, ea/(ea+eb)) >= x.r.Alpha {
		return
	}
	sev := Minor
	if server && (ratio >= x.r.RateRatio*x.r.RateRatio || ratio <= 1/(x.r.RateRatio*x.r.RateRatio)) {
		sev = Major
	}
	c.add(Difference{Phase: PhaseGameplay, Severity: sev, Kind: "rate", Key: "rate " + what,
		Summary: fmt.Sprintf("%s: %.2f %s, stock %.2f (ratio %s)", what, scale*ra, unit, scale*rb, ratioText(ratio)),
		Ours:    []string{fmt.Sprintf("%d messages, %.2f %s", a, scale*ra, unit)},
		Stock:   []string{fmt.Sprintf("%d messages, %.2f %s", b, scale*rb, unit)}}, 0)
}

func ratioText(r float64) string {
	if math.IsInf(r, 1) {
		return "stock none"
	}
	return fmt.Sprintf("%.2f", r)
}

// compareStateUpdates compares StateUpdate rates per ship and the flags
// each direction uses.
func (x *context) compareStateUpdates(c *collector) {
	perShip := func(cp *Capture, dir string) (float64, int) {
		sum, n := 0.0, 0
		for _, s := range cp.Sessions {
			if s.Info == nil {
				continue
			}
			for _, r := range s.Info.StateUpdates {
				if r.Dir == dir && r.Count >= 20 {
					sum += r.PerSecond
					n++
				}
			}
		}
		if n == 0 {
			return 0, 0
		}
		return sum / float64(n), n
	}
	for d := 0; d < 2; d++ {
		dir := session.Dirs[d]
		ro, no := perShip(x.ours, dir.String())
		rs, ns := perShip(x.stock, dir.String())
		if no > 0 && ns > 0 {
			ratio := ro / rs
			if ratio > x.r.RateRatio || ratio < 1/x.r.RateRatio {
				sev := Major
				if dir == game.ClientToServer {
					sev = Minor
				}
				c.add(Difference{Phase: PhaseGameplay, Severity: sev, Kind: "stateupdate-rate", Key: "stateupdate rate " + dir.String(),
					Summary: fmt.Sprintf("StateUpdates %s: %.1f per ship per second, stock %.1f (ratio %.2f)", dir, ro, rs, ratio),
					Ours:    []string{fmt.Sprintf("%.2f/s per ship (%d ships)", ro, no)},
					Stock:   []string{fmt.Sprintf("%.2f/s per ship (%d ships)", rs, ns)}}, 0)
			}
		}
	}
	for d := range StateStreams {
		var uo, us int
		var fo, fs [8]int
		var frO, frS [8]int
		for _, s := range x.ours.Sessions {
			uo += s.StateUpdates[d]
			for b := 0; b < 8; b++ {
				if fo[b] == 0 {
					frO[b] = s.FlagFrame[d][b]
				}
				fo[b] += s.StateFlags[d][b]
			}
		}
		for _, s := range x.stock.Sessions {
			us += s.StateUpdates[d]
			for b := 0; b < 8; b++ {
				if fs[b] == 0 {
					frS[b] = s.FlagFrame[d][b]
				}
				fs[b] += s.StateFlags[d][b]
			}
		}
		if uo < x.r.MinCount || us < x.r.MinCount {
			continue
		}
		for b := 0; b < 8; b++ {
			so, ss := float64(fo[b])/float64(uo), float64(fs[b])/float64(us)
			if math.Abs(so-ss) <= x.r.FlagShare {
				continue
			}
			flag := game.StateFlags(1 << b)
			c.add(Difference{Phase: PhaseGameplay, Severity: Major, Kind: "stateupdate-flags",
				Key:     fmt.Sprintf("stateupdate flags %s 0x%02X", StateStreams[d], uint8(flag)),
				Summary: fmt.Sprintf("StateUpdates %s carry flag 0x%02X (%s) in %.0f%% of updates, stock in %.0f%%", StateStreams[d], uint8(flag), flag, 100*so, 100*ss),
				Ours:    []string{fmt.Sprintf("%d of %d updates", fo[b], uo)}, Stock: []string{fmt.Sprintf("%d of %d updates", fs[b], us)},
				Frames: Frames{Ours: nonZero(frO[b]), Stock: nonZero(frS[b])}}, 0)
		}
	}
}

func nonZero(f int) []int {
	if f == 0 {
		return nil
	}
	return []int{f}
}

// compareRelay compares which client messages the server forwards to the
// other clients, per opcode.
func (x *context) compareRelay(c *collector) {
	sum := func(cp *Capture) (t [256]RelayTally) {
		for _, s := range cp.Sessions {
			for op := range s.Relay {
				r := s.Relay[op]
				t[op].Messages += r.Messages
				t[op].Relayed += r.Relayed
				t[op].Copies += r.Copies
				t[op].Expected += r.Expected
			}
		}
		return t
	}
	to, ts := sum(x.ours), sum(x.stock)
	var ours, stock, names []string
	for op := 0; op < 256; op++ {
		a, b := to[op], ts[op]
		if a.Messages < x.r.MinCount || b.Messages < x.r.MinCount {
			continue
		}
		sa, sb := float64(a.Relayed)/float64(a.Messages), float64(b.Relayed)/float64(b.Messages)
		fa, fb := share(a.Copies, a.Expected), share(b.Copies, b.Expected)
		if math.Abs(sa-sb) <= x.r.RelayShare && math.Abs(fa-fb) <= x.r.RelayShare {
			continue
		}
		name := game.Opcode(op).String()
		names = append(names, name)
		ours = append(ours, fmt.Sprintf("%s: %d of %d relayed (%.0f%%), %.0f%% of the copies due", name, a.Relayed, a.Messages, 100*sa, 100*fa))
		stock = append(stock, fmt.Sprintf("%s: %d of %d relayed (%.0f%%), %.0f%% of the copies due", name, b.Relayed, b.Messages, 100*sb, 100*fb))
	}
	if len(names) == 0 {
		return
	}
	c.add(Difference{Phase: PhaseGameplay, Severity: Major, Kind: "relay", Key: "relay",
		Summary: fmt.Sprintf("the server forwards clients' game messages to the other clients differently from stock: %s", strings.Join(names, ", ")),
		Ours:    ours, Stock: stock}, 0)
}

func share(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// compareRetransmissions compares how often reliable messages are sent
// again, per direction.
func (x *context) compareRetransmissions(c *collector) {
	for d := 0; d < 2; d++ {
		var ra, na, rb, nb int
		for _, s := range x.ours.Sessions {
			if s.Info != nil {
				t := channels(s.Info, d).Total()
				ra += t.Retransmissions
				na += t.Reliable
			}
		}
		for _, s := range x.stock.Sessions {
			if s.Info != nil {
				t := channels(s.Info, d).Total()
				rb += t.Retransmissions
				nb += t.Reliable
			}
		}
		if na == 0 || nb == 0 || ra+rb == 0 {
			continue
		}
		pa, pb := float64(ra)/float64(na), float64(rb)/float64(nb)
		ratio := math.Inf(1)
		if pb > 0 {
			ratio = pa / pb
		}
		if ratio <= x.r.RateRatio && ratio >= 1/x.r.RateRatio {
			continue
		}
		// Retransmissions among all copies: same test as the rates, with
		// the reliable message counts as exposure.
		if binomialP(ra, ra+rb, float64(na)/float64(na+nb)) >= x.r.Alpha {
			continue
		}
		dir := session.Dirs[d]
		c.add(Difference{Phase: PhaseGameplay, Severity: Minor, Kind: "retransmissions", Key: "retransmissions " + dir.String(),
			Summary: fmt.Sprintf("%s reliable messages are sent again %.1f%% of the time, stock %.1f%%", dir, 100*pa, 100*pb),
			Ours:    []string{fmt.Sprintf("%d retransmissions of %d reliable messages", ra, na)},
			Stock:   []string{fmt.Sprintf("%d retransmissions of %d reliable messages", rb, nb)}}, 0)
	}
}

func channels(s *session.Session, d int) *session.Channels {
	if d == 0 {
		return &s.Reliability.ClientToServer
	}
	return &s.Reliability.ServerToClient
}

// binomialP is the two-sided probability of a split at least as uneven as
// k of n when each event falls on the first side with probability p: the
// chance that two equal rates give counts this far apart.
func binomialP(k, n int, p float64) float64 {
	if n == 0 || p <= 0 || p >= 1 {
		return 1
	}
	if n > 2000 { // normal approximation, with continuity correction
		mean, sd := float64(n)*p, math.Sqrt(float64(n)*p*(1-p))
		z := (math.Abs(float64(k)-mean) - 0.5) / sd
		if z < 0 {
			return 1
		}
		return math.Erfc(z / math.Sqrt2)
	}
	// Sum the probabilities of every outcome no more likely than k's.
	pk := binomPMF(k, n, p)
	total := 0.0
	for i := 0; i <= n; i++ {
		if q := binomPMF(i, n, p); q <= pk*(1+1e-9) {
			total += q
		}
	}
	return math.Min(total, 1)
}

func binomPMF(k, n int, p float64) float64 {
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	return math.Exp(lg(n) - lg(k) - lg(n-k) + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
}
