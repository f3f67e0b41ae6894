package report

// The output of `bcwire diff`: a ranked text report grouped by phase, and
// an HTML page in the look of the capture report (its style sheet is taken
// from the same template, so the two stay alike).

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"sync"

	"github.com/bcwire/bcwire/session/diff"
	"github.com/fatih/color"
)

// WriteDiffText writes a comparison for people: a summary line, then the
// differences grouped by phase, most severe first, each with both sides'
// messages side by side and the frames to look them up with `bcwire
// decode`; then the findings both captures share.
func WriteDiffText(w io.Writer, res *diff.Result, useColor bool) error {
	ew := &errWriter{w: w}
	s := res.Summary
	fmt.Fprintf(ew, "ours:  %s (%d sessions)\nstock: %s (%d sessions)\n", s.Ours, s.OursSessions, s.Stock, s.StockSessions)
	if len(res.Differences) == 0 {
		fmt.Fprintf(ew, "no differences (%d sessions compared by join order)\n", s.Matched)
	} else {
		fmt.Fprintf(ew, "%s (%s), worst %s; %d sessions compared by join order\n",
			plural(len(res.Differences), "difference"), severityCounts(s.BySeverity), s.Worst, s.Matched)
	}
	phase := diff.Phase(255)
	for _, d := range res.Differences {
		if d.Phase != phase {
			phase = d.Phase
			fmt.Fprintf(ew, "\n== %s ==\n", strings.ToUpper(phase.String()))
		}
		sev := fmt.Sprintf("%-8s", d.Severity)
		if useColor {
			sev = severityColor(d.Severity).Sprint(sev)
		}
		fmt.Fprintf(ew, "\n%s %s  [%s]\n", sev, d.Summary, d.Kind)
		if len(d.Sessions) > 0 {
			fmt.Fprintf(ew, "         sessions (join order): %s\n", ints(d.Sessions))
		}
		writeSides(ew, d.Ours, d.Stock)
		if len(d.Frames.Ours)+len(d.Frames.Stock) > 0 {
			fmt.Fprintf(ew, "         frames: ours %s; stock %s\n", orDash(ints(d.Frames.Ours)), orDash(ints(d.Frames.Stock)))
		}
	}
	if len(res.Shared) > 0 {
		fmt.Fprintf(ew, "\n== SHARED WITH STOCK (not differences) ==\n")
		for _, f := range res.Shared {
			fmt.Fprintf(ew, "  %s: %s (%d times)\n", f.Kind, f.Summary, f.Count)
		}
	}
	return ew.err
}

// writeSides prints the two sides' lines next to each other when they fit,
// one after the other when they do not.
func writeSides(w io.Writer, ours, stock []string) {
	width := 0
	for _, l := range ours {
		width = max(width, len(l))
	}
	if width <= 60 {
		for _, l := range stock {
			if len(l) > 60 {
				width = 999
			}
		}
	}
	if width <= 60 {
		n := max(len(ours), len(stock))
		fmt.Fprintf(w, "         %-*s | %s\n", max(width, 4), "ours", "stock")
		for i := 0; i < n; i++ {
			fmt.Fprintf(w, "         %-*s | %s\n", max(width, 4), lineAt(ours, i), lineAt(stock, i))
		}
		return
	}
	fmt.Fprintf(w, "         ours:\n")
	for _, l := range ours {
		fmt.Fprintf(w, "           %s\n", l)
	}
	fmt.Fprintf(w, "         stock:\n")
	for _, l := range stock {
		fmt.Fprintf(w, "           %s\n", l)
	}
}

func lineAt(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return ""
}

func ints(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = fmt.Sprint(n)
	}
	return strings.Join(s, ",")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func severityCounts(m map[string]int) string {
	var parts []string
	for _, n := range []string{"critical", "major", "minor", "info"} {
		if m[n] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", m[n], n))
		}
	}
	return strings.Join(parts, ", ")
}

func severityColor(s diff.Severity) *color.Color {
	var c *color.Color
	switch s {
	case diff.Critical:
		c = color.New(color.FgRed, color.Bold)
	case diff.Major:
		c = color.New(color.FgRed)
	case diff.Minor:
		c = color.New(color.FgYellow)
	default:
		c = color.New(color.FgCyan)
	}
	c.EnableColor()
	return c
}

type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}

//go:embed assets/diff.html.tmpl
var diffPage string

// diffTmpl is parsed at the first diff page, not at start-up (as pageTmpl).
var diffTmpl = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("diff").Funcs(template.FuncMap{
		"ints": ints, "upper": strings.ToUpper,
	}).Parse(diffPage))
})

// reportStyle is the capture report's style sheet, shared by the diff page.
func reportStyle() string {
	_, rest, ok := strings.Cut(htmlPage, "<style>")
	if !ok {
		return ""
	}
	css, _, _ := strings.Cut(rest, "</style>")
	return css
}

// WriteDiffHTML writes a comparison as one self-contained HTML page.
func WriteDiffHTML(w io.Writer, res *diff.Result, title string) error {
	if title == "" {
		title = "bcwire diff: " + res.Summary.Ours + " vs " + res.Summary.Stock
	}
	type group struct {
		Phase string
		Diffs []*diff.Difference
	}
	var groups []group
	for _, d := range res.Differences {
		if len(groups) == 0 || groups[len(groups)-1].Phase != d.Phase.String() {
			groups = append(groups, group{Phase: d.Phase.String()})
		}
		groups[len(groups)-1].Diffs = append(groups[len(groups)-1].Diffs, d)
	}
	s := res.Summary
	data := struct {
		Title  string
		Style  template.CSS
		Sum    diff.Summary
		Counts string
		Groups []group
		Shared []*diff.Finding
	}{title, template.CSS(reportStyle()), s, severityCounts(s.BySeverity), groups, res.Shared}
	return diffTmpl().Execute(w, data)
}
