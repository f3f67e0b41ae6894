package report

// Chart 1: the sessions as a Gantt chart.

import (
	"fmt"
	"html/template"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/bcwire/bcwire/session"
)

// ---- chart 1: session timelines ----

// markerKinds are the events drawn on the Gantt chart, with their shape and
// color.
var markerKinds = []struct {
	kind, label, shape, color string
}{
	{session.EventKill, "kill", "diamond", "#c0392b"},
	{session.EventShipDestroyed, "ship lost", "cross", "#222"},
	{session.EventShipCreated, "ship created", "up", "#4e79a7"},
	{"chat", "chat", "circle", "#8e44ad"},
	{session.EventRetransmitBurst, "retransmit burst", "down", "#e67e22"},
	{session.EventChecksumFail, "checksum fail, damage", "square", "#ff0000"},
	{session.EventDamaged, "", "square", "#ff0000"},
	{session.EventBoot, "boot", "square", "#7f0000"},
	{session.EventEndGame, "end/restart game", "bar", "#555"},
	{session.EventRestartGame, "", "bar", "#555"},
}

func markerOf(kind string) (shape, color string, ok bool) {
	for _, m := range markerKinds {
		if m.kind == kind {
			return m.shape, m.color, true
		}
	}
	return "", "", false
}

func (b *svg) marker(x, y float64, shape, color, title string) {
	var d string
	switch shape {
	case "diamond":
		d = fmt.Sprintf("M%s %sl5 5l-5 5l-5 -5z", num(x), num(y-5))
	case "cross":
		d = fmt.Sprintf("M%s %sl8 8m0 -8l-8 8", num(x-4), num(y-4))
		fmt.Fprintf(&b.sb, `<path d="%s" fill="none" stroke="%s" stroke-width="2.2">`, d, color)
		b.title(title)
		b.sb.WriteString("</path>")
		return
	case "up":
		d = fmt.Sprintf("M%s %sl5 9h-10z", num(x), num(y-5))
	case "down":
		d = fmt.Sprintf("M%s %sl-5 -9h10z", num(x), num(y+4))
	case "square":
		d = fmt.Sprintf("M%s %sh8v8h-8z", num(x-4), num(y-4))
	case "bar":
		d = fmt.Sprintf("M%s %sh3v12h-3z", num(x-1.5), num(y-6))
	default: // circle
		fmt.Fprintf(&b.sb, `<circle cx="%s" cy="%s" r="4.5" fill="%s" stroke="#fff" stroke-width="1">`, num(x), num(y), color)
		b.title(title)
		b.sb.WriteString("</circle>")
		return
	}
	b.path(d, color, "#fff", title)
}

// phaseSpan is the time a session spent in one phase.
type phaseSpan struct {
	from, to time.Time
	phase    session.Phase
}

// phaseSpans splits a session into the phases it went through.
func phaseSpans(s *session.Session) []phaseSpan {
	type mark struct {
		t *time.Time
		p session.Phase
	}
	first := session.PhaseConnecting
	if s.MidCapture {
		first = session.PhaseUnknown
	}
	var checksum *time.Time
	if len(s.Checksums) > 0 && s.Checksums[0].Request != nil {
		checksum = s.Checksums[0].Request
	}
	lobby := s.Phases.Lobby
	if s.Phases.ChecksumDone != nil {
		lobby = s.Phases.ChecksumDone
	}
	marks := []mark{{&s.Start, first}, {checksum, session.PhaseChecksum}, {lobby, session.PhaseLobby},
		{s.Phases.InGame, session.PhaseInGame}}
	end := sessionEnd(s)
	var out []phaseSpan
	for i, m := range marks {
		if m.t == nil {
			continue
		}
		to := end
		for _, n := range marks[i+1:] {
			if n.t != nil {
				to = *n.t
				break
			}
		}
		if to.Before(*m.t) {
			continue
		}
		out = append(out, phaseSpan{*m.t, to, m.p})
	}
	return out
}

