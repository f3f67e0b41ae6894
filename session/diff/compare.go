package diff

// Compare: the two captures' models side by side. Sessions are matched by
// join order; the join steps of each matched pair are aligned by the client
// message that drives them; traffic is compared in aggregate, as rates per
// session-minute; findings of the per-side checks become differences when
// only one side shows them.

import (
	"fmt"
	"sort"

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
	x.compareBundling(c)
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
	res.sort()
	res.Summary = Summary{Ours: ours.Name, Stock: stock.Name, OursSessions: len(ours.Sessions),
		StockSessions: len(stock.Sessions), Matched: n}
	res.summarise()
	return res
}

// Add puts differences found elsewhere (a live run's: no answer, a
// failed join) among the rest, in the same order, and sums up again.
func (r *Result) Add(ds ...*Difference) {
	r.Differences = append(r.Differences, ds...)
	r.sort()
	r.summarise()
}

// Drop removes the differences of the given kinds and reports how many
// went.
func (r *Result) Drop(kinds ...string) int {
	kept := r.Differences[:0]
	n := 0
	for _, d := range r.Differences {
		drop := false
		for _, k := range kinds {
			drop = drop || d.Kind == k
		}
		if drop {
			n++
			continue
		}
		kept = append(kept, d)
	}
	r.Differences = kept
	r.summarise()
	return n
}

// sort orders the differences by phase, most severe first, then by key.
func (r *Result) sort() {
	sort.Slice(r.Differences, func(i, j int) bool {
		a, b := r.Differences[i], r.Differences[j]
		if a.Phase != b.Phase {
			return a.Phase < b.Phase
		}
		if a.Severity != b.Severity {
			return a.Severity > b.Severity
		}
		return a.Key < b.Key
	})
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
