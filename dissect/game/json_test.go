package game

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/internal/fixture"
	"github.com/bcwire/bcwire/internal/jsonenc"
)

// checkJSON holds m's AppendJSON to json.Marshal. For the messages whose
// AppendJSON is generated (zjson.go), json.Marshal writes the struct tags
// by reflection, an independent path; the hand-written ones implement
// MarshalJSON with AppendJSON, and the goldens (TestAppendJSONGolden) hold
// their bytes.
func checkJSON(t testing.TB, m Message) {
	t.Helper()
	want, wantErr := json.Marshal(m)
	a, ok := m.(jsonenc.Appender)
	if !ok {
		t.Fatalf("%T has no AppendJSON", m)
	}
	got, gotOK := jsonenc.Append([]byte("prefix"), a)
	if wantErr != nil {
		if gotOK || string(got) != "prefix" {
			t.Fatalf("%T %s: AppendJSON appended %s, but json.Marshal failed: %v", m, m, got[6:], wantErr)
		}
		return
	}
	if !gotOK || !bytes.Equal(got[6:], want) {
		t.Fatalf("%T %s:\nAppendJSON   %s\njson.Marshal %s", m, m, got[6:], want)
	}
}

// TestAppendJSONRealCases: the real messages of every opcode, decoded in
// both directions, and every opcode byte with a few bodies.
func TestAppendJSONRealCases(t *testing.T) {
	d := jsonDecoder(t)
	for _, c := range realCases {
		b := fixture.Unhex(t, c.hex)
		for _, dir := range []Direction{c.dir, ClientToServer, ServerToClient, DirUnknown} {
			checkJSON(t, d.Decode(b, dir).Msg)
		}
		for n := range len(b) { // and every truncation
			checkJSON(t, d.Decode(b[:n], c.dir).Msg)
		}
	}
	for op := range 256 {
		for _, body := range [][]byte{nil, {0}, {0, 0, 0, 0, 1, 0, 0, 0}, bytes.Repeat([]byte{0xFF}, 40)} {
			checkJSON(t, d.Decode(append([]byte{byte(op)}, body...), ServerToClient).Msg)
		}
	}
}

// TestEveryOpcodeHasAppendJSON: every registered message type, and Raw.
func TestEveryOpcodeHasAppendJSON(t *testing.T) {
	for op := range 256 {
		m := New(Opcode(op))
		if m == nil {
			m = &Raw{Op: Opcode(op)}
		}
		if _, ok := m.(jsonenc.Appender); !ok {
			t.Errorf("%v: %T has no AppendJSON", Opcode(op), m)
		}
	}
}

// TestAppendJSONValues: the messages of jsonValueCases.
func TestAppendJSONValues(t *testing.T) {
	for _, m := range jsonValueCases() {
		checkJSON(t, m)
	}
}

