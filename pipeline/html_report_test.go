package pipeline_test

import (
	"bytes"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/report"
	"github.com/bcwire/bcwire/server/synth"
	"github.com/bcwire/bcwire/session"
)

// The HTML report of a generated capture (moved from report's tests: the
// generator is the server's, beside report, not below it).

// synthReport feeds a generated capture to an HTMLReport the way
// `bcwire report` does and returns it with the capture's totals.
func synthReport(t *testing.T, cfg synth.Config) (*report.HTMLReport, *session.Counts) {
	t.Helper()
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, capture.PCAP, capture.Ethernet)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := synth.Generate(cfg, w); err != nil {
		t.Fatal(err)
	}
	rd, err := capture.NewReader(&buf)
	if err != nil {
		t.Fatal(err)
	}
	h := report.NewHTMLReport(report.HTMLOptions{Title: "synthetic"})
	b := session.NewBuilder(session.Options{}, func(s *session.Session) { h.Session("synth.pcap", s) })
	if _, err := flow.Run(rd, flow.New(flow.Options{}), func(r *flow.Record) bool {
		h.Record(r)
		b.Add(r)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	b.Finish()
	return h, b.Totals()
}

// svgs returns each <svg …</svg> element of a page.
func svgs(page string) []string {
	var out []string
	for {
		i := strings.Index(page, "<svg")
		if i < 0 {
			return out
		}
		j := strings.Index(page[i:], "</svg>")
		if j < 0 {
			return append(out, page[i:])
		}
		out = append(out, page[i:i+j])
		page = page[i+j:]
	}
}

var externalRef = regexp.MustCompile(`(?i)(src|href|xlink:href|action)\s*=\s*["']?\s*(https?:)?//|url\(\s*["']?\s*(https?:)?//|@import`)

func TestHTMLReport(t *testing.T) {
	h, totals := synthReport(t, synth.Config{Players: 3, Duration: 30 * time.Second, Seed: 1})
	// A hostile player: name and chat that would run script if not escaped.
	start := totals.First.Add(2 * time.Second)
	end := start.Add(10 * time.Second)
	hostile := &session.Session{Name: `<script>alert("name")</script>`, Slot: 9, GameSlot: -1, Team: -1,
		Start: start, LastSeen: end, Reached: session.PhaseLobby, EndReason: session.EndOpen,
		Chat: []session.ChatLine{{Time: start.Add(time.Second), SenderID: 9, Sender: `<script>alert("name")</script>`,
			Text: `</td><script>alert("chat")</script><img src=x onerror=alert(1)>`}},
		Events: []session.Event{{Time: start.Add(2 * time.Second), Kind: session.EventKill, Text: `<b onmouseover=alert(2)>kill</b>`}},
	}
	hostile.Reliability.ServerToClient.Data.RTT = session.RTT{Samples: 3, Min: time.Millisecond, Median: 2 * time.Millisecond,
		P95: 3 * time.Millisecond, Max: 4 * time.Millisecond}
	h.Session("evil.pcap", hostile)

	var out bytes.Buffer
	if err := h.Write(&out, []string{"testdata/synth.pcap"}, totals); err != nil {
		t.Fatal(err)
	}
	page := out.String()
	if !strings.HasPrefix(page, "<!DOCTYPE html>") || !strings.Contains(page, "</html>") {
		t.Fatalf("not a whole page:\n%.300s", page)
	}
	charts := svgs(page)
	if len(charts) != 4 {
		t.Fatalf("%d <svg> elements, want 4 (timeline, rates, bandwidth, rtt)", len(charts))
	}
	for i, c := range charts {
		if n := strings.Count(c, "<rect") + strings.Count(c, "<path"); n < 5 {
			t.Errorf("chart %d has %d shapes:\n%.400s", i, n, c)
		}
		if !strings.Contains(c, "<text") {
			t.Errorf("chart %d has no labels", i)
		}
	}
	if strings.Contains(strings.ToLower(page), "<script") || strings.Contains(page, "<img") ||
		strings.Contains(page, "<b onmouseover") {
		t.Errorf("capture text reached the page unescaped")
	}
	for _, want := range []string{"&lt;script&gt;alert(&#34;name&#34;)&lt;/script&gt;", "&lt;/td&gt;&lt;script&gt;alert(&#34;chat&#34;)"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks the escaped text %q", want)
		}
	}
	if m := externalRef.FindString(page); m != "" {
		t.Errorf("page references something external: %q", m)
	}
	if strings.Contains(page, "http://") || strings.Contains(page, "https://") {
		t.Errorf("page mentions a URL")
	}
	if strings.Contains(page, "ZgotmplZ") {
		t.Errorf("html/template rejected a value (ZgotmplZ)")
	}
	for _, want := range []string{"synthetic", "StateUpdate", "Checksum &amp; join", "Control &amp; ACK", "0x1C", "Chat log", "in game"} {
		if !strings.Contains(page, want) {
			t.Errorf("page lacks %q", want)
		}
	}
}
