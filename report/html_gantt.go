package report

// Chart 1: the sessions as a Gantt chart.

import (
	"fmt"
	"html/template"
	"math"
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

// phaseSpans splits a session into the phases it went through.
func phaseSpans(s *session.Session) []struct {
	from, to time.Time
	phase    session.Phase
} {
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
	var out []struct {
		from, to time.Time
		phase    session.Phase
	}
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
		out = append(out, struct {
			from, to time.Time
			phase    session.Phase
		}{*m.t, to, m.p})
	}
	return out
}

func (h *HTMLReport) ganttSVG(ax timeAxis) template.HTML {
	const label = "Session timelines"
	if len(h.sessions) == 0 {
		return emptyChart(label, "no sessions in the capture")
	}
	const top, rowH = 48.0, 34.0
	bottom := top + rowH*float64(len(h.sessions))
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
	for i := range h.sessions {
		if i%2 == 1 {
			b.rect(8, top+float64(i)*rowH, chartW-16, rowH, "#f4f5f7", "")
		}
	}
	ax.draw(b, top, bottom)
	for i, hs := range h.sessions {
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
