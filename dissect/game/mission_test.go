package game

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/internal/fixture"
)

// Script messages: CHAT 0x2C, TEAM_CHAT 0x2D, MISSION_INIT 0x35,
// SCORE_CHANGE 0x36, SCORE 0x37, END_GAME 0x38, RESTART_GAME 0x39,
// SCORE_INIT 0x3F, TEAM_SCORE 0x40, TEAM_MESSAGE 0x41.

const scriptDoc = "OpenBC docs/wire-formats/script-message-wire-format/"

var (
	// No captured chat bytes are published. This is the worked example both
	// seeds/001 ("Byte-By-Byte Wire Example: CHAT_MESSAGE") and the OpenBC
	// page give for WriteChar(0x2C), WriteLong(2), WriteShort(5),
	// Write("hello"): an illustration of the script's output, not a
	// capture. (seeds/001's transport header for it says length 0x0F where
	// the message is 17 bytes; the game payload itself is consistent.)
	_ = addReal(realCase{
		name:   "CHAT/worked-example",
		source: scriptDoc + "05-5-byte-by-byte-wire-examples.md Example 1 (illustration, not a capture); seeds/001 same example",
		dir:    ServerToClient,
		hex:    "2C 02 00 00 00 05 00 68 65 6C 6C 6F",
		check: func(t *testing.T, m Message) {
			c, ok := m.(*Chat)
			if !ok || c.Op != OpChat || c.SenderID != 2 || c.Text != "hello" {
				t.Fatalf("got %#v", m)
			}
		},
	})
	// Stock host, no time limit so no end-time field: limit 8, system 1,
	// time 0xFF, frags 0xFF.
	_ = addReal(realCase{
		name:   "MISSION_INIT/stock-dedi-packet-20",
		source: "OpenBC docs/protocol/protocol-reference.md §6.3 \"Verified from packet #20\"; docs/bugs/bug-reports/20260222-collision-test-parity-gaps.md (Stock: 35 08 01 FF FF)",
		dir:    ServerToClient,
		hex:    "35 08 01 FF FF",
		check: func(t *testing.T, m Message) {
			got, ok := m.(*MissionInit)
			want := MissionInit{PlayerLimit: 8, System: 1, TimeLimit: NoLimit, FragLimit: NoLimit}
			if !ok || *got != want {
				t.Fatalf("got %#v, want %#v", m, want)
			}
		},
	})
	// Stock host after a collision death: no killer (0, so no kills/score
	// fields), victim 2 with 1 death, no other score updates.
	_ = addReal(realCase{
		name:   "SCORE_CHANGE/stock-collision-kill",
		source: "OpenBC docs/network-flows/wire-format-audit/15-collision-test-2026-02-22.md (ScoreChange row); docs/bugs/bug-reports/20260222-collision-test-parity-gaps.md",
		dir:    ServerToClient,
		hex:    "36 00 00 00 00 02 00 00 00 01 00 00 00 00",
		check: func(t *testing.T, m Message) {
			got, ok := m.(*ScoreChange)
			if !ok || got.KillerID != 0 || got.KillerKills != 0 || got.KillerScore != 0 ||
				got.VictimID != 2 || got.VictimDeaths != 1 || len(got.Others) != 0 {
				t.Fatalf("got %#v", m)
			}
		},
	})
	// END_GAME as the docs spell out the script's output (illustrations of
	// WriteChar(0x38) + WriteInt(reason), not captures).
	_ = addReal(realCase{
		name:   "END_GAME/worked-example-reason-3",
		source: scriptDoc + "05-5-byte-by-byte-wire-examples.md Example 3 (illustration, not a capture)",
		dir:    ServerToClient,
		hex:    "38 03 00 00 00",
		check: func(t *testing.T, m Message) {
			if got, ok := m.(*EndGame); !ok || got.Reason != EndScoreLimit {
				t.Fatalf("got %#v", m)
			}
		},
	})
	_ = addReal(realCase{
		name:   "END_GAME/worked-example-reason-2",
		source: scriptDoc + "04-4-wire-format.md (illustration, not a capture)",
		dir:    ServerToClient,
		hex:    "38 02 00 00 00",
		check: func(t *testing.T, m Message) {
			if got, ok := m.(*EndGame); !ok || got.Reason != EndFragLimit {
				t.Fatalf("got %#v", m)
			}
		},
	})
)

func TestChatVariants(t *testing.T) {
	// TEAM_CHAT is synthetic: no source quotes its bytes.
	for _, m := range []*Chat{
		{Op: OpChat, SenderID: 1, Text: "gg"},
		{Op: OpTeamChat, SenderID: 3, Text: "flank left"},
		{Op: OpChat, SenderID: 2, Text: ""},
		{Op: OpTeamChat, SenderID: -1, Text: "\xff\x00raw"},
	} {
		got := roundTrip(t, m, ClientToServer)
		if got.Opcode() != m.Op {
			t.Fatalf("opcode %v, want %v", got.Opcode(), m.Op)
		}
	}
	b := (&Chat{Op: OpTeamChat, SenderID: 2, Text: "hello"}).Append(nil)
	if want := fixture.Unhex(t, "2D 02 00 00 00 05 00 68 65 6C 6C 6F"); !bytes.Equal(b, want) {
		t.Fatalf("team chat % X, want % X", b, want)
	}
	if b := (&Chat{Text: "x"}).Append(nil); b[0] != byte(OpChat) {
		t.Fatalf("zero Op encodes as %#02x", b[0])
	}
}

