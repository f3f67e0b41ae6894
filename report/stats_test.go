package report

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/session"
)

// sampleCounts counts a few hand-built records.
func sampleCounts() *session.Counts {
	var c session.Counts
	dec := game.NewDecoder()
	t0 := time.Date(2024, 5, 1, 20, 0, 0, 0, time.UTC)
	add := func(i int, dir game.Direction, typ dissect.TransportType, payload []byte) {
		m := dissect.Message{Type: typ, Payload: payload, Raw: make([]byte, 3+len(payload))}
		r := flow.Record{Kind: flow.KindMessage, Time: t0.Add(time.Duration(i) * time.Second), Dir: dir, Msg: &m}
		if typ == dissect.TypeData {
			res := dec.Decode(payload, dir)
			r.Game, r.Payload = &res, payload
		}
		c.Add(&r)
	}
	for i := range 120 {
		add(i, game.ClientToServer, dissect.TypeData, (&game.Chat{Op: game.OpChat, SenderID: 2, Text: "x"}).Append(nil))
		add(i, game.ServerToClient, dissect.TypeAck, nil)
	}
	add(120, game.ServerToClient, dissect.TypeData, (&game.ChecksumComplete{}).Append(nil))
	gs := dissect.GameSpy{Query: true, Kind: "status"}
	c.Add(&flow.Record{Kind: flow.KindGameSpy, Dir: game.ClientToServer, GameSpy: &gs})
	return &c
}

func TestStatsJSONShape(t *testing.T) {
	var buf bytes.Buffer
	p := NewStatsPrinter(&buf, true, true, true)
	if err := p.Totals([]string{"a.pcap"}, sampleCounts(), 0); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Sessions  []any `json:"sessions"`
		Files     []string
		Duration  float64 `json:"duration_s"`
		Opcodes   []map[string]any
		Transport []map[string]any
		GameSpy   []map[string]any
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("%v\n%s", err, buf.Bytes())
	}
	if doc.Sessions == nil || len(doc.Sessions) != 0 || doc.Duration != 120 || len(doc.Files) != 1 {
		t.Errorf("%s", buf.Bytes())
	}
	if len(doc.Opcodes) != 2 {
		t.Fatalf("opcodes %v", doc.Opcodes)
	}
	chat := doc.Opcodes[0]
	for k, want := range map[string]any{"dir": "C->S", "opcode": 44.0, "name": "CHAT", "count": 120.0,
		"bytes": 120.0 * 8, "share": 1.0, "per_min": 60.0, "per_15min": 900.0} {
		if chat[k] != want {
			t.Errorf("chat row %s = %v, want %v", k, chat[k], want)
		}
	}
	if len(doc.Transport) != 3 || doc.Transport[1]["dir"] != "S->C" || doc.Transport[1]["type"] != 1.0 || doc.Transport[1]["count"] != 120.0 {
		t.Errorf("transport %v", doc.Transport)
	}
	if len(doc.GameSpy) != 1 || doc.GameSpy[0]["kind"] != "status" {
		t.Errorf("gamespy %v", doc.GameSpy)
	}
}

func TestStatsText(t *testing.T) {
	render := func(useColor bool) string {
		var buf bytes.Buffer
		p := NewStatsPrinter(&buf, false, useColor, true)
		p.Totals([]string{"a.pcap"}, sampleCounts(), 0)
		return buf.String()
	}
	out := render(false)
	for _, w := range []string{"Total: 1 file(s), 0 session(s)", "Game messages client to server: 120 messages, 960 bytes",
		"0x2C    CHAT", "100.0%", "60.0", "900.0", "Transport messages", "S->C  0x01  ack", "status"} {
		if !strings.Contains(out, w) {
			t.Errorf("lacks %q:\n%s", w, out)
		}
	}
	if out != render(false) {
		t.Errorf("output not deterministic")
	}
	if strings.Contains(out, "\x1b[") || !strings.Contains(render(true), "\x1b[") {
		t.Errorf("color codes wrong")
	}
}
