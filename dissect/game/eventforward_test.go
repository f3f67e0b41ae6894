package game

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/internal/fixture"
)

// StopFiring from a stock trace. The source's own decode reads the body as
// "obj=0x00000101, event_data=12 bytes (DA 00 80 00 ...)" (seeds/001's
// object-id-first layout); the bytes say otherwise: 01 01 00 00 is the
// TGSubsystemEvent class and DA 00 80 00 is ET_STOP_FIRING_NOTIFY, the
// sender code seeds/001 pairs with 0x08. We follow the bytes.
var _ = addReal(realCase{
	name:   "StopFiring 0x08",
	source: `vectors/stock-datagrams.json, "StopFiring 0x08 datagram (VDAY_REFS, line 2253)"`,
	dir:    ClientToServer,
	hex:    "08 01 01 00 00 DA 00 80 00 00 00 00 00 05 00 00 40",
	check: func(t *testing.T, m Message) {
		e := evAs[*EventForward](t, m)
		evWant(t, "op", e.Op, OpStopFiring)
		evWant(t, "bare", e.Bare, false)
		evWant(t, "class", e.Class, EventClassSubsystem)
		evWant(t, "code", e.Code, ETStopFiringNotify)
		evWant(t, "source", e.Source, ObjectID(0))
		evWant(t, "dest", e.Dest, ObjectID(0x40000005))
		evWant(t, "receiver code", e.ReceiverCode(), ETStopFiring)
	},
})

var _ = addReal(realCase{
	name:   "SetPhaserLevel HIGH",
	source: "OpenBC docs/wire-formats/set-phaser-level-wire-format.md, Example 1",
	dir:    ClientToServer,
	hex:    "12 05 01 00 00 E0 00 80 00 FF FF FF 3F 00 00 00 00 02",
	check: func(t *testing.T, m Message) {
		e := evAs[*EventForward](t, m)
		evWant(t, "op", e.Op, OpSetPhaserLevel)
		evWant(t, "class", e.Class, EventClassChar)
		evWant(t, "code", e.Code, ETSetPhaserLevel)
		evWant(t, "source", e.Source, PlayerObjectID(0))
		evWant(t, "dest", e.Dest, ObjectID(0))
		evWant(t, "value", e.Value, uint8(2))
		evWant(t, "level", e.PhaserLevel(), PhaserHigh)
		evWant(t, "receiver code (no override)", e.ReceiverCode(), ETSetPhaserLevel)
	},
})

// The doc decodes FF FF 03 40 as 0x400003FF; little-endian it is 0x4003FFFF,
// which is what the doc means ("Player 1 base" = 0x3FFFFFFF + 0x40000).
var _ = addReal(realCase{
	name:   "SetPhaserLevel LOW",
	source: "OpenBC docs/wire-formats/set-phaser-level-wire-format.md, Example 2",
	dir:    ClientToServer,
	hex:    "12 05 01 00 00 E0 00 80 00 FF FF 03 40 00 00 00 00 00",
	check: func(t *testing.T, m Message) {
		e := evAs[*EventForward](t, m)
		evWant(t, "class", e.Class, EventClassChar)
		evWant(t, "code", e.Code, ETSetPhaserLevel)
		evWant(t, "source", e.Source, PlayerObjectID(1))
		evWant(t, "source slot", e.Source.Slot(), 1)
		evWant(t, "dest", e.Dest, ObjectID(0))
		evWant(t, "level", e.PhaserLevel(), PhaserLow)
	},
})

// StartCloaking as an independent implementation sends it (not stock
// traffic): the datagram 03 01 32 0A 80 07 00 | 0E FF FF 03 40 carries a
// bare object id, the layout seeds/001 gives for the event-forward family.
var _ = addReal(realCase{
	name:   "StartCloaking 0x0E bare object id",
	source: "vectors/cipher.json, plain 0301320A8007000EFFFF0340 (independent implementation)",
	dir:    ClientToServer,
	hex:    "0E FF FF 03 40",
	check: func(t *testing.T, m Message) {
		e := evAs[*EventForward](t, m)
		evWant(t, "op", e.Op, OpStartCloaking)
		evWant(t, "bare", e.Bare, true)
		evWant(t, "object", e.Object, PlayerObjectID(1))
		evWant(t, "receiver code", e.ReceiverCode(), ETStartCloaking)
	},
})

func TestEventForwardBareWarns(t *testing.T) {
	res := NewDecoder().Decode([]byte{0x0E, 0xFF, 0xFF, 0x03, 0x40}, ClientToServer)
	if res.Err != nil || !strings.Contains(res.Warning, "bare object id") {
		t.Fatalf("err %v warning %q", res.Err, res.Warning)
	}
	j, _ := json.Marshal(res.Msg)
	if string(j) != `{"bare":true,"object":{"id":"0x4003FFFF","slot":1}}` {
		t.Fatalf("json %s", j)
	}
}

