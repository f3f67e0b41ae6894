package stock_test

import (
	"bytes"
	"net/netip"
	"testing"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/server/stock"
)

// TestMatchesStockLikeCapture builds every message of the bundled
// one-player capture's join with server/stock and compares the bytes.
func TestMatchesStockLikeCapture(t *testing.T) {
	rd, err := capture.Open("../../testdata/pcaps/join.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var (
		requests, responses [][]byte
		settings, mission   []byte
		playerUI, score     []byte
		identity            []byte
		reply               []byte
		client              netip.AddrPort
		gameTime            float32
	)
	_, err = flow.Run(rd, flow.New(flow.Options{}), func(r *flow.Record) bool {
		if r.GameSpy != nil && !r.GameSpy.Query && reply == nil {
			reply = r.GameSpy.Append(nil)
		}
		if r.Kind != flow.KindMessage || r.Msg == nil {
			return true
		}
		client = r.Client
		if r.Msg.Type == dissect.TypePeerInfo && r.Dir == game.ServerToClient && identity == nil {
			identity = append([]byte(nil), r.Msg.Payload...)
		}
		if r.Game == nil || r.Game.Msg == nil {
			return true
		}
		b := r.Game.Msg.Append(nil)
		switch m := r.Game.Msg.(type) {
		case *game.ChecksumRequest:
			requests = append(requests, b)
		case *game.ChecksumResponse:
			responses = append(responses, b)
		case *game.Settings:
			settings, gameTime = b, m.GameTime
		case *game.MissionInit:
			mission = b
		case *game.DeletePlayerUI:
			playerUI = b
		case *game.Score:
			score = b
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(requests) != 5 || len(responses) != 5 {
		t.Fatalf("%d requests, %d responses", len(requests), len(responses))
	}
	for i, r := range stock.ChecksumRounds {
		if got := r.Append(nil); !bytes.Equal(got, requests[i]) {
			t.Errorf("round %d request % X, capture % X", i, got, requests[i])
		}
		if got := stock.ChecksumResponse(r.Round).Append(nil); !bytes.Equal(got, responses[i]) {
			t.Errorf("round %d response differs from the capture's", i)
		}
	}
	m := stock.DefaultMatch
	check := func(name string, got, want []byte) {
		t.Helper()
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got % X\nwant % X", name, got, want)
		}
	}
	check("Settings", m.Settings(gameTime, 0).Append(nil), settings)
	check("MISSION_INIT", m.MissionInit(0).Append(nil), mission)
	check("DeletePlayerUI", stock.PlayerJoined(0, 2).Append(nil), playerUI)
	check("SCORE", (&game.Score{PlayerID: 2}).Append(nil), score)
	id := stock.Identity(2, client.Addr(), "Cady2")
	check("keepalive", dissect.AppendControl(nil, &id), identity)
	info := stock.ServerInfo{Hostname: "bcwire synthetic server", HostPort: 22101, MaxPlayers: 8}
	check("GameSpy status", stock.GameSpyReply("status", info, "1.1"), reply)
	if b := m.JoinBundle(1, 0); len(b) != 3 || b[0].Opcode() != game.OpChecksumComplete || b[2].Opcode() != game.OpGameInit {
		t.Errorf("join bundle %v", b)
	}
}

func TestBuildersNeverPanic(t *testing.T) {
	v6 := netip.MustParseAddr("2001:db8::1")
	id := stock.Identity(2, v6, "x")
	if b := dissect.AppendControl(nil, &id); len(b) < 5 || !bytes.Equal(b[1:5], []byte{0, 0, 0, 0}) {
		t.Errorf("IPv6 identity % X", b)
	}
	req := stock.ConnectRequest(netip.AddrPort{})
	_ = dissect.AppendControl(nil, &req)
	_ = stock.Disconnect(2, netip.Addr{})
	for _, kind := range []string{"basic", "info", "rules", "players", "status", "echo", ""} {
		g, err := dissect.ParseGameSpy(stock.GameSpyReply(kind, stock.ServerInfo{Players: []string{"a", "b"}}, "3.1"))
		if err != nil || !g.Final || g.QueryID != "3.1" {
			t.Errorf("%s: %+v %v", kind, g, err)
		}
	}
	if mi := (stock.Match{TimeLimit: 30, FragLimit: -1}).MissionInit(1800); mi.TimeLimit != 30 || mi.EndTime != 1800 || mi.FragLimit != game.NoLimit {
		t.Errorf("limits: %+v", mi)
	}
	if stock.RoundIndex(0xFF) != 4 || stock.RoundIndex(7) != -1 {
		t.Error("RoundIndex")
	}
}
