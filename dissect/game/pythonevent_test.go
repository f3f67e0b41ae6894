package game

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/internal/fixture"
)

// Real PythonEvent bytes: the decoded packet examples of OpenBC's
// docs/wire-formats/pythonevent-wire-format/08-decoded-packet-examples.md
// and the example of docs/wire-formats/tgobjptrevent-wire-format.md.

var _ = addReal(realCase{
	name:   "PythonEvent ADD_TO_REPAIR_LIST",
	source: "OpenBC docs/wire-formats/pythonevent-wire-format/08-decoded-packet-examples.md, Example 1",
	dir:    ServerToClient,
	hex:    "06 01 01 00 00 DF 00 80 00 2A 00 00 00 1E 00 00 00",
	check: func(t *testing.T, m Message) {
		e := evAs[*PythonEvent](t, m)
		evWant(t, "op", e.Op, OpPythonEvent)
		evWant(t, "class", e.Class, EventClassSubsystem)
		evWant(t, "code", e.Code, ETAddToRepairList)
		evWant(t, "source (damaged subsystem)", e.Source, ObjectID(0x2A))
		evWant(t, "dest (repair subsystem)", e.Dest, ObjectID(0x1E))
	},
})

var _ = addReal(realCase{
	name:   "PythonEvent WEAPON_FIRED",
	source: "OpenBC docs/wire-formats/pythonevent-wire-format/08-decoded-packet-examples.md, Example 2",
	dir:    ServerToClient,
	hex:    "06 0C 01 00 00 7C 00 80 00 FF FF FF 3F 00 00 00 00 3E 00 C0 3F",
	check: func(t *testing.T, m Message) {
		e := evAs[*PythonEvent](t, m)
		evWant(t, "class", e.Class, EventClassObjPtr)
		evWant(t, "code", e.Code, ETWeaponFired)
		evWant(t, "source", e.Source, PlayerObjectID(0))
		evWant(t, "dest", e.Dest, ObjectID(0))
		evWant(t, "obj_ptr (weapon subsystem)", e.ObjPtr, ObjectID(0x3FC0003E))
	},
})

var _ = addReal(realCase{
	name:   "PythonEvent OBJECT_EXPLODING",
	source: "OpenBC docs/wire-formats/pythonevent-wire-format/08-decoded-packet-examples.md, Example 3",
	dir:    ServerToClient,
	hex:    "06 29 81 00 00 4E 00 80 00 FF FF FF 3F FF FF FF FF 02 00 00 00 00 00 80 3F",
	check: func(t *testing.T, m Message) {
		e := evAs[*PythonEvent](t, m)
		evWant(t, "class", e.Class, EventClassObjectExploding)
		evWant(t, "code", e.Code, ETObjectExploding)
		evWant(t, "source (exploding ship)", e.Source, PlayerObjectID(0))
		evWant(t, "dest (sentinel -1)", e.Dest, ObjectID(0xFFFFFFFF))
		evWant(t, "firing player", e.FiringPlayer, int32(2))
		evWant(t, "lifetime", e.Lifetime, float32(1.0))
	},
})

var _ = addReal(realCase{
	name:   "PythonEvent REPAIR_COMPLETED",
	source: "OpenBC docs/wire-formats/pythonevent-wire-format/08-decoded-packet-examples.md, Example 4",
	dir:    ServerToClient,
	hex:    "06 01 01 00 00 74 00 80 00 2A 00 00 00 1E 00 00 00",
	check: func(t *testing.T, m Message) {
		e := evAs[*PythonEvent](t, m)
		evWant(t, "class", e.Class, EventClassSubsystem)
		evWant(t, "code", e.Code, ETRepairCompleted)
		evWant(t, "source", e.Source, ObjectID(0x2A))
		evWant(t, "dest", e.Dest, ObjectID(0x1E))
	},
})

