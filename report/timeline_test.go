package report

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/session"
)

func at(ms int) *time.Time {
	t := time.Date(2024, 5, 1, 20, 0, 0, 0, time.UTC).Add(time.Duration(ms) * time.Millisecond)
	return &t
}

func sampleSession() *session.Session {
	s := &session.Session{
		Server: netip.MustParseAddrPort("10.0.0.1:22101"), Client: netip.MustParseAddrPort("10.0.0.2:53000"),
		Slot: 2, GameSlot: 0, Name: "Cady2", Team: -1, Ship: "Sovereign",
		Start: *at(0), LastSeen: *at(65000), Reached: session.PhaseInGame, EndReason: session.EndBoot, EndBy: "server",
		Checksums: []session.ChecksumRound{{Round: 0, Request: at(4), Response: at(60)}},
		Events: []session.Event{
			{Time: *at(30000), Frame: 812, Kind: session.EventRetransmitBurst, Text: "4 retransmissions in 2s: S->C data 4"},
			{Time: *at(65000), Frame: 900, Kind: session.EventBoot, Text: "booted by the server"},
		},
		Chat: []session.ChatLine{{Time: *at(20000), Frame: 700, SenderID: 2, Sender: "Cady2", Text: "hi"}},
	}
	s.Phases.Connect, s.Phases.ConnectReply, s.Phases.ChecksumDone = at(0), at(4), at(200)
	s.Phases.Lobby, s.Phases.InGame, s.Phases.End = at(200), at(5000), at(65000)
	s.Reliability.ServerToClient.Data = session.ChannelStats{Reliable: 10, Retransmissions: 4, Acked: 10,
		RTT: session.RTT{Samples: 6, Min: 20 * time.Millisecond, Median: 30 * time.Millisecond, P95: 90 * time.Millisecond, Max: 90 * time.Millisecond}}
	return s
}

func TestTimelineText(t *testing.T) {
	var buf bytes.Buffer
	p := NewTimelinePrinter(&buf, false, false)
	if err := p.Session("a.pcap", sampleSession()); err != nil {
		t.Fatal(err)
	}
	p.Close()
	out := buf.String()
	want := []string{
		`10.0.0.2:53000 on 10.0.0.1:22101  slot 2  "Cady2"  Sovereign`,
		"a.pcap: 2024-05-01 20:00:00.000 UTC, 1m5s, reached in_game, ended: boot",
		"+00:00.000  connect request",
		"+00:00.004  connect reply: slot 2",
		"+00:00.060  checksum round 0 answered",
		"rtt 56ms",
		"+00:00.200  checksums passed",
		"+00:05.000  in game: ship selected",
		"+4.8s",
		`+00:20.000    chat [all] Cady2: "hi"`,
		"+00:30.000    4 retransmissions in 2s: S->C data 4",
		"frame 812",
		"+01:05.000  end: booted by the server",
		"S->C data            10      4",
		"20.0ms/30.0ms/90.0ms/90.0ms (6)",
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q:\n%s", w, out)
		}
	}
	// Lines in time order.
	if strings.Index(out, "chat [all]") > strings.Index(out, "retransmissions in") {
		t.Errorf("events out of order:\n%s", out)
	}
	if strings.Contains(out, "\x1b[") {
		t.Errorf("color codes without color")
	}
	buf.Reset()
	p = NewTimelinePrinter(&buf, false, true)
	p.Session("a.pcap", sampleSession())
	p.Close()
	if !strings.Contains(buf.String(), "\x1b[") {
		t.Errorf("no color codes with color")
	}
}

func TestTimelineJSON(t *testing.T) {
	var buf bytes.Buffer
	p := NewTimelinePrinter(&buf, true, true)
	p.Session("a.pcap", sampleSession())
	p.Session("b.pcap", sampleSession())
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Sessions []map[string]json.RawMessage `json:"sessions"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, buf.Bytes())
	}
	if len(doc.Sessions) != 2 || strings.Contains(buf.String(), `\u003e`) {
		t.Fatalf("%s", buf.Bytes())
	}
	s := doc.Sessions[1]
	for _, k := range []string{"file", "server", "client", "slot", "name", "phases", "events", "reliability"} {
		if _, ok := s[k]; !ok {
			t.Errorf("session lacks %q", k)
		}
	}
	var phases map[string]*time.Time
	json.Unmarshal(s["phases"], &phases)
	if phases["connect"] == nil || !phases["end"].Equal(*at(65000)) || phases["new_player"] != nil {
		t.Errorf("phases %s", s["phases"])
	}
	if string(s["file"]) != `"b.pcap"` {
		t.Errorf("file %s", s["file"])
	}
}

func TestOffset(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "+00:00.000", 1500 * time.Millisecond: "+00:01.500", 61 * time.Second: "+01:01.000",
		3*time.Hour + 4*time.Minute + 5*time.Second + 6*time.Millisecond: "+3:04:05.006", -time.Second: "+00:00.000",
	} {
		if got := offset(d); got != want {
			t.Errorf("offset(%v) = %q, want %q", d, got, want)
		}
	}
}
