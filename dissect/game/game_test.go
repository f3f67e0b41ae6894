package game

import (
	"bytes"
	"encoding/json"
	"github.com/bcwire/bcwire/internal/fixture"
	"testing"
)

// TestRealBytes decodes every real case: no error, no leftover bytes, the
// case's field checks, a JSON form, and Append reproducing the bytes.
func TestRealBytes(t *testing.T) {
	for _, c := range realCases {
		t.Run(c.name, func(t *testing.T) {
			b := fixture.Unhex(t, c.hex)
			d := NewDecoder()
			res := d.Decode(b, c.dir)
			if res.Err != nil {
				t.Fatalf("decode: %v", res.Err)
			}
			if len(res.Unparsed) > 0 {
				t.Fatalf("unparsed % X (%s)", res.Unparsed, res.Warning)
			}
			if c.check != nil {
				c.check(t, res.Msg)
			}
			if _, err := json.Marshal(res.Msg); err != nil {
				t.Fatalf("json: %v", err)
			}
			if got := res.Msg.Append(nil); !bytes.Equal(got, b) {
				t.Fatalf("re-encoded\n% X\nwant\n% X", got, b)
			}
			if res.Msg.String() == "" && len(b) > 1 {
				t.Errorf("empty String() for a message with fields")
			}
		})
	}
}

// required lists every opcode the protocol tables define, which must each
// have a decoder, an encoder and at least one real-bytes case.
var required = []Opcode{
	OpSettings, OpGameInit, OpObjCreate, OpObjCreateTeam, OpPythonEvent, OpStartFiring,
	OpStopFiring, OpStopFiringAtTarget, OpSubsystemStatus, OpAddToRepairList, OpClientEvent,
	OpPythonEvent2, OpStartCloaking, OpStopCloaking, OpStartWarp, OpRepairListPriority,
	OpSetPhaserLevel, OpHostMsg, OpDestroyObject, OpCollisionEffect, OpUICollision,
	OpDeletePlayerUI, OpDeletePlayerAnim, OpTorpedoFire, OpBeamFire, OpTorpTypeChange,
	OpStateUpdate, OpObjNotFound, OpRequestObject, OpEnterSet, OpChecksumRequest,
	OpChecksumResponse, OpVersionMismatch, OpSystemChecksumFail, OpFileTransfer,
	OpFileTransferACK, OpChecksumComplete, OpExplosion, OpNewPlayerInGame,
	OpChat, OpTeamChat, OpMissionInit, OpScoreChange, OpScore, OpEndGame, OpRestartGame,
	OpScoreInit, OpTeamScore, OpTeamMessage,
}

// noCapturedBytes lists the opcodes for which no source (seeds, OpenBC docs,
// shared vectors) quotes captured bytes, with what was searched. Each still
// has a decoder, an encoder and synthetic round-trip tests; each needs a
// real-bytes case as soon as a capture shows one, and this test fails when
// a listed opcode gains one (so the list cannot go stale).
var noCapturedBytes = map[Opcode]string{
	OpStartFiring:        "event-forward doc describes the class, quotes no bytes",
	OpStopFiringAtTarget: "not seen in any published trace",
	OpSubsystemStatus:    "layout documented, no bytes quoted",
	OpAddToRepairList:    "not seen in any published trace",
	OpClientEvent:        "not seen in any published trace",
	OpPythonEvent2:       "same layout as 0x06; no 0x0D datagram quoted",
	OpStopCloaking:       "not seen in any published trace",
	OpStartWarp:          "layout documented, no bytes quoted",
	OpRepairListPriority: "layout documented, no bytes quoted",
	OpTorpTypeChange:     "layout documented, no bytes quoted",
	OpBeamFire:           "beam-fire doc gives the layout only",
	OpExplosion:          "explosion doc gives the layout only",
	OpUICollision:        "layout documented (one bit), no bytes quoted",
	OpVersionMismatch:    "layout documented, no bytes quoted",
	OpSystemChecksumFail: "layout documented, no bytes quoted",
	OpFileTransfer:       "layout documented, no bytes quoted",
	OpFileTransferACK:    "layout documented (opcode only), no bytes quoted",
	OpChat:               "only the hand-written CHAT example of seeds/001 and the script docs (an illustration)",
	OpTeamChat:           "same layout as CHAT; no bytes quoted",
	OpScore:              "layout documented, no bytes quoted",
	OpEndGame:            "only hand-written examples in the script docs (illustrations)",
	OpRestartGame:        "opcode only; no bytes quoted",
	OpScoreInit:          "Mission5 layout documented, no bytes quoted",
	OpTeamScore:          "Mission5 layout documented, no bytes quoted",
	OpTeamMessage:        "Mission5 layout documented, no bytes quoted",
	OpObjCreate:          "OpenBC's two stock examples stop after the position; a test checks the fields they give",
	OpDestroyObject:      "layout documented, no bytes quoted",
	OpDeletePlayerAnim:   "layout documented, no stock trace captured one",
	OpObjNotFound:        "layout documented, no bytes quoted",
	OpRequestObject:      "layout documented, no bytes quoted",
	OpEnterSet:           "layout documented, no bytes quoted",
}

func TestOpcodeCoverage(t *testing.T) {
	have := map[Opcode]int{}
	for _, c := range realCases {
		b := fixture.Unhex(t, c.hex)
		if len(b) > 0 && !c.isIllustration() {
			have[Opcode(b[0])]++
		}
	}
	for _, op := range required {
		if New(op) == nil {
			t.Errorf("%v (%#02x): no decoder registered", op, uint8(op))
			continue
		}
		_, undocumented := noCapturedBytes[op]
		switch {
		case have[op] == 0 && !undocumented:
			t.Errorf("%v (%#02x): no real-bytes test case", op, uint8(op))
		case have[op] > 0 && undocumented:
			t.Errorf("%v (%#02x): has a real-bytes case now; remove it from noCapturedBytes", op, uint8(op))
		}
	}
	// Every required opcode must also round-trip from a zero value through
	// Append and Decode (the encoder exists and agrees with the decoder).
	for _, op := range required {
		m := New(op)
		if m == nil {
			continue
		}
		b := m.Append(nil)
		if len(b) == 0 || Opcode(b[0]) != op {
			t.Errorf("%v: zero value encodes to % X", op, b)
			continue
		}
		res := NewDecoder().Decode(b, ServerToClient)
		if res.Err != nil || len(res.Unparsed) > 0 || !bytes.Equal(res.Msg.Append(nil), b) {
			t.Errorf("%v: zero value % X does not round-trip: %+v", op, b, res)
		}
	}
}

func TestCustomScriptMessageIsNotAnError(t *testing.T) {
	d := NewDecoder()
	res := d.Decode([]byte{0xCD, 0x2A, 0, 0, 0}, ServerToClient)
	if res.Err != nil || res.Warning != "" || res.Msg.Opcode().String() != "custom(0xcd)" {
		t.Fatalf("custom message: %+v", res)
	}
	if got := res.Msg.Append(nil); !bytes.Equal(got, []byte{0xCD, 0x2A, 0, 0, 0}) {
		t.Fatalf("raw round trip % X", got)
	}
}

// benchDecode decodes msgs (sent in direction dir) once per iteration with
// one reused Decoder, reporting bytes and allocations.
func benchDecode(b *testing.B, dir Direction, msgs [][]byte) {
	d := NewDecoder()
	n := 0
	for _, m := range msgs {
		n += len(m)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		for _, m := range msgs {
			if res := d.Decode(m, dir); res.Err != nil {
				b.Fatal(res.Err)
			}
		}
	}
}
