package pipeline_test

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/server/synth"
	"github.com/bcwire/bcwire/session/diff"
)

// diff on generated captures, with and without the generator's quirks
// (moved from session/diff's tests: the generator is the server's, above
// session).

// stockLike is the stock-like capture every quirky one is compared with.
var stockLike = synth.Config{Players: 3, Duration: 40 * time.Second, Seed: 1}

var (
	cacheMu sync.Mutex
	cache   = map[string]*diff.Capture{}
)

// generateDiff synthesises cfg and reads it as diff does (cached by name).
func generateDiff(t *testing.T, name string, cfg synth.Config) *diff.Capture {
	t.Helper()
	cacheMu.Lock()
	defer cacheMu.Unlock()
	if c := cache[name]; c != nil {
		return c
	}
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, capture.PCAP, capture.Ethernet)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := synth.Generate(cfg, w); err != nil {
		t.Fatal(err)
	}
	rd, err := capture.NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	r := diff.DefaultRules()
	c, err := diff.Read(name, rd, nil, &r)
	if err != nil {
		t.Fatal(err)
	}
	cache[name] = c
	return c
}

type want struct {
	phase diff.Phase
	sev   diff.Severity
	kind  string
	text  string // part of the summary
}

func show(res *diff.Result) string {
	var b strings.Builder
	for _, d := range res.Differences {
		fmt.Fprintf(&b, "\n  %s %s %s: %s (frames %v)", d.Phase, d.Severity, d.Kind, d.Summary, d.Frames)
	}
	return b.String()
}

// TestQuirksFindExactlyTheirDifference compares captures of a server with
// one known deviation from stock against the stock-like capture: each must
// show exactly the expected differences, at the expected severity and
// phase, and nothing else.
func TestQuirksFindExactlyTheirDifference(t *testing.T) {
	zero := uint8(0)
	cases := []struct {
		name  string
		quirk synth.Quirks
		want  []want
	}{
		{"no bundling", synth.Quirks{NoBundling: true}, []want{
			// Stock bundles the slot assignment with checksum round 0, and
			// 0x28 + Settings + GameInit in one datagram.
			{diff.PhaseHandshake, diff.Major, "bundling", "connect request is bundled differently: ours slot-assignment | ChecksumRequest, stock slot-assignment + ChecksumRequest"},
			{diff.PhaseHandshake, diff.Major, "bundling", "round final(0xFF) is bundled differently: ours ack + ChecksumComplete | Settings | GameInit, stock ack + ChecksumComplete + Settings + GameInit"},
		}},
		{"control ACK flags 0x00", synth.Quirks{ControlAckFlags: &zero}, []want{
			// Control-channel ACKs carry flags 0x02 (PROTOCOL.md).
			{diff.PhaseHandshake, diff.Major, "ack-flags", "S->C ACKs of control messages carry flags 0x00 (stock 0x02)"},
		}},
		{"checksum directory", synth.Quirks{ChecksumDirs: map[game.ChecksumRound]string{2: "scripts/Ships"}}, []want{
			{diff.PhaseHandshake, diff.Major, "field", `ChecksumRequest.dir in the answer to the checksum response of round 1: ours "scripts/Ships", stock "scripts/ships"`},
		}},
		{"missing DeletePlayerUI", synth.Quirks{DropOpcodes: []game.Opcode{game.OpDeletePlayerUI}}, []want{
			{diff.PhaseLobby, diff.Major, "opcode-missing", "our server never sends DeletePlayerUI (0x17) S->C"},
		}},
		{"halved StateUpdate rate", synth.Quirks{StateUpdateDivisor: 2}, []want{
			// The same rule measures each ship lane's cadence, with both
			// sides' figures and the published stock one (issue 29.4).
			{diff.PhaseGameplay, diff.Major, "stateupdate-rate", "StateUpdates S->C: 5.0 per ship per second, stock 10.0 (ratio 0.50); " +
				"0x20-bearing StateUpdates come every 0.200 s per ship lane (p50; p90 0.200 s), stock every 0.100 s (p90 0.100 s); " +
				"all StateUpdates come every 0.200 s per ship lane (p50; p90 0.200 s), stock every 0.100 s (p90 0.100 s); " +
				"published: stock S->C 0x20 updates per ship lane: avg 0.101 s, p50 0.100 s, p90 0.110 s; OpenBC's downstream 0.142 s"},
		}},
		{"no relay", synth.Quirks{NoRelay: true}, []want{
			{diff.PhaseGameplay, diff.Major, "relay", "forwards clients' game messages to the other clients differently from stock"},
		}},
	}
	stock := generateDiff(t, "stock", stockLike)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := stockLike
			cfg.Quirks = c.quirk
			ours := generateDiff(t, c.name, cfg)
			r := diff.DefaultRules()
			res := diff.Compare(ours, stock, &r)
			if len(res.Differences) != len(c.want) {
				t.Fatalf("%d differences, want %d:%s", len(res.Differences), len(c.want), show(res))
			}
		next:
			for _, w := range c.want {
				for _, d := range res.Differences {
					if d.Kind == w.kind && strings.Contains(d.Summary, w.text) {
						if d.Severity != w.sev || d.Phase != w.phase {
							t.Errorf("%s: %s %s, want %s %s", d.Summary, d.Phase, d.Severity, w.phase, w.sev)
						}
						if len(d.Frames.Ours)+len(d.Frames.Stock) == 0 && d.Kind != "stateupdate-rate" && d.Kind != "relay" {
							t.Errorf("%s: no frames", d.Summary)
						}
						continue next
					}
				}
				t.Errorf("missing %s %q in:%s", w.kind, w.text, show(res))
			}
		})
	}
}