var _ = addReal(realCase{
	name:   "PythonEvent WEAPON_FIRED self-reference",
	source: "OpenBC docs/wire-formats/tgobjptrevent-wire-format.md, Decoded Packet Example",
	dir:    ServerToClient,
	hex:    "06 0C 01 00 00 7C 00 80 00 FF FF FF 3F FF FF FF 3F 2A 00 00 00",
	check: func(t *testing.T, m Message) {
		e := evAs[*PythonEvent](t, m)
		evWant(t, "class", e.Class, EventClassObjPtr)
		evWant(t, "code", e.Code, ETWeaponFired)
		evWant(t, "source", e.Source, ObjectID(0x3FFFFFFF))
		evWant(t, "dest", e.Dest, ObjectID(0x3FFFFFFF))
		evWant(t, "obj_ptr", e.ObjPtr, ObjectID(0x2A))
	},
})

// No source quotes a PythonEvent2 (0x0D) message; this one is synthetic,
// shaped as the docs describe the stock traffic (TGObjPtrEvent carrying
// ET_TARGET_WAS_CHANGED, obj_ptr = the previous target).
func TestPythonEvent2Synthetic(t *testing.T) {
	evRoundTrip(t, &PythonEvent{Op: OpPythonEvent2, Event: Event{
		Class: EventClassObjPtr, Code: ETTargetWasChanged,
		Source: PlayerObjectID(1), Dest: PlayerObjectID(2), ObjPtr: PlayerObjectID(0),
	}})
}

// Every class the sources describe, carried by PythonEvent.
func TestPythonEventClassesRoundTrip(t *testing.T) {
	events := []Event{
		{Class: EventClassBase, Code: ETSetPlayer, Source: 0, Dest: 0xFFFFFFFF},
		{Class: EventClassSubsystem, Code: ETRepairCannotBeCompleted, Source: 0x30, Dest: 0x1E},
		{Class: EventClassSubsystemControl, Code: ETSubsystemStatusNotify, Source: 0x40000010, Value: 1},
		{Class: EventClassChar, Code: ETSetPhaserLevel, Source: PlayerObjectID(3), Value: 2},
		{Class: EventClassObjPtr, Code: ETPhaserStartedFiring, Source: 0x3FC0003E, ObjPtr: PlayerObjectID(1)},
		{Class: EventClassDeletePlayer, Code: ETNewPlayerInGame, Dest: 0x0000064F, Value: 2},
		{Class: EventClassCollision, Code: ETHostCollisionEffect, Dest: PlayerObjectID(0),
			Contacts: []dissect.Contact{{Dir: dissect.Dir3{13, 126, 0}, Mag: 217}, {Dir: dissect.Dir3{-5, 126, 0}, Mag: 216}},
			Force:    1281.0228},
		{Class: EventClassStartFiring, Code: ETStartFiringNotify, Source: 0, Dest: 0x40000005,
			FiringData: [8]byte{1, 2, 3, 4, 5, 6, 7, 8}},
		{Class: EventClassObjectExploding, Code: ETObjectExploding, Source: PlayerObjectID(2), Dest: 0,
			FiringPlayer: 3, Lifetime: 2.5},
		{Class: EventClassStartWarp, Code: ETStartWarpNotify, Source: PlayerObjectID(1),
			SetName: []byte("Systems.Vesuvi.Vesuvi6"), Destination: dissect.Vec3{X: 100, Y: -250.5, Z: 3}, Speed: 9},
		{Class: 0x00001234, Code: 0x00801234, Source: 7, Dest: 8, Extra: []byte{0xAA, 0xBB}},
	}
	for _, e := range events {
		t.Run(e.Class.String(), func(t *testing.T) {
			evRoundTrip(t, &PythonEvent{Op: OpPythonEvent, Event: e})
		})
	}
}

func TestPythonEventUnknownClassWarns(t *testing.T) {
	b := fixture.Unhex(t, "06 34 12 00 00 34 12 80 00 07 00 00 00 08 00 00 00 AA BB")
	res := NewDecoder().Decode(b, ServerToClient)
	if res.Err != nil || len(res.Unparsed) != 0 {
		t.Fatalf("decode: %v unparsed % X", res.Err, res.Unparsed)
	}
	if !strings.Contains(res.Warning, "0x00001234") {
		t.Fatalf("warning %q does not name the class", res.Warning)
	}
	e := evAs[*PythonEvent](t, res.Msg)
	if !bytes.Equal(e.Extra, []byte{0xAA, 0xBB}) {
		t.Fatalf("extra % X", e.Extra)
	}
	j, err := json.Marshal(res.Msg)
	if err != nil || !strings.Contains(string(j), `"extra":"AABB"`) {
		t.Fatalf("json %s %v", j, err)
	}
}