func TestMissionInitVariants(t *testing.T) {
	for _, m := range []*MissionInit{
		{PlayerLimit: 8, System: 1, TimeLimit: 10, EndTime: 645, FragLimit: NoLimit},
		{PlayerLimit: 2, System: 9, TimeLimit: NoLimit, FragLimit: 20},
		{PlayerLimit: 16, System: 0, TimeLimit: 0, EndTime: -1, FragLimit: 0},
	} {
		roundTrip(t, m, ServerToClient)
	}
	// The end time is present exactly when a time limit is set.
	if n := len((&MissionInit{TimeLimit: 5}).Append(nil)); n != 9 {
		t.Fatalf("with time limit: %d bytes, want 9", n)
	}
	if n := len((&MissionInit{TimeLimit: NoLimit, EndTime: 99}).Append(nil)); n != 5 {
		t.Fatalf("without time limit: %d bytes, want 5", n)
	}
}

func TestScoreChangeVariants(t *testing.T) {
	for _, m := range []*ScoreChange{
		{KillerID: 3, KillerKills: 4, KillerScore: 1250, VictimID: 2, VictimDeaths: 5},
		{KillerID: 2, KillerKills: 1, KillerScore: 100, VictimID: 4, VictimDeaths: 1,
			Others: []PlayerScore{{PlayerID: 3, Score: 40}, {PlayerID: 5, Score: -12}}},
		{VictimID: 3, VictimDeaths: 2, Others: []PlayerScore{{PlayerID: 2, Score: 7}}},
	} {
		roundTrip(t, m, ServerToClient)
	}
	// A count the message cannot hold fails as truncated.
	b := fixture.Unhex(t, "36 00000000 02000000 01000000 05 03000000 28000000")
	if res := NewDecoder().Decode(b, ServerToClient); !errors.Is(res.Err, dissect.ErrShort) {
		t.Fatalf("short update list: %+v", res)
	}
}

func TestScoreSynthetic(t *testing.T) {
	// Synthetic: no source quotes bytes of SCORE (0x37).
	m := &Score{PlayerID: 2, Kills: 3, Deaths: 1, Score: -250}
	roundTrip(t, m, ServerToClient)
	if n := len(m.Append(nil)); n != 17 {
		t.Fatalf("%d bytes, want 17", n)
	}
}

func TestEndGameReasons(t *testing.T) {
	for r := EndOver; r <= EndEnterpriseDead; r++ {
		res := NewDecoder().Decode((&EndGame{Reason: r}).Append(nil), ServerToClient)
		if res.Err != nil || res.Warning != "" || res.Msg.(*EndGame).Reason != r {
			t.Fatalf("reason %d: %+v", r, res)
		}
	}
	res := NewDecoder().Decode((&EndGame{Reason: 42}).Append(nil), ServerToClient)
	if res.Err != nil || res.Warning == "" || res.Msg.String() != "reason=reason(42)" {
		t.Fatalf("reason 42: %+v %q", res, res.Msg)
	}
	j, _ := json.Marshal(&EndGame{Reason: EndTimeUp})
	if string(j) != `{"reason":1}` {
		t.Fatalf("json %s", j)
	}
}

func TestTeamMessagesSynthetic(t *testing.T) {
	// Synthetic: no source quotes bytes of 0x3F, 0x40 or 0x41.
	for _, c := range []struct {
		m Message
		n int
	}{
		{&ScoreInit{PlayerID: 2, Kills: 1, Deaths: 0, Score: 300, Team: 1}, 18},
		{&ScoreInit{PlayerID: 3, Team: NoTeam}, 18},
		{&TeamScore{Team: 0, Kills: 4, Score: 1234}, 10},
		{&TeamMessage{PlayerID: 2, Team: 1}, 6},
	} {
		roundTrip(t, c.m, ServerToClient)
		if n := len(c.m.Append(nil)); n != c.n {
			t.Errorf("%T: %d bytes, want %d", c.m, n, c.n)
		}
	}
	b := (&TeamScore{Team: 1, Kills: 2, Score: 3}).Append(nil)
	if want := fixture.Unhex(t, "40 01 02000000 03000000"); !bytes.Equal(b, want) {
		t.Fatalf("team score % X, want % X", b, want)
	}
}

var scriptFuzzOps = []Opcode{OpChat, OpTeamChat, OpMissionInit, OpScoreChange, OpScore,
	OpEndGame, OpRestartGame, OpScoreInit, OpTeamScore, OpTeamMessage}

func FuzzScriptMessages(f *testing.F) {
	fuzzSeed(f, scriptFuzzOps)
	f.Add(uint8(2), []byte{8, 1, 10, 0x85, 2, 0, 0, 20})
	f.Add(uint8(3), fixture.Unhex(f, "02000000 01000000 64000000 04000000 01000000 01 03000000 28000000"))
	f.Fuzz(func(t *testing.T, sel uint8, body []byte) {
		fuzzOne(t, scriptFuzzOps[int(sel)%len(scriptFuzzOps)], body)
	})
}

func BenchmarkScriptDecode(b *testing.B) {
	msgs := [][]byte{
		fixture.Unhex(b, "2C 02 00 00 00 05 00 68 65 6C 6C 6F"),
		fixture.Unhex(b, "35 08 01 FF FF"),
		fixture.Unhex(b, "36 00 00 00 00 02 00 00 00 01 00 00 00 00"),
		fixture.Unhex(b, "38 03 00 00 00"),
	}
	benchDecode(b, ServerToClient, msgs)
}