// ganttPage is how many sessions one Gantt chart shows. More than that
// would make rows of a few pixels' bars under an axis scrolled out of
// sight: they are drawn as an overview packed into lanes, then in pages of
// ganttPage sessions, each page with its own time axis.
const ganttPage = 25

// gantt draws the sessions kept: one chart when they fit, else the
// overview and the pages, the first one open.
func (h *HTMLReport) gantt(ax timeAxis) template.HTML {
	const label = "Session timelines"
	if len(h.sessions) == 0 {
		return emptyChart(label, "no sessions in the capture")
	}
	if len(h.sessions) <= ganttPage && h.dropped == 0 {
		return h.sessionChart(label, h.sessions, ax)
	}
	var b strings.Builder
	total := len(h.sessions) + h.dropped
	fmt.Fprintf(&b, `<p class="desc gantt-note">%d sessions: the overview packs them into lanes (a lane holds sessions that do not overlap in time; hover a bar for its player); below, %d sessions a page in start order, each page with its own time axis.`, total, ganttPage)
	if h.dropped > 0 || h.overviewLost > 0 {
		fmt.Fprintf(&b, ` The pages hold the first %d sessions; the other %d are drawn in the overview only`, len(h.sessions), h.dropped)
		if h.overviewLost > 0 {
			fmt.Fprintf(&b, `, and %d after the first %d are not drawn at all (the totals count them)`, h.overviewLost, maxOverview)
		}
		b.WriteString(".")
	}
	b.WriteString("</p>\n")
	b.WriteString(string(h.overviewSVG(ax)))
	for i := 0; i < len(h.sessions); i += ganttPage {
		page := h.sessions[i:min(i+ganttPage, len(h.sessions))]
		start, end := page[0].s.Start, sessionEnd(page[0].s)
		for _, hs := range page {
			if hs.s.Start.Before(start) {
				start = hs.s.Start
			}
			if e := sessionEnd(hs.s); e.After(end) {
				end = e
			}
		}
		open := ""
		if i == 0 {
			open = " open"
		}
		fmt.Fprintf(&b, "<details class=\"gpage\"%s><summary>Sessions %d–%d of %d · %s – %s</summary>\n", open,
			i+1, i+len(page), total, start.UTC().Format("15:04:05"), end.UTC().Format("15:04:05 UTC"))
		b.WriteString(string(h.sessionChart(fmt.Sprintf("%s %d–%d", label, i+1, i+len(page)), page, newTimeAxis(start, end))))
		b.WriteString("</details>\n")
	}
	return template.HTML(b.String())
}

// maxOverview caps the sessions the overview keeps (their spans only).
const maxOverview = 20000

// overviewSpan is what the overview draws of a session.
type overviewSpan struct {
	name       string
	start, end time.Time
	phases     []phaseSpan
}

// keepOverview notes a finished session for the overview.
func (h *HTMLReport) keepOverview(s *session.Session) {
	if len(h.overview) >= maxOverview {
		h.overviewLost++
		return
	}
	h.overview = append(h.overview, overviewSpan{name: sessionLabel(s), start: s.Start, end: sessionEnd(s), phases: phaseSpans(s)})
}