// jsonValueCases are messages whose fields hold what real traffic does
// not: NaN and infinite floats, every event class, names needing escapes,
// nil and empty slices.
func jsonValueCases() []Message {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	negZero := float32(math.Copysign(0, -1))
	contacts := []dissect.Contact{{Dir: dissect.Dir3{127, -128, 0}, Mag: 255}, {}}
	events := []Event{}
	for _, class := range []EventClass{EventClassBase, EventClassSubsystem, EventClassSubsystemControl,
		EventClassChar, EventClassObjPtr, EventClassDeletePlayer, EventClassCollision, EventClassStartFiring,
		EventClassObjectExploding, EventClassStartWarp, 0x1234} {
		for _, f := range []float32{0, 1.5, nan, inf, -inf, 1e-7, 1e21, 123456789} {
			events = append(events, Event{Class: class, Code: ETWeaponFired, Source: 0xFFFFFFFF, Dest: 0x3FFFFFFF,
				Value: 2, ObjPtr: 0x40000000, FiringPlayer: -1, Lifetime: f, Contacts: contacts, Force: f,
				FiringData: [8]byte{1, 2, 3}, SetName: []byte("Multi<1>&\xff\u2028"),
				Destination: dissect.Vec3{X: f, Y: -f, Z: 0.00005}, Speed: f, Extra: []byte{0xAB}})
		}
	}
	events = append(events, Event{Class: EventClassCollision}, Event{Class: 0x99, Code: 0x12345678})
	var msgs []Message
	for _, e := range events {
		msgs = append(msgs, &PythonEvent{Op: OpPythonEvent, Event: e})
		for _, op := range []Opcode{OpSetPhaserLevel, OpTorpTypeChange, OpStartWarp} {
			msgs = append(msgs, &EventForward{Op: op, Event: e})
		}
	}
	for _, v := range []uint8{0, 1, 2, 3, 200} {
		msgs = append(msgs, &EventForward{Op: OpSetPhaserLevel, Event: Event{Class: EventClassChar, Value: v}},
			&EventForward{Op: OpTorpTypeChange, Event: Event{Class: EventClassChar, Value: v}})
	}
	msgs = append(msgs, &EventForward{Op: OpStartCloaking, Bare: true, Object: 0x3FFFFFFF})
	for _, f := range []float32{0, nan, inf, -inf, 1e-7, 3.4e38, negZero, 82.13282} {
		msgs = append(msgs,
			&Settings{GameTime: f, Map: "Multiplayer.<Episode>\n", ChecksumCorrection: true, CorrectionData: HexData{0xAB}},
			&Settings{GameTime: f},
			&CollisionEffect{Class: EventClassCollision, Code: ETCollisionEffect, Contacts: contacts, Force: f},
			&CollisionEffect{Force: f},
			&ObjCreate{HasTeam: true, Class: ClassShip, Species: 5, Position: dissect.Vec3{X: f, Y: 1e30, Z: -f},
				Orientation: Quaternion{W: f, X: 1e-7, Y: negZero, Z: 1}, Speed: f, Direction: dissect.Dir3{1},
				PlayerName: "\"Cady\" <3 \x00", SetName: "\xff"},
			&ObjCreate{Class: ClassShip, Species: 200, Speed: f},
			&ObjCreate{Class: ClassTorpedo, TorpedoType: 200},
			&ObjCreate{Class: 0x1234},
			&StateUpdate{Object: 1, GameTime: f, Flags: 0xFF, Position: dissect.Vec3{X: f}, HasHash: true, Hash: 0xBEEF,
				SubsystemsUndecoded: true, SubsystemLeadBits: []bool{true, false}, SubsystemData: []byte{1}},
			&StateUpdate{GameTime: f, Flags: 0x7F, Subsystems: []SubsystemState{
				{Index: 3, Format: SubsystemPowered, HasPower: true, Power: 100, Children: []uint8{1, 2},
					ChildNames: []string{"a", ""}},
				{Index: 4, Name: "Warp <Core>", Format: SubsystemPower, MainBattery: 1, BackupBattery: 2},
				{Format: 7, Children: []uint8{9}},
			}, Class: ShipByName("Sovereign")},
			&StateUpdate{Flags: StateSubsystems | StateWeapons, Weapons: []WeaponHealth{{1, 2}}},
			&StateUpdate{Flags: StateSubsystems | StateWeapons},
		)
	}
	msgs = append(msgs,
		&Raw{Op: 0x70, Data: []byte{0xDE, 0xAD}}, &Raw{},
		&Dead{Op: OpDead04}, &Dead{Op: OpDead05, Data: HexData{0xF0}},
		&TorpedoFire{Flags: TorpedoNoTarget, Type: 99}, &TorpedoFire{Target: 0x3FFFFFFF, TargetPoint: contacts[0]},
		&BeamFire{MoreFlags: BeamHasTarget, Target: 1}, &BeamFire{},
		&ChecksumResponse{}, &ChecksumResponse{Round: 0, RefHash: 1, Tree: ChecksumTree{Files: []ChecksumFile{},
			Subdirs: []ChecksumSubdir{{Name: 2, Tree: ChecksumTree{Files: []ChecksumFile{{3, 4}}}}, {}}}},
		&ChecksumResponse{Round: 2, Tree: ChecksumTree{Subdirs: []ChecksumSubdir{}}},
		&ScoreChange{}, &ScoreChange{KillerID: 2, KillerKills: 1, Others: []PlayerScore{}},
		&ScoreChange{VictimID: 3, KillerScore: -1, Others: []PlayerScore{{1, 2}, {3, 4}}},
		&MissionInit{EndTime: 5}, &MissionInit{TimeLimit: NoLimit},
		&Chat{Op: OpChat, SenderID: -1, Text: "<b>hi</b> & \"bye\"\t\u2029\xc3"},
		&EnterSet{Object: 5, SetName: "x", Unterminated: true}, &EnterSet{},
		&DeletePlayerUI{Class: 0x77, Code: 0x88}, &DeletePlayerAnim{Name: "\x7f"},
		&FileTransfer{Name: "a\\b", Data: HexData{1, 2}}, &FileTransfer{},
		&Explosion{Object: 0x3FFFFFFF, Impact: dissect.CV4{Dir: dissect.Dir3{1, 2, 3}, Mag: 0xFFFF}, Radius: 0x8001, Damage: 7},
		&EndGame{Reason: 99}, &ScoreInit{Team: NoTeam}, &TeamScore{Kills: -5}, &TeamMessage{PlayerID: 1 << 30},
		&UICollision{CollisionDamage: true}, &NewPlayerInGame{Flag: true},
		&ChecksumRequest{Round: FinalChecksumRound, Dir: "scripts/", Filter: "*.pyc"},
		&ChecksumFail{Op: OpVersionMismatch, File: "x"},
	)
	return msgs
}

