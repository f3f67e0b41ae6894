package report

// Charts 2-4: message rates by group, bandwidth per session and direction,
// ACK round-trip times.

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/bcwire/bcwire/session"
)

// ---- chart 2: message rate by group ----

func (h *HTMLReport) ratesSVG(ax timeAxis) template.HTML {
	const label = "Message rate by opcode group"
	r := &h.rates
	if r.used == 0 {
		return emptyChart(label, "no Bridge Commander messages in the capture")
	}
	const top, plotH = 40.0, 260.0
	bottom := top + plotH
	b := newSVG(chartW, bottom+52, label)
	var items [][2]string
	for g := range numGroups {
		items = append(items, [2]string{g.String(), g.Color()})
	}
	b.legend(plotLeft, 16, items)

	// Show at most about 150 steps, none narrower than a second: finer
	// buckets make a noisy chart of a short capture.
	width, counts := r.width, r.buckets[:r.used]
	var merged [][numGroups]int
	for width < time.Second || len(counts) > 150 {
		merged = make([][numGroups]int, (len(counts)+1)/2)
		for i, c := range counts {
			for g := range numGroups {
				merged[i/2][g] += c[g]
			}
		}
		counts, width = merged, width*2
	}
	secs := width.Seconds()
	peak := 0.0
	for _, c := range counts {
		sum := 0
		for g := range numGroups {
			sum += c[g]
		}
		peak = math.Max(peak, float64(sum)/secs)
	}
	yMax, yStep := niceScale(peak, 5)
	y := func(v float64) float64 { return bottom - v/yMax*plotH }
	for v := 0.0; v <= yMax+yStep/2; v += yStep {
		b.line(plotLeft, y(v), plotRgt, y(v), "grid")
		b.text(plotLeft-8, y(v)+4, "tick end", trimFloat(v))
	}
	b.sb.WriteString(`<text class="axis-title mid" transform="translate(140 ` + num(top+plotH/2) + `) rotate(-90)">messages / s</text>`)
	ax.draw(b, top, bottom)

	// Stacked areas, StateUpdate at the bottom; each bucket is a flat step.
	n := len(counts)
	base := make([]float64, n)
	for g := range numGroups {
		tops := make([]float64, n)
		any := false
		for i, c := range counts {
			tops[i] = base[i] + float64(c[g])/secs
			if c[g] > 0 {
				any = true
			}
		}
		if !any {
			continue
		}
		var d strings.Builder
		xAt := func(i int) float64 { return ax.x(r.origin.Add(time.Duration(i) * width)) }
		fmt.Fprintf(&d, "M%s %s", num(xAt(0)), num(y(base[0])))
		for i := range n {
			fmt.Fprintf(&d, "L%s %sL%s %s", num(xAt(i)), num(y(tops[i])), num(xAt(i+1)), num(y(tops[i])))
		}
		for i := n - 1; i >= 0; i-- {
			fmt.Fprintf(&d, "L%s %sL%s %s", num(xAt(i+1)), num(y(base[i])), num(xAt(i)), num(y(base[i])))
		}
		d.WriteString("Z")
		b.path(d.String(), g.Color(), g.Color(), g.String())
		base = tops
	}
	b.text(plotRgt, top-8, "note end", fmt.Sprintf("one step = %s", humanDur(width)))
	return b.html()
}

