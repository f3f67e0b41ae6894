package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/session"
)

// manySessions feeds n sessions of two minutes, k at a time, to a report
// keeping at most keep of them whole.
func manySessions(t *testing.T, n, k, keep int) string {
	t.Helper()
	h := NewHTMLReport(HTMLOptions{Title: "many", MaxSessions: keep})
	t0 := time.Date(2026, 1, 10, 20, 0, 0, 0, time.UTC)
	for i := range n {
		start := t0.Add(time.Duration(i/k) * 150 * time.Second).Add(time.Duration(i%k) * time.Second)
		inGame := start.Add(20 * time.Second)
		end := start.Add(2 * time.Minute)
		s := &session.Session{Name: fmt.Sprintf("player%03d", i), Slot: -1, Start: start, LastSeen: end}
		s.Phases.InGame, s.Phases.End = &inGame, &end
		s.EndReason = session.EndDisconnect
		if err := h.Session("many.pcap", s); err != nil {
			t.Fatal(err)
		}
	}
	var out bytes.Buffer
	if err := h.Write(&out, []string{"many.pcap"}, &session.Counts{First: t0, Last: t0.Add(time.Duration(n/k) * 150 * time.Second)}); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

// TestGanttPagesManySessions: 400 sessions, 4 at once, 200 kept: an
// overview of all 400 in 4 lanes, 8 pages of 25 (the first open), each
// chart with time labels above and below its rows, and the page says what
// the pages leave out.
func TestGanttPagesManySessions(t *testing.T) {
	page := manySessions(t, 400, 4, 200)
	if !strings.Contains(page, "Overview: 400 sessions in 4 lanes") {
		t.Error("no overview of the 400 sessions in 4 lanes")
	}
	if n := strings.Count(page, `<details class="gpage"`); n != 8 {
		t.Errorf("%d session pages, want 8 of 25", n)
	}
	if n := strings.Count(page, `<details class="gpage" open>`); n != 1 {
		t.Errorf("%d pages open, want the first", n)
	}
	if !strings.Contains(page, "Sessions 176–200 of 400") {
		t.Error("no last page 176-200")
	}
	if !strings.Contains(page, "the other 200 are drawn in the overview only") {
		t.Error("the page does not say which sessions the pages leave out")
	}
	// Every Gantt chart (overview and pages) has the axis labels above the
	// rows as well as below: the first label appears twice in each chart.
	charts := svgs(page)
	gantts := 0
	for _, c := range charts {
		if !strings.Contains(c, "Session timelines") && !strings.Contains(c, "Overview of") {
			continue
		}
		gantts++
		i := strings.Index(c, `class="tick mid"`)
		if i < 0 {
			t.Fatalf("a Gantt chart without tick labels")
		}
		label := c[i+len(`class="tick mid">`):]
		label = label[:strings.Index(label, "<")]
		if strings.Count(c, ">"+label+"<") < 2 {
			t.Errorf("tick %q is only drawn once: no axis above the rows", label)
		}
		if rows := strings.Count(c, `class="row-label end"`); rows > ganttPage {
			t.Errorf("a chart with %d rows", rows)
		}
	}
	if gantts != 9 {
		t.Errorf("%d Gantt charts, want the overview and 8 pages", gantts)
	}
}

// TestGanttSmallIsOneChart: a few sessions stay one chart, no pages.
func TestGanttSmallIsOneChart(t *testing.T) {
	page := manySessions(t, 8, 4, 200)
	if strings.Contains(page, `<details class="gpage"`) || strings.Contains(page, "Overview of") {
		t.Error("8 sessions were paged")
	}
	if !strings.Contains(page, "player007") {
		t.Error("a session is missing")
	}
}