// jsonFloatCases covers every decade a float32 holds and the cut-offs
// between fixed and exponent forms.
func jsonFloatCases() []float32 {
	vs := []float32{0, float32(math.Copysign(0, -1)), 1e-7, 1e-6, 1e20, 1e21, 1e-5, 1e-4, 123456, 1234567,
		12345678, 82.13282, math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32,
		float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}
	for e := -45; e <= 38; e++ {
		p := float32(math.Pow(10, float64(e)))
		vs = append(vs, p, -p, p*1.5, -p*7.77777, math.Nextafter32(p, 0), math.Nextafter32(p, 2*p))
	}
	r := rand.New(rand.NewPCG(7, 8))
	for range 20000 {
		vs = append(vs, math.Float32frombits(r.Uint32()), float32(r.NormFloat64()*1000))
	}
	return vs
}

// TestFloatForms holds the game's float form to fmt's shortest form, NaN
// and infinities as null, and Settings' game time, which encoding/json
// formats itself, to encoding/json, for floats of every magnitude.
func TestFloatForms(t *testing.T) {
	for _, f := range jsonFloatCases() {
		want := "null"
		if f == f && !math.IsInf(float64(f), 0) {
			want = fmt.Sprint(f)
		}
		if got := string(appendJSONF32(nil, f)); got != want {
			t.Fatalf("appendJSONF32(%v) = %s, want %s", f, got, want)
		}
		checkJSON(t, &Settings{GameTime: f})
	}
}

// FuzzAppendJSON decodes random messages of every opcode, in both
// directions and with the ships of the real cases known, and holds their
// AppendJSON to json.Marshal (see checkJSON).
func FuzzAppendJSON(f *testing.F) {
	for _, c := range realCases {
		b := fixture.Unhex(f, c.hex)
		f.Add(b[0], b[1:])
	}
	for op := range 256 {
		f.Add(uint8(op), []byte{})
	}
	d := jsonDecoder(f)
	f.Fuzz(func(t *testing.T, op uint8, body []byte) {
		in := append([]byte{op}, body...)
		for _, dir := range []Direction{ClientToServer, ServerToClient} {
			checkJSON(t, d.Decode(in, dir).Msg)
		}
	})
}