// No source quotes bytes for 0x07, 0x09-0x0C, 0x0F, 0x10, 0x11 or 0x1B.
// These synthetic messages follow the classes and codes the docs report for
// each opcode (event-forward-wire-format.md, "Factory Differences").
func TestEventForwardSynthetic(t *testing.T) {
	cases := []struct {
		op       Opcode
		ev       Event
		receiver EventCode
	}{
		{OpStartFiring, Event{Class: EventClassStartFiring, Code: ETStartFiringNotify, Dest: 0x40000005,
			FiringData: [8]byte{0x10, 0, 0, 0x40, 0, 0, 0x80, 0x3F}}, ETStartFiring},
		{OpStopFiring, Event{Class: EventClassSubsystem, Code: ETStopFiringNotify, Dest: 0x40000005}, ETStopFiring},
		{OpStopFiringAtTarget, Event{Class: EventClassObjPtr, Code: ETStopFiringAtTargetNotify,
			Source: 0x40000007, ObjPtr: PlayerObjectID(2)}, ETStopFiringAtTarget},
		{OpSubsystemStatus, Event{Class: EventClassSubsystemControl, Code: ETSubsystemStatus,
			Source: 0x40000009, Value: 1}, ETSubsystemStatus},
		{OpAddToRepairList, Event{Class: EventClassSubsystem, Code: ETAddToRepairList, Source: 0x2A, Dest: 0x1E}, ETAddToRepairList},
		{OpClientEvent, Event{Class: EventClassBase, Code: 0x00801234, Source: PlayerObjectID(1)}, 0x00801234},
		{OpStartCloaking, Event{Class: EventClassSubsystem, Code: ETStartCloakingNotify, Source: PlayerObjectID(1)}, ETStartCloaking},
		{OpStopCloaking, Event{Class: EventClassSubsystem, Code: ETStopCloakingNotify, Source: PlayerObjectID(1)}, ETStopCloaking},
		{OpStartWarp, Event{Class: EventClassStartWarp, Code: ETStartWarpNotify, Source: PlayerObjectID(0),
			SetName: []byte("Systems.Albirea.Albirea3"), Destination: dissect.Vec3{X: 1500, Y: -20, Z: 7.5}, Speed: 6}, ETStartWarp},
		{OpRepairListPriority, Event{Class: EventClassObjPtr, Code: ETRepairIncreasePriority,
			Source: 0x1E, ObjPtr: 0x2A}, ETRepairIncreasePriority},
		{OpSetPhaserLevel, Event{Class: EventClassChar, Code: ETSetPhaserLevel, Source: PlayerObjectID(2), Value: 1}, ETSetPhaserLevel},
		{OpTorpTypeChange, Event{Class: EventClassChar, Code: ETTorpTypeChange, Source: PlayerObjectID(0), Value: 3}, ETTorpTypeChanged},
	}
	for _, c := range cases {
		t.Run(c.op.String(), func(t *testing.T) {
			m := &EventForward{Op: c.op, Event: c.ev}
			evRoundTrip(t, m)
			evWant(t, "receiver code", m.ReceiverCode(), c.receiver)
		})
	}
	// The bare form round-trips under every opcode of the family.
	for _, op := range eventForwardOps {
		evRoundTrip(t, &EventForward{Op: op, Bare: true, Object: PlayerObjectID(3)})
	}
}

func TestEventForwardValueMeaning(t *testing.T) {
	m := &EventForward{Op: OpTorpTypeChange, Event: Event{Class: EventClassChar, Code: ETTorpTypeChange,
		Source: PlayerObjectID(0), Value: 3}}
	if s := m.String(); !strings.Contains(s, "torpedo QUANTUM") {
		t.Fatalf("String %q", s)
	}
	j, err := json.Marshal(m)
	if err != nil || !strings.Contains(string(j), `"torpedo_type":{"id":3,"name":"QUANTUM"}`) ||
		!strings.Contains(string(j), `"receiver_code":{"code":"0x008000FD","name":"ET_TORP_TYPE_CHANGED"}`) {
		t.Fatalf("json %s %v", j, err)
	}
	p := &EventForward{Op: OpSetPhaserLevel, Event: Event{Class: EventClassChar, Code: ETSetPhaserLevel, Value: 2}}
	if j, _ := json.Marshal(p); !strings.Contains(string(j), `"phaser_level":"HIGH"`) {
		t.Fatalf("json %s", j)
	}
}

// A forward body shorter than an event header (and not the 4-byte bare
// form) is non-stock: the event's fields as far as the bytes go, marked
// event-length, without an error. One that holds the header but not its
// class's body is an error, shown raw, and marked event-length too.
func TestEventForwardTruncated(t *testing.T) {
	for _, c := range []struct {
		hex    string
		prefix string // the EventPrefix's text, "" for an error
	}{
		{"07", ""},
		{"07 28 81", "rest=28 81"},
		{"08 28 81 00 00 D8 00 80 00", "class=StartFiringEvent code=ET_START_FIRING_NOTIFY"},
		{"0A FF FF FF 3F 01 00 B0 B8 45", "class=class(0x3FFFFFFF) code=0xB8B00001 rest=45"},
		{"07 28 81 00 00 D8 00 80 00 00 00 00 00 05 00 00 40 01 02", "-"},
		{"12 05 01 00 00 E0 00 80 00 FF FF FF 3F 00 00 00 00", "-"},
	} {
		p := fixture.Unhex(t, c.hex)
		res := NewDecoder().Decode(p, ClientToServer)
		if res.NonStock == nil || res.NonStock.Form != dissect.FormEventLength {
			t.Errorf("%s: mark %v, want event-length", c.hex, res.NonStock)
		}
		switch c.prefix {
		case "-":
			if res.Err == nil {
				t.Errorf("%s: no error", c.hex)
			}
		default:
			m, ok := res.Msg.(*EventPrefix)
			if res.Err != nil || !ok {
				t.Errorf("%s: %T, error %v; want an EventPrefix", c.hex, res.Msg, res.Err)
				continue
			}
			if got := m.String(); got != c.prefix && c.prefix != "" {
				t.Errorf("%s: %q, want %q", c.hex, got, c.prefix)
			}
			if got := m.Append(nil); !bytes.Equal(got, p) {
				t.Errorf("%s: re-encoded % X", c.hex, got)
			}
		}
	}
}

func FuzzEventForward(f *testing.F) {
	evFuzz(f, eventForwardOps)
}
