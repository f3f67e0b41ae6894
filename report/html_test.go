package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/session"
)

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

func TestHTMLReportEmpty(t *testing.T) {
	var out bytes.Buffer
	if err := NewHTMLReport(HTMLOptions{}).Write(&out, []string{"none.pcap"}, &session.Counts{}); err != nil {
		t.Fatal(err)
	}
	page := out.String()
	if n := len(svgs(page)); n != 4 {
		t.Fatalf("%d charts, want 4", n)
	}
	for _, want := range []string{"none.pcap", "no traffic", "no sessions", "no chat"} {
		if !strings.Contains(page, want) {
			t.Errorf("empty page lacks %q", want)
		}
	}
}

// The rate table stays the same size whatever the capture's length: it
// widens its buckets and keeps every count.
func TestRatesBounded(t *testing.T) {
	var r rates
	t0 := time.Date(2026, 1, 10, 20, 0, 0, 0, time.UTC)
	n := 0
	for d := time.Duration(0); d < 10*time.Hour; d += 7 * time.Second {
		r.add(t0.Add(d), GroupStateUpdate)
		n++
	}
	// A second file from before the first.
	r.add(t0.Add(-3*time.Hour), GroupControl)
	n++
	if r.used > rateBuckets {
		t.Fatalf("used %d of %d buckets", r.used, rateBuckets)
	}
	if span := time.Duration(r.used) * r.width; span < 13*time.Hour || r.width > 30*time.Minute {
		t.Errorf("buckets of %s cover %s, want about 13h in at most 30m steps", r.width, span)
	}
	total := 0
	for _, b := range r.buckets {
		for _, c := range b {
			total += c
		}
	}
	if total != n || r.buckets[0][GroupControl] != 1 {
		t.Errorf("counted %d, want %d; first bucket %v", total, n, r.buckets[0])
	}
}

func TestOpcodeGroup(t *testing.T) {
	for _, c := range []struct {
		op   game.Opcode
		want Group
	}{
		{game.OpStateUpdate, GroupStateUpdate}, {game.OpBeamFire, GroupCombat}, {game.OpExplosion, GroupCombat},
		{game.OpChecksumRequest, GroupJoin}, {game.OpSettings, GroupJoin}, {game.OpMissionInit, GroupJoin},
		{game.OpChat, GroupScript}, {game.OpTeamMessage, GroupScript}, {game.OpScoreChange, GroupCombat},
		{game.Opcode(0x50), GroupScript}, {game.OpUnused24, GroupOther},
	} {
		if g := OpcodeGroup(c.op); g != c.want {
			t.Errorf("%s: %s, want %s", c.op, g, c.want)
		}
	}
}