// TestAppendJSONAllocatesNothing: every real message, appended to a buffer
// with room.
func TestAppendJSONAllocatesNothing(t *testing.T) {
	d := jsonDecoder(t)
	buf := make([]byte, 0, 1<<16)
	for _, c := range realCases {
		m := d.Decode(fixture.Unhex(t, c.hex), c.dir).Msg
		a := m.(jsonenc.Appender)
		if n := testing.AllocsPerRun(20, func() { a.AppendJSON(buf[:0]) }); n != 0 {
			t.Errorf("%s: %v allocations", c.name, n)
		}
	}
}

func checkShortF32(t *testing.T, f float32) {
	t.Helper()
	want := strconv.AppendFloat([]byte("x"), float64(f), 'g', -1, 32)
	if got, ok := appendShortF32([]byte("x"), f); ok && string(got) != string(want) {
		t.Fatalf("appendShortF32(%v) = %s, strconv %s", f, got, want)
	} else if !ok && string(got) != "x" {
		t.Fatalf("appendShortF32(%v) refused but appended %q", f, got)
	}
}

// appendShortF32 writes what strconv writes, for game times and positions
// of every magnitude it takes, both sides of its bounds and of powers of
// two and ten. (An exhaustive run over every float32 from 2e-4 to 999999,
// both signs, found no difference, 2026-11-26.)
func TestShortF32MatchesStrconv(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	for range 300000 {
		checkShortF32(t, math.Float32frombits(r.Uint32()))
		checkShortF32(t, float32(r.Float64()*1000))
		checkShortF32(t, float32(r.IntN(100000))/1000) // game times: milliseconds
	}
	for _, f := range []float32{2e-4, 1.9999e-4, 999999, 1e6, 0.1, 0.5, 1, 10, 99.46061, 55.5, 1.5, 3.4028235e38} {
		for _, g := range []float32{f, -f, math.Nextafter32(f, 0), math.Nextafter32(f, 2e38)} {
			checkShortF32(t, g)
		}
	}
	for e := -13; e <= 20; e++ {
		p := float32(math.Ldexp(1, e))
		checkShortF32(t, p)
		checkShortF32(t, math.Nextafter32(p, 0))
		checkShortF32(t, math.Nextafter32(p, 2e38))
	}
}

func FuzzShortF32MatchesStrconv(f *testing.F) {
	f.Add(uint32(0x42C6EB85)) // 99.46
	f.Fuzz(func(t *testing.T, bits uint32) { checkShortF32(t, math.Float32frombits(bits)) })
}

// A player's ship id is written from the tables (JSON and text), the same
// bytes as made from the parts; ids around each ship's and the ends of the player
// ranges take the parts.
func TestObjectIDJSONTableMatchesParts(t *testing.T) {
	ids := []ObjectID{0, 1, firstPlayerID - 1, 0xFFFFFFFF, PlayerObjectID(maxPlayerSlots), PlayerObjectID(maxPlayerSlots) - 1}
	for s := range maxPlayerSlots + 1 {
		p := PlayerObjectID(s)
		ids = append(ids, p, p+1, p-1, p+idsPerPlayer-1)
	}
	for _, id := range ids {
		got, want := string(id.AppendJSON([]byte("x"))), "x"+string(id.appendJSONLong(nil))
		if got != want {
			t.Fatalf("%v: AppendJSON %s, parts %s", id, got, want)
		}
		got, want = string(id.AppendString([]byte("x"))), "x"+string(id.appendStringLong(nil))
		if got != want {
			t.Fatalf("%v: AppendString %s, parts %s", id, got, want)
		}
	}
	if got := string(PlayerObjectID(2).AppendJSON(nil)); got != `{"id":"0x4007FFFF","slot":2}` {
		t.Fatalf("player 2's ship: %s", got)
	}
	if got := PlayerObjectID(2).String(); got != "0x4007FFFF(slot 2)" {
		t.Fatalf("player 2's ship: %s", got)
	}
}
