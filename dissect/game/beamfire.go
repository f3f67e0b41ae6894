package game

import (
	"fmt"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/internal/jsonenc"
)

// BeamFire (0x1A) is a beam weapon (phaser) hit, sent by the firing ship's
// owner and relayed unchanged to every other peer.
//
// Layout, on which seeds/001 and OpenBC's beam-fire doc agree byte for byte:
// the firing phaser's object id (u32), a byte (seeds/001: "flags", 0x02 for
// every stock beam; OpenBC: the beam type index), a direction (three signed
// bytes /127), a second flags byte, and a target object id (u32) when that
// byte says so.
//
// The sources disagree on which bit announces the target: seeds/001 says
// bit 0 of the second flags byte, OpenBC bit 1 (with bit 0 a cosmetic
// shield-effect / dual-fire flag). No source quotes BeamFire bytes, so
// PROTOCOL.md's order of authority decides: bit 0 (seeds/001). A message
// shaped the OpenBC way (bit 1 set, bit 0 clear, four bytes left) decodes
// with those bytes unparsed and a warning saying why; one with bit 0 set and
// no target id fails with the reason spelt out.
type BeamFire struct {
	// Object is the firing phaser (emitter) subsystem, not the ship.
	Object ObjectID `json:"object"`
	// Flags is the byte after the object id (0x02 in stock traffic).
	Flags uint8 `json:"flags"`
	// Direction points from the weapon to the hit.
	Direction dissect.Dir3 `json:"direction"`
	// MoreFlags: bit 0 set means a target id follows.
	MoreFlags BeamFlags `json:"more_flags"`
	// Target is on the wire only when MoreFlags.HasTarget().
	Target ObjectID `json:"target"`

	leftover int // bytes left after the last field, for warning()
}

// BeamFlags is BeamFire's second flags byte.
type BeamFlags uint8

// BeamHasTarget (bit 0) means a target object id follows (seeds/001).
const BeamHasTarget BeamFlags = 0x01

// HasTarget reports whether a target id follows.
func (f BeamFlags) HasTarget() bool { return f&BeamHasTarget != 0 }

func init() { register(OpBeamFire, func() Message { return new(BeamFire) }) }

func (m *BeamFire) Opcode() Opcode { return OpBeamFire }

func (m *BeamFire) decode(r *dissect.Reader, _ *Context) {
	m.Object = readID(r, "phaser object")
	m.Flags = r.U8("beam flags")
	m.Direction = r.Dir3("beam direction")
	m.MoreFlags = BeamFlags(r.U8("beam target flags"))
	m.Target = 0
	if m.MoreFlags.HasTarget() {
		if r.Err() == nil && r.Len() < 4 {
			r.Failf("target object", "flags %#02x bit 0 announces a target id (seeds/001) but only %d bytes remain (OpenBC reads bit 0 as a shield-effect flag)",
				uint8(m.MoreFlags), r.Len())
			return
		}
		m.Target = readID(r, "target object")
	}
	m.leftover = r.Len()
}

// Append encodes m; Target is written only when MoreFlags.HasTarget().
func (m *BeamFire) Append(b []byte) []byte {
	w := dissect.NewWriter(append(b, byte(OpBeamFire)))
	appendID(w, m.Object)
	w.U8(m.Flags)
	w.Dir3(m.Direction)
	w.U8(uint8(m.MoreFlags))
	if m.MoreFlags.HasTarget() {
		appendID(w, m.Target)
	}
	return w.Bytes()
}

func (m *BeamFire) String() string {
	s := fmt.Sprintf("phaser=%s flags=%#02x dir=%v more_flags=%#02x", m.Object, m.Flags, m.Direction, uint8(m.MoreFlags))
	if m.MoreFlags.HasTarget() {
		s += " target=" + eventObj(m.Target)
	} else {
		s += " no target"
	}
	return s
}

func (m *BeamFire) warning() string {
	if m.leftover == 4 && !m.MoreFlags.HasTarget() && m.MoreFlags&0x02 != 0 {
		return "BeamFire flags bit 1 is set and 4 bytes follow: OpenBC reads bit 1 as has-target, seeds/001 (followed here) bit 0; the 4 bytes are left unparsed"
	}
	return ""
}

// MarshalJSON is AppendJSON for encoding/json.
func (m BeamFire) MarshalJSON() ([]byte, error) { return m.AppendJSON(nil), nil }

// AppendJSON leaves the target out when there is none.
func (m *BeamFire) AppendJSON(b []byte) []byte {
	b = m.Object.AppendJSON(append(b, `{"object":`...))
	b = appendUint(append(b, `,"flags":`...), uint64(m.Flags))
	b = m.Direction.AppendJSON(append(b, `,"direction":`...))
	b = appendUint(append(b, `,"more_flags":`...), uint64(m.MoreFlags))
	b = jsonenc.Bool(append(b, `,"has_target":`...), m.MoreFlags.HasTarget())
	if m.MoreFlags.HasTarget() {
		b = m.Target.AppendJSON(append(b, `,"target":`...))
	}
	return append(b, '}')
}