// niceScale picks an axis maximum at or above v and a step, about n steps.
func niceScale(v float64, n int) (top, step float64) {
	if v <= 0 {
		return 1, 0.25
	}
	raw := v / float64(n)
	mag := math.Pow(10, math.Floor(math.Log10(raw)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if step = m * mag; step >= raw {
			break
		}
	}
	return math.Ceil(v/step) * step, step
}

func trimFloat(v float64) string {
	if v >= 1000 {
		return thousands(int(math.Round(v)))
	}
	return strconv.FormatFloat(math.Round(v*100)/100, 'f', -1, 64)
}

// ---- chart 3: bandwidth per session and direction ----

// sessionBytes is the transport bytes a session moved in direction d.
func sessionBytes(s *session.Session, d int) int {
	n := 0
	for _, t := range s.Traffic.Transport[d] {
		n += t.Bytes
	}
	return n
}

func (h *HTMLReport) bandwidthSVG() template.HTML {
	const label = "Bandwidth per session and direction"
	if len(h.sessions) == 0 {
		return emptyChart(label, "no sessions in the capture")
	}
	const top, rowH, barH = 44.0, 40.0, 13.0
	bottom := top + rowH*float64(len(h.sessions))
	b := newSVG(chartW, bottom+52, label)
	b.legend(plotLeft, 16, [][2]string{{"client → server", dirColor[0]}, {"server → client", dirColor[1]}})
	rate := func(s *session.Session, d int) float64 {
		sec := s.Duration().Seconds()
		if sec < 1 {
			sec = 1
		}
		return float64(sessionBytes(s, d)) / sec
	}
	peak := 0.0
	for _, hs := range h.sessions {
		peak = math.Max(peak, math.Max(rate(hs.s, 0), rate(hs.s, 1)))
	}
	xMax, xStep := niceScale(peak, 6)
	const barRight = plotRgt - 110 // room for the value labels
	x := func(v float64) float64 { return plotLeft + v/xMax*(barRight-plotLeft) }
	for v := 0.0; v <= xMax+xStep/2; v += xStep {
		b.line(x(v), top, x(v), bottom, "grid")
		b.text(x(v), bottom+16, "tick mid", humanBytes(v)+"/s")
	}
	b.line(plotLeft, bottom, barRight, bottom, "axis")
	b.text((plotLeft+barRight)/2, bottom+36, "axis-title mid", "mean transport bytes per second over the session (UDP/IP headers not counted)")
	for i, hs := range h.sessions {
		s := hs.s
		y := top + float64(i)*rowH
		name := sessionLabel(s)
		b.text(plotLeft-10, y+rowH/2+4, "row-label end", clip(name, 24))
		for d := range 2 {
			v := rate(s, d)
			by := y + 6 + float64(d)*(barH+1)
			title := fmt.Sprintf("%s %s: %s in %s (%s/s)", name, session.Dirs[d], humanBytes(float64(sessionBytes(s, d))),
				humanDur(s.Duration()), humanBytes(v))
			b.rect(plotLeft, by, math.Max(x(v)-plotLeft, 1), barH, dirColor[d], title)
			b.text(x(v)+6, by+barH-2, "value", fmt.Sprintf("%s/s · %s", humanBytes(v), humanBytes(float64(sessionBytes(s, d)))))
		}
	}
	return b.html()
}

// ---- chart 4: ACK round-trip times ----

type rttRow struct {
	name string
	d    int
	ch   string
	rtt  session.RTT
	sep  bool // first row of its session
}

func (h *HTMLReport) rttSVG() template.HTML {
	const label = "ACK round-trip time per session and channel"
	var rows []rttRow
	for _, hs := range h.sessions {
		s := hs.s
		first := true
		add := func(d int, ch string, c session.ChannelStats) {
			if c.RTT.Samples == 0 {
				return
			}
			rows = append(rows, rttRow{name: sessionLabel(s), d: d, ch: ch, rtt: c.RTT, sep: first})
			first = false
		}
		add(0, "data", s.Reliability.ClientToServer.Data)
		add(0, "control", s.Reliability.ClientToServer.Control)
		add(1, "data", s.Reliability.ServerToClient.Data)
		add(1, "control", s.Reliability.ServerToClient.Control)
	}
	if len(rows) == 0 {
		return emptyChart(label, "no ACKed reliable messages in the capture")
	}
	const top, rowH = 48.0, 18.0
	bottom := top + rowH*float64(len(rows))
	b := newSVG(chartW, bottom+52, label)
	b.legend(plotLeft, 16, [][2]string{{"sent by the client (ACK from the server)", dirColor[0]}, {"sent by the server (ACK from the client)", dirColor[1]}})
	b.text(plotLeft, 36, "note", "line: min – max · box: median – 95th percentile · tick: median")
	peak := time.Duration(0)
	for _, r := range rows {
		peak = max(peak, r.rtt.Max)
	}
	xMax, xStep := niceScale(float64(peak)/float64(time.Millisecond), 6)
	const right = plotRgt - 70
	x := func(d time.Duration) float64 {
		return plotLeft + float64(d)/float64(time.Millisecond)/xMax*(right-plotLeft)
	}
	for v := 0.0; v <= xMax+xStep/2; v += xStep {
		xv := plotLeft + v/xMax*(right-plotLeft)
		b.line(xv, top, xv, bottom, "grid")
		b.text(xv, bottom+16, "tick mid", trimFloat(v)+" ms")
	}
	b.line(plotLeft, bottom, right, bottom, "axis")
	b.text((plotLeft+right)/2, bottom+36, "axis-title mid", "time from a reliable message to its ACK, at the capture point")
	for i, r := range rows {
		y := top + float64(i)*rowH
		if r.sep && i > 0 {
			b.line(8, y, chartW-8, y, "sep")
		}
		if r.sep {
			b.text(8, y+rowH/2+4, "row-label", clip(r.name, 16))
		}
		b.text(plotLeft-10, y+rowH/2+4, "row-sub end", session.Dirs[r.d].String()+" "+r.ch)
		c := dirColor[r.d]
		mid := y + rowH/2
		t := r.rtt
		title := fmt.Sprintf("%s %s %s: min %s, median %s, p95 %s, max %s (%d samples)", r.name, session.Dirs[r.d], r.ch,
			msText(t.Min), msText(t.Median), msText(t.P95), msText(t.Max), t.Samples)
		b.coloredLine(x(t.Min), mid, x(t.Max), mid, c, 1.5)
		b.coloredLine(x(t.Min), mid-4, x(t.Min), mid+4, c, 1.5)
		b.coloredLine(x(t.Max), mid-4, x(t.Max), mid+4, c, 1.5)
		b.rect(x(t.Median), mid-5, math.Max(x(t.P95)-x(t.Median), 2), 10, c, title)
		b.coloredLine(x(t.Median), mid-7, x(t.Median), mid+7, "#111", 2)
		b.text(x(t.Max)+8, mid+4, "value", fmt.Sprintf("median %s · n=%d", msText(t.Median), t.Samples))
	}
	return b.html()
}
