package reportcmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/report"
	"github.com/bcwire/bcwire/session/diff"
)

// measureScript, put at the end of the page's body, writes for every side
// pane of the diff page its pre's scrollWidth and clientWidth, and the
// right edges of the pane and of its card, into a div that --dump-dom
// shows; and the page's own scroll width against the window's.
const measureScript = `<script>
(function () {
  var out = [];
  document.querySelectorAll('.sides pre').forEach(function (pre) {
    var pane = pre.parentElement, card = pre.closest('section');
    out.push([pre.scrollWidth, pre.clientWidth, Math.ceil(pane.getBoundingClientRect().right),
      Math.ceil(card.getBoundingClientRect().right)].join(','));
  });
  var d = document.createElement('div');
  d.id = 'measure';
  d.textContent = 'page=' + document.documentElement.scrollWidth + ',' + window.innerWidth + ';' + out.join(';');
  document.body.appendChild(d);
})();
</script>`

// longDiffResult is a comparison whose side panes hold lines far wider
// than any screen: long decoded messages, and unbroken hex.
func longDiffResult() *diff.Result {
	long := "frame 1234: data R seq=42 O  ObjCreateTeam owner=2 team=0 class=ship object=0x3FFFFFFF species=NEBULA ship_class=Nebula position=(448.513,35.3056,0) orientation=(1,0,0,0) speed=0 player_name=\"a very long player name indeed\" set_name=Multi1"
	hex := "unparsed=" + strings.Repeat("00FFFFFF40FFFFFFFFFFFF", 30)
	res := &diff.Result{Summary: diff.Summary{Ours: "/a/very/long/path/to/some/capture/of/our/own/server/" + strings.Repeat("x", 120) + ".pcap",
		Stock: "stock.pcap", OursSessions: 1, StockSessions: 1, Matched: 1, Differences: 3, BySeverity: map[string]int{"major": 3}, Worst: "major"}}
	for i, lines := range [][2][]string{
		{{long, hex}, {"frame 7: connect", long + long}},
		{{"short"}, {hex + hex}},
		{{strings.Repeat("word ", 200)}, {"none"}},
	} {
		res.Differences = append(res.Differences, &diff.Difference{Phase: diff.Phase(i % 2), Severity: diff.Major, Kind: "reply-content",
			Summary: "a difference whose summary is long: " + strings.Repeat("ObjCreateTeam.position.x ", 12), Ours: lines[0], Stock: lines[1],
			Frames: diff.Frames{Ours: []int{1, 2, 3}, Stock: []int{4}}, Sessions: []int{1}})
	}
	return res
}

// TestDiffPanesStayInTheirCards renders a diff page with very long lines
// in headless Chromium at 1366 and 1920 pixels: no pane may be wider than
// its text area or reach past its card, and the page may not scroll
// sideways.
func TestDiffPanesStayInTheirCards(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chromium is not installed (%s missing) although CI=true", chromiumPath)
		}
		t.Skipf("chromium is not installed (%s missing): skipping the browser test", chromiumPath)
	}
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	var page bytes.Buffer
	if err := report.WriteDiffHTML(&page, longDiffResult(), ""); err != nil {
		t.Fatal(err)
	}
	html := strings.Replace(page.String(), "</body>", measureScript+"</body>", 1)
	path := filepath.Join(t.TempDir(), "diff.html")
	if err := os.WriteFile(path, []byte(html), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, width := range []int{1366, 1920} {
		dom, _ := chromium(t, path, "--dump-dom", "--window-size="+strconv.Itoa(width)+",900")
		_, m, ok := strings.Cut(dom, `<div id="measure">`)
		if !ok {
			t.Fatalf("%d px: the measuring script left nothing in the DOM", width)
		}
		m, _, _ = strings.Cut(m, "</div>")
		parts := strings.Split(m, ";")
		var pageW, winW int
		if _, err := fmtSscan(strings.TrimPrefix(parts[0], "page="), &pageW, &winW); err != nil {
			t.Fatalf("%d px: %q: %v", width, parts[0], err)
		}
		if pageW > winW {
			t.Errorf("%d px: the page scrolls sideways (%d > %d)", width, pageW, winW)
		}
		panes := parts[1:]
		if len(panes) != 6 {
			t.Fatalf("%d px: %d panes measured, want 6", width, len(panes))
		}
		for i, p := range panes {
			var scroll, client, right, cardRight int
			if _, err := fmtSscan(p, &scroll, &client, &right, &cardRight); err != nil {
				t.Fatalf("%q: %v", p, err)
			}
			if scroll > client {
				t.Errorf("%d px: pane %d's text is %d px wide in a %d px pane", width, i, scroll, client)
			}
			if right > cardRight {
				t.Errorf("%d px: pane %d ends at %d px, past its card's edge at %d", width, i, right, cardRight)
			}
		}
	}
}

// fmtSscan reads comma-separated integers.
func fmtSscan(s string, vs ...*int) (int, error) {
	fields := strings.Split(s, ",")
	for i, v := range vs {
		if i >= len(fields) {
			return i, strconv.ErrSyntax
		}
		n, err := strconv.Atoi(strings.TrimSpace(fields[i]))
		if err != nil {
			return i, err
		}
		*v = n
	}
	return len(vs), nil
}
