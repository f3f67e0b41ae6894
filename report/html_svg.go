package report

// The time axis shared by the charts, a small SVG builder, and the
// number and size formats of the page.

import (
	"fmt"
	"html/template"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ---- time axis ----

// timeAxis maps capture time to x within the plot area.
type timeAxis struct {
	start, end time.Time
	x0, x1     float64
	step       time.Duration
}

var tickSteps = []time.Duration{
	time.Second, 2 * time.Second, 5 * time.Second, 10 * time.Second, 15 * time.Second, 30 * time.Second,
	time.Minute, 2 * time.Minute, 5 * time.Minute, 10 * time.Minute, 15 * time.Minute, 30 * time.Minute,
	time.Hour, 2 * time.Hour, 3 * time.Hour, 6 * time.Hour, 12 * time.Hour, 24 * time.Hour,
}

const (
	chartW   = 1100.0
	plotLeft = 190.0
	plotRgt  = 1080.0
)

func newTimeAxis(start, end time.Time) timeAxis {
	if start.IsZero() {
		start = time.Unix(0, 0)
	}
	if !end.After(start) {
		end = start.Add(time.Second)
	}
	a := timeAxis{start: start, end: end, x0: plotLeft, x1: plotRgt}
	span := end.Sub(start)
	a.step = tickSteps[len(tickSteps)-1]
	for _, s := range tickSteps {
		if span/s <= 10 {
			a.step = s
			break
		}
	}
	return a
}

func (a timeAxis) x(t time.Time) float64 {
	f := float64(t.Sub(a.start)) / float64(a.end.Sub(a.start))
	return a.x0 + math.Max(0, math.Min(1, f))*(a.x1-a.x0)
}

// ticks are the times of the axis labels, on whole steps of the clock.
func (a timeAxis) ticks() []time.Time {
	var ts []time.Time
	t := a.start.Truncate(a.step)
	if t.Before(a.start) {
		t = t.Add(a.step)
	}
	for ; !t.After(a.end); t = t.Add(a.step) {
		ts = append(ts, t)
	}
	return ts
}

func (a timeAxis) label(t time.Time) string {
	if a.step >= time.Minute {
		return t.UTC().Format("15:04")
	}
	return t.UTC().Format("15:04:05")
}

// draw writes vertical grid lines from top to bottom and the labels below.
func (a timeAxis) draw(b *svg, top, bottom float64) {
	for _, t := range a.ticks() {
		x := a.x(t)
		b.line(x, top, x, bottom, "grid")
		b.text(x, bottom+16, "tick mid", a.label(t))
	}
	b.line(a.x0, bottom, a.x1, bottom, "axis")
	b.text((a.x0+a.x1)/2, bottom+36, "axis-title mid", "capture time (UTC)")
}

// drawTop writes the labels above the plot too, so that a tall chart shows
// its times where it begins.
func (a timeAxis) drawTop(b *svg, top float64) {
	for _, t := range a.ticks() {
		b.text(a.x(t), top-6, "tick mid", a.label(t))
	}
}

// ---- SVG building ----

// svg accumulates one chart's markup. Every piece of text goes through
// template.HTMLEscapeString.
type svg struct {
	sb strings.Builder
}

func newSVG(w, h float64, label string) *svg {
	b := &svg{}
	fmt.Fprintf(&b.sb, `<svg class="chart" viewBox="0 0 %s %s" role="img" aria-label="%s">`,
		num(w), num(h), esc(label))
	return b
}

func (b *svg) html() template.HTML {
	b.sb.WriteString("</svg>")
	return template.HTML(b.sb.String()) // every text in it was escaped on the way in
}

func esc(s string) string { return template.HTMLEscapeString(s) }

func num(f float64) string { return strconv.FormatFloat(math.Round(f*10)/10, 'f', -1, 64) }

func (b *svg) rect(x, y, w, h float64, fill, title string) {
	fmt.Fprintf(&b.sb, `<rect x="%s" y="%s" width="%s" height="%s" fill="%s" rx="2">`, num(x), num(y), num(w), num(h), fill)
	b.title(title)
	b.sb.WriteString("</rect>")
}

func (b *svg) line(x1, y1, x2, y2 float64, class string) {
	fmt.Fprintf(&b.sb, `<line x1="%s" y1="%s" x2="%s" y2="%s" class="%s"/>`, num(x1), num(y1), num(x2), num(y2), class)
}

func (b *svg) coloredLine(x1, y1, x2, y2 float64, color string, width float64) {
	fmt.Fprintf(&b.sb, `<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="%s" stroke-width="%s"/>`,
		num(x1), num(y1), num(x2), num(y2), color, num(width))
}

func (b *svg) text(x, y float64, class, s string) {
	fmt.Fprintf(&b.sb, `<text x="%s" y="%s" class="%s">%s</text>`, num(x), num(y), class, esc(s))
}

func (b *svg) title(s string) {
	if s != "" {
		fmt.Fprintf(&b.sb, "<title>%s</title>", esc(s))
	}
}

func (b *svg) path(d, fill, stroke, title string) {
	fmt.Fprintf(&b.sb, `<path d="%s" fill="%s" stroke="%s">`, d, fill, stroke)
	b.title(title)
	b.sb.WriteString("</path>")
}

// legend draws colored swatches with names in a row from x, y.
func (b *svg) legend(x, y float64, items [][2]string) {
	for _, it := range items {
		b.rect(x, y-10, 12, 12, it[1], "")
		b.text(x+17, y, "legend", it[0])
		x += 17 + textWidth(it[0]) + 22
	}
}

// textWidth guesses the width of s at the legend's 12px font.
func textWidth(s string) float64 { return 6.5 * float64(utf8.RuneCountInString(s)) }

// clip shortens a label for a chart's left column.
func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

func emptyChart(label, msg string) template.HTML {
	b := newSVG(chartW, 60, label)
	b.text(chartW/2, 35, "empty mid", msg)
	return b.html()
}

// ---- formatting ----

func humanDur(d time.Duration) string {
	switch {
	case d < time.Second:
		return d.Round(time.Millisecond).String()
	case d < time.Minute:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

func humanBytes(v float64) string {
	switch {
	case v >= 1e9:
		return trimFloat(math.Round(v/1e8)/10) + " GB"
	case v >= 1e6:
		return trimFloat(math.Round(v/1e5)/10) + " MB"
	case v >= 1e3:
		return trimFloat(math.Round(v/1e2)/10) + " kB"
	}
	return fmt.Sprintf("%.0f B", v)
}

func thousands(n int) string {
	s := strconv.Itoa(n)
	if n < 0 {
		return "-" + thousands(-n)
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

func countOrDash(n int) string {
	if n == 0 {
		return "–"
	}
	return thousands(n)
}

func intOrDash(n int) string {
	if n < 0 {
		return "–"
	}
	return strconv.Itoa(n)
}

func orDash(s string) string {
	if s == "" {
		return "–"
	}
	return s
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func hexByte(b uint8) string { return fmt.Sprintf("0x%02X", b) }