// overviewSVG draws every session (up to maxOverview) on the whole
// capture's axis, packed into lanes: each session goes to the first lane
// free at its start, so there are as many lanes as sessions at once.
func (h *HTMLReport) overviewSVG(ax timeAxis) template.HTML {
	spans := h.overview
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].start.Before(spans[j].start) })
	var laneEnd []time.Time
	lane := make([]int, len(spans))
	for i, sp := range spans {
		lane[i] = -1
		for l, e := range laneEnd {
			if !e.After(sp.start) {
				lane[i] = l
				break
			}
		}
		if lane[i] < 0 {
			lane[i] = len(laneEnd)
			laneEnd = append(laneEnd, time.Time{})
		}
		laneEnd[lane[i]] = sp.end
	}
	const top, rowH = 52.0, 22.0
	bottom := top + rowH*float64(len(laneEnd))
	b := newSVG(chartW, bottom+52, fmt.Sprintf("Overview of %d sessions in %d lanes", len(spans), len(laneEnd)))
	b.text(plotLeft, 16, "legend", fmt.Sprintf("Overview: %d sessions in %d lanes", len(spans), len(laneEnd)))
	for l := range laneEnd {
		if l%2 == 1 {
			b.rect(8, top+float64(l)*rowH, chartW-16, rowH, "#f4f5f7", "")
		}
		b.text(plotLeft-10, top+float64(l)*rowH+rowH/2+4, "row-label end", fmt.Sprintf("lane %d", l+1))
	}
	ax.drawTop(b, top)
	ax.draw(b, top, bottom)
	for i, sp := range spans {
		y := top + float64(lane[i])*rowH + 5
		title := fmt.Sprintf("%s: %s – %s (%s)", sp.name, clock(sp.start), clock(sp.end), humanDur(sp.end.Sub(sp.start)))
		for _, ph := range sp.phases {
			x0, x1 := ax.x(ph.from), ax.x(ph.to)
			b.rect(x0, y, math.Max(x1-x0, 1.5), rowH-10, phaseColor[ph.phase], title)
		}
	}
	return b.html()
}

// sessionChart draws one row per session, with the time axis above and
// below the rows.
func (h *HTMLReport) sessionChart(label string, sessions []htmlSession, ax timeAxis) template.HTML {
	const top, rowH = 62.0, 34.0
	bottom := top + rowH*float64(len(sessions))
	b := newSVG(chartW, bottom+52, label)
	var items [][2]string
	for _, p := range []session.Phase{session.PhaseUnknown, session.PhaseConnecting, session.PhaseChecksum, session.PhaseLobby, session.PhaseInGame} {
		items = append(items, [2]string{phaseLabel[p], phaseColor[p]})
	}
	b.legend(plotLeft, 16, items)
	x := plotLeft
	for _, m := range markerKinds {
		if m.label == "" {
			continue
		}
		b.marker(x+5, 36, m.shape, m.color, "")
		b.text(x+15, 40, "legend", m.label)
		x += 15 + textWidth(m.label) + 18
	}
	for i := range sessions {
		if i%2 == 1 {
			b.rect(8, top+float64(i)*rowH, chartW-16, rowH, "#f4f5f7", "")
		}
	}
	ax.drawTop(b, top)
	ax.draw(b, top, bottom)
	for i, hs := range sessions {
		s := hs.s
		y := top + float64(i)*rowH
		name := sessionLabel(s)
		b.text(plotLeft-10, y+rowH/2+4, "row-label end", clip(name, 24))
		barY := y + 15
		for _, sp := range phaseSpans(s) {
			x0, x1 := ax.x(sp.from), ax.x(sp.to)
			title := fmt.Sprintf("%s: %s %s – %s (%s)", name, phaseLabel[sp.phase], sp.from.UTC().Format("15:04:05.000"),
				sp.to.UTC().Format("15:04:05.000"), humanDur(sp.to.Sub(sp.from)))
			b.rect(x0, barY, math.Max(x1-x0, 2), 14, phaseColor[sp.phase], title)
		}
		endX := ax.x(sessionEnd(s))
		if s.EndReason != session.EndOpen {
			b.coloredLine(endX, barY-2, endX, barY+16, "#333", 1.5)
		}
		for _, e := range s.Events {
			if shape, color, ok := markerOf(e.Kind); ok {
				b.marker(ax.x(e.Time), y+8, shape, color, fmt.Sprintf("%s  %s  (frame %d)", e.Time.UTC().Format("15:04:05.000"), e.Text, e.Frame))
			}
		}
		for _, c := range s.Chat {
			who := chatRow{line: c}.Sender()
			b.marker(ax.x(c.Time), y+8, "circle", "#8e44ad", fmt.Sprintf("%s  %s: %s", c.Time.UTC().Format("15:04:05.000"), who, c.Text))
		}
	}
	return b.html()
}