// TestSameServerNoDifferences: the same capture, and two captures of the
// same (stock-like) server with different random play, show nothing.
func TestSameServerNoDifferences(t *testing.T) {
	stock := generateDiff(t, "stock", stockLike)
	other := stockLike
	other.Seed = 7
	r := diff.DefaultRules()
	for _, c := range []struct {
		name        string
		ours, stock *diff.Capture
	}{
		{"A A", stock, stock},
		{"other seed", generateDiff(t, "seed 7", other), stock},
	} {
		res := diff.Compare(c.ours, c.stock, &r)
		if len(res.Differences) != 0 {
			t.Errorf("%s: %d differences:%s", c.name, len(res.Differences), show(res))
		}
		if res.Summary.Worst != "none" || res.Summary.Matched != 3 {
			t.Errorf("%s: summary %+v", c.name, res.Summary)
		}
	}
}

// TestDifferentPlayerCountsAndLengths: sessions are matched by join order
// and rates normalised, so a longer capture with more players of the same
// server differs only in the session count (info), and a quirk still shows.
func TestDifferentPlayerCountsAndLengths(t *testing.T) {
	stock := generateDiff(t, "stock", stockLike)
	bigger := synth.Config{Players: 6, Duration: 150 * time.Second, Seed: 3}
	r := diff.DefaultRules()
	res := diff.Compare(generateDiff(t, "bigger", bigger), stock, &r)
	if len(res.Differences) != 1 || res.Differences[0].Kind != "sessions" || res.Differences[0].Severity != diff.Info {
		t.Fatalf("want only the info about session counts:%s", show(res))
	}
	if res.Summary.Matched != 3 || res.Summary.OursSessions != 6 {
		t.Errorf("summary %+v", res.Summary)
	}
	bigger.Quirks.StateUpdateDivisor = 2
	res = diff.Compare(generateDiff(t, "bigger halved", bigger), stock, &r)
	if res.Count(diff.Minor) != 1 || !strings.Contains(show(res), "stateupdate-rate") {
		t.Fatalf("want the halved StateUpdate rate alone above info:%s", show(res))
	}
}

func TestStepsOfAStockJoin(t *testing.T) {
	c := generateDiff(t, "stock", stockLike)
	s := c.Sessions[0]
	var keys []string
	for _, st := range s.Steps {
		keys = append(keys, st.Key)
	}
	want := "connect,checksum round 0,checksum round 1,checksum round 2,checksum round 3,checksum round final(0xFF),new player in game"
	if got := strings.Join(keys, ","); !strings.HasPrefix(got, want) {
		t.Fatalf("steps %s, want %s...", got, want)
	}
	// PROTOCOL.md: the connect reply and checksum round 0 share a datagram;
	// 0x28, Settings and GameInit share one.
	st := s.Step("connect")
	if len(st.Reply) != 2 || st.Reply[0].Frame != st.Reply[1].Frame || st.Reply[1].Game.Opcode() != game.OpChecksumRequest {
		t.Errorf("connect answer: %v", messageNames(st.Reply))
	}
	fin := s.Step("checksum round final(0xFF)")
	if n := len(fin.Reply); n != 4 || fin.Reply[0].Name() != "ack" || fin.Reply[3].Game.Opcode() != game.OpGameInit ||
		fin.Reply[0].Frame != fin.Reply[3].Frame {
		t.Errorf("final round answer: %v", messageNames(fin.Reply))
	}
	if s.Keepalive == nil || s.Keepalive.Control.Kind != "peer-info" {
		t.Errorf("keepalive %v", s.Keepalive)
	}
	// A later joiner gets the ships already in play.
	late := c.Sessions[2].Step("new player in game")
	if late == nil || late.LiveShips == 0 {
		t.Fatalf("third session: no live ships at join")
	}
	if len(c.Findings) != 0 {
		t.Errorf("findings on a stock-like capture: %v", c.Findings[0].Summary)
	}
}

// messageNames names each message of an answer, for failure messages.
func messageNames(msgs []diff.Msg) []string {
	out := make([]string, 0, len(msgs))
	for i := range msgs {
		out = append(out, msgs[i].String())
	}
	if len(out) == 0 {
		out = append(out, "(no answer)")
	}
	return out
}