func TestPythonEventKnownClassTrailingBytesUnparsed(t *testing.T) {
	b := fixture.Unhex(t, "06 01 01 00 00 DF 00 80 00 2A 00 00 00 1E 00 00 00 99")
	res := NewDecoder().Decode(b, ServerToClient)
	if res.Err != nil || !bytes.Equal(res.Unparsed, []byte{0x99}) {
		t.Fatalf("err %v unparsed % X", res.Err, res.Unparsed)
	}
}

func TestPythonEventTruncated(t *testing.T) {
	for _, h := range []string{"06", "06 01 01 00", "06 0C 01 00 00 7C 00 80 00 FF FF FF 3F 00 00 00 00 3E 00",
		"06 2A 81 00 00 EC 00 80 00 00 00 00 00 00 00 00 00 05 41 42"} {
		res := NewDecoder().Decode(fixture.Unhex(t, h), ServerToClient)
		if res.Err == nil {
			t.Errorf("%s: no error", h)
		}
		if _, ok := res.Msg.(*Raw); !ok {
			t.Errorf("%s: %T, want *Raw", h, res.Msg)
		}
	}
}

func TestPythonEventJSON(t *testing.T) {
	res := NewDecoder().Decode(fixture.Unhex(t, "06 0C 01 00 00 7C 00 80 00 FF FF FF 3F 00 00 00 00 3E 00 C0 3F"), ServerToClient)
	j, err := json.Marshal(res.Msg)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"class":{"id":"0x0000010C","name":"TGObjPtrEvent"},"code":{"code":"0x0080007C","name":"ET_WEAPON_FIRED"},` +
		`"source":{"id":"0x3FFFFFFF","slot":0},"dest":{"id":"0x00000000"},"obj_ptr":{"id":"0x3FC0003E"}}`
	if string(j) != want {
		t.Fatalf("json\n%s\nwant\n%s", j, want)
	}
	if s := res.Msg.String(); !strings.Contains(s, "ET_WEAPON_FIRED") || !strings.Contains(s, "dst=null") {
		t.Fatalf("String %q", s)
	}
}

func FuzzPythonEvent(f *testing.F) {
	evFuzz(f, []Opcode{OpPythonEvent, OpPythonEvent2})
}

// --- helpers shared by the event and combat tests ---

func evAs[T Message](t *testing.T, m Message) T {
	t.Helper()
	v, ok := m.(T)
	if !ok {
		var zero T
		t.Fatalf("message is %T, want %T", m, zero)
	}
	return v
}

func evWant[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func evNear(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %v, want %v ± %v", what, got, want, tol)
	}
}

// evRoundTrip encodes in, decodes the bytes, and wants the same fields back,
// the same bytes again, a JSON form and no warning.
func evRoundTrip(t *testing.T, in Message) {
	t.Helper()
	b := in.Append(nil)
	res := NewDecoder().Decode(b, DirUnknown)
	if res.Err != nil {
		t.Fatalf("decode % X: %v", b, res.Err)
	}
	if len(res.Unparsed) > 0 {
		t.Fatalf("unparsed % X", res.Unparsed)
	}
	if !reflect.DeepEqual(res.Msg, in) {
		t.Fatalf("decoded\n%#v\nwant\n%#v", res.Msg, in)
	}
	if got := res.Msg.Append(nil); !bytes.Equal(got, b) {
		t.Fatalf("re-encoded % X, want % X", got, b)
	}
	if _, err := json.Marshal(res.Msg); err != nil {
		t.Fatalf("json: %v", err)
	}
	if res.Msg.String() == "" {
		t.Fatal("empty String()")
	}
}

// evFuzz decodes arbitrary bodies under each of ops: no panic, a JSON form
// and a String for whatever decodes, and byte-exact re-encoding of every
// message that decodes cleanly. The real cases with these opcodes seed it.
func evFuzz(f *testing.F, ops []Opcode) {
	for _, c := range realCases {
		b := fixture.Unhex(f, c.hex)
		for i, op := range ops {
			if len(b) > 0 && Opcode(b[0]) == op {
				f.Add(uint8(i), b[1:])
			}
		}
	}
	f.Add(uint8(0), []byte{})
	f.Fuzz(func(t *testing.T, sel uint8, body []byte) {
		p := append([]byte{byte(ops[int(sel)%len(ops)])}, body...)
		res := NewDecoder().Decode(p, ClientToServer)
		_ = res.Msg.String()
		if _, err := json.Marshal(res.Msg); err != nil {
			t.Fatalf("json: %v", err)
		}
		if res.Err != nil || len(res.Unparsed) > 0 {
			return
		}
		if got := res.Msg.Append(nil); !bytes.Equal(got, p) {
			t.Fatalf("re-encoded\n% X\nwant\n% X", got, p)
		}
	})
}

// evHot is one message of each high-rate type this family decodes.
var evHot = []string{
	"06 0C 01 00 00 7C 00 80 00 FF FF FF 3F 00 00 00 00 3E 00 C0 3F",                            // PythonEvent
	"07 28 81 00 00 D8 00 80 00 00 00 00 00 05 00 00 40 01 02 03 04 05 06 07 08",                // StartFiring (synthetic)
	"08 01 01 00 00 DA 00 80 00 00 00 00 00 05 00 00 40",                                        // StopFiring
	"19 0D 00 00 40 02 01 DF 87 11 FF FF 03 40 00 88 D8 5C",                                     // TorpedoFire
	"15 24 81 00 00 50 00 80 00 00 00 00 00 FF FF FF 3F 02 0F 7E 00 DA 00 7E FF D8 51 C3 67 44", // CollisionEffect
	"1A 10 00 00 40 02 DF 87 11 01 FF FF 03 40",                                                 // BeamFire (synthetic)
	"29 FF FF 03 40 00 7F 00 E3 50 E3 50 AA 52",                                                 // Explosion (synthetic)
}

// TestEventDecodeAllocatesNothing holds the hot decoders to zero
// allocations per message once warm. It calls decode directly: the
// Decoder's own per-call cost is not this family's to measure.
func TestEventDecodeAllocatesNothing(t *testing.T) {
	var r dissect.Reader
	ctx := &Context{Dir: ClientToServer}
	for _, h := range evHot {
		b := fixture.Unhex(t, h)
		m := New(Opcode(b[0]))
		run := func() {
			r.ResetAt(b[1:], 1)
			m.decode(&r, ctx)
		}
		run()
		if r.Err() != nil || r.Len() != 0 {
			t.Fatalf("%s: %v, %d bytes left", h, r.Err(), r.Len())
		}
		if n := testing.AllocsPerRun(100, run); n != 0 {
			t.Errorf("%s: %v allocations per decode", h, n)
		}
	}
}

func BenchmarkEventDecode(b *testing.B) {
	d := NewDecoder()
	msgs := make([][]byte, len(evHot))
	for i, h := range evHot {
		msgs[i] = fixture.Unhex(b, h)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, m := range msgs {
			d.Decode(m, ClientToServer)
		}
	}
}

// BenchmarkEventDecodeDirect measures the decoders alone, without the
// Decoder's per-call work.
func BenchmarkEventDecodeDirect(b *testing.B) {
	var r dissect.Reader
	ctx := &Context{Dir: ClientToServer}
	msgs := make([][]byte, len(evHot))
	ms := make([]Message, len(evHot))
	for i, h := range evHot {
		msgs[i] = fixture.Unhex(b, h)
		ms[i] = New(Opcode(msgs[i][0]))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j, p := range msgs {
			r.ResetAt(p[1:], 1)
			ms[j].decode(&r, ctx)
		}
	}
}
