package game

import (
	"encoding/binary"
	"testing"

	"github.com/bcwire/bcwire/dissect"
)

// eventFromBytes builds an event of every class from fuzz bytes: a class
// among the known ones (or the raw value), the special object ids
// included.
func eventFromBytes(p []byte) Event {
	var b [48]byte
	copy(b[:], p)
	u32 := func(i int) uint32 { return binary.LittleEndian.Uint32(b[i:]) }
	classes := []EventClass{EventClassBase, EventClassSubsystem, EventClassSubsystemControl, EventClassChar,
		EventClassObjPtr, EventClassDeletePlayer, EventClassCollision, EventClassStartFiring,
		EventClassObjectExploding, EventClassStartWarp}
	class := EventClass(u32(0))
	if int(b[0]) < 2*len(classes) {
		class = classes[int(b[0])%len(classes)]
	}
	obj := func(i int) ObjectID {
		switch b[i] % 4 {
		case 0:
			return 0
		case 1:
			return 0xFFFFFFFF
		case 2:
			return PlayerObjectID(int(b[i+1] % 16))
		}
		return ObjectID(u32(i))
	}
	e := Event{Class: class, Code: EventCode(u32(4)), Source: obj(8), Dest: obj(12), Value: b[16], ObjPtr: obj(17),
		FiringPlayer: int32(u32(21)), Lifetime: float32(u32(25)) / 7, Force: float32(b[29]) / 3,
		SetName: b[30 : 30+int(b[30]%8)], Destination: dissect.Vec3{X: 1.5, Y: float32(b[31]), Z: -2},
		Speed: float32(b[32]), Extra: b[33 : 33+int(b[33]%10)]}
	copy(e.FiringData[:], b[38:])
	for range b[47] % 3 {
		e.Contacts = append(e.Contacts, dissect.Contact{Dir: dissect.Dir3{int8(b[40]), 2, -3}, Mag: b[41]})
	}
	return e
}

// oldEventForwardString is EventForward's String as it was made with fmt
// and string concatenation.
func oldEventForwardString(m *EventForward) string {
	if m.Bare {
		return "object=" + eventObj(m.Object)
	}
	s := m.Event.stringFmt()
	if m.hasValue() {
		switch m.Op {
		case OpSetPhaserLevel:
			s += " (level " + m.PhaserLevel().String() + ")"
		case OpTorpTypeChange:
			s += " (torpedo " + m.TorpedoType().String() + ")"
		}
	}
	return s
}

func checkEventText(t *testing.T, p []byte) {
	t.Helper()
	e := eventFromBytes(p)
	if got, want := e.String(), e.stringFmt(); got != want {
		t.Fatalf("% X:\n%s\nfmt\n%s", p, got, want)
	}
	pe := PythonEvent{Op: OpPythonEvent, Event: e}
	if got, want := string(pe.AppendString([]byte("x"))), "x"+e.stringFmt(); got != want {
		t.Fatalf("% X PythonEvent: %s, fmt %s", p, got, want)
	}
	for _, op := range []Opcode{OpSetPhaserLevel, OpTorpTypeChange, OpStartFiring} {
		for _, bare := range []bool{false, true} {
			m := EventForward{Op: op, Event: e, Bare: bare, Object: e.Source}
			if got, want := m.String(), oldEventForwardString(&m); got != want {
				t.Fatalf("% X EventForward %v bare=%v:\n%s\nold\n%s", p, op, bare, got, want)
			}
		}
	}
}

// Event's text is appended directly for the common classes; it is what
// fmt wrote, for every class and the special object ids.
func TestEventTextMatchesFmt(t *testing.T) {
	for c := range 64 {
		p := make([]byte, 48)
		for i := range p {
			p[i] = byte(c*7 + i*13)
		}
		p[0] = byte(c)
		checkEventText(t, p)
	}
}

func FuzzEventTextMatchesFmt(f *testing.F) {
	f.Add([]byte{7, 1, 2, 3})
	f.Add([]byte{4, 0, 0, 0, 0xD7, 0, 0x80, 0, 2, 1})
	f.Fuzz(func(t *testing.T, p []byte) { checkEventText(t, p) })
}
