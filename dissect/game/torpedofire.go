package game

import (
	"fmt"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/internal/jsonenc"
)

// TorpedoFire (0x19) is a torpedo launch, sent by the firing ship's owner
// and relayed unchanged to every other peer, each of which then creates and
// flies the torpedo itself.
//
// Layout: the firing torpedo tube's object id (u32), the torpedo type (u8,
// SpeciesToTorp index), a flags byte, the launch direction (three signed
// bytes /127) of its velocity, and, when flags bit 2 is clear, the target's object id (u32)
// and a point on the target (direction + one magnitude byte, 4 bytes).
//
// The sources disagree on the flags and the target point; the stock bytes
// (vectors/stock-datagrams.json, "TorpedoFire 0x19 datagram")
//
//	19 0D 00 00 40 02 01 DF 87 11 FF FF 03 40 00 88 D8 5C
//
// settle both. seeds/001 reads bit 1 as "has target" and bit 0 as "has arc",
// and gives the target point as a 5-byte CompressedVector4; OpenBC's
// torpedo-fire doc reads bit 2 as "no target" and gives the point 4 bytes.
// Here flags 0x01 (bit 1 and bit 2 clear) is followed by a target id and
// exactly four bytes 00 88 D8 5C, a unit direction (0,-120,-40) and a
// magnitude byte: so a target follows when bit 2 is clear, and the point is
// the 4-byte form. Bits 0 and 1 are kept as they are (OpenBC: reloading and
// subsystem state; seeds/001: "has arc" for bit 0).
type TorpedoFire struct {
	// Object is the firing torpedo tube subsystem (not the ship).
	Object ObjectID `json:"object"`
	// Type is the torpedo type (2 = photon in stock traffic).
	Type TorpedoTypeIndex `json:"torpedo_type"`
	// Flags: bit 2 set means no target follows.
	Flags TorpedoFlags `json:"flags"`
	// Velocity is the direction of the launch velocity (both sources call
	// the field velocity; only its direction is on the wire).
	Velocity dissect.Dir3 `json:"velocity"`
	// Target and TargetPoint are on the wire only when Flags.HasTarget().
	// TargetPoint is in units of the target's bounding radius.
	Target      ObjectID        `json:"target"`
	TargetPoint dissect.Contact `json:"target_point"`
}

// TorpedoFlags is TorpedoFire's flags byte.
type TorpedoFlags uint8

// TorpedoNoTarget (bit 2) means the torpedo is unguided: no target id and
// point follow.
const TorpedoNoTarget TorpedoFlags = 0x04

// HasTarget reports whether a target id and point follow.
func (f TorpedoFlags) HasTarget() bool { return f&TorpedoNoTarget == 0 }

func init() { register(OpTorpedoFire, func() Message { return new(TorpedoFire) }) }

func (m *TorpedoFire) Opcode() Opcode { return OpTorpedoFire }

func (m *TorpedoFire) decode(r *dissect.Reader, _ *Context) {
	m.Object = readID(r, "torpedo tube object")
	m.Type = TorpedoTypeIndex(r.U8("torpedo type"))
	m.Flags = TorpedoFlags(r.U8("torpedo flags"))
	m.Velocity = r.Dir3("velocity direction")
	m.Target, m.TargetPoint = 0, dissect.Contact{}
	if m.Flags.HasTarget() {
		m.Target = readID(r, "target object")
		d := r.Dir3("target point direction") // not r.Contact: see readContacts
		m.TargetPoint = dissect.Contact{Dir: d, Mag: r.U8("target point magnitude")}
	}
}

// Append encodes m; Target and TargetPoint are written only when
// Flags.HasTarget().
func (m *TorpedoFire) Append(b []byte) []byte {
	w := dissect.NewWriter(append(b, byte(OpTorpedoFire)))
	appendID(w, m.Object)
	w.U8(uint8(m.Type))
	w.U8(uint8(m.Flags))
	w.Dir3(m.Velocity)
	if m.Flags.HasTarget() {
		appendID(w, m.Target)
		w.Contact(m.TargetPoint)
	}
	return w.Bytes()
}

func (m *TorpedoFire) String() string {
	s := fmt.Sprintf("tube=%s type=%v flags=%#02x velocity=%v", m.Object, m.Type, uint8(m.Flags), m.Velocity)
	if m.Flags.HasTarget() {
		p := m.TargetPoint
		s += fmt.Sprintf(" target=%s point=[dir=(%d,%d,%d) mag=%d]", eventObj(m.Target), p.Dir[0], p.Dir[1], p.Dir[2], p.Mag)
	} else {
		s += " no target"
	}
	return s
}

// MarshalJSON is AppendJSON for encoding/json.
func (m TorpedoFire) MarshalJSON() ([]byte, error) { return m.AppendJSON(nil), nil }

// TorpedoTypeIndex is a torpedo type as the multiplayer scripts number them
// (the SpeciesToTorp table shipped with the game). Mods may use any byte.
type TorpedoTypeIndex uint8

var torpedoTypeNames = [...]string{
	"UNKNOWN", "DISRUPTOR", "PHOTON", "QUANTUM", "ANTIMATTER", "CARDTORP", "KLINGONTORP",
	"POSITRON", "PULSEDISRUPT", "FUSIONBOLT", "CARDASSIANDISRUPTOR", "KESSOKDISRUPTOR",
	"PHASEDPLASMA", "POSITRON2", "PHOTON2", "ROMULANCANNON",
}

// Name returns the SpeciesToTorp constant name, or "" beyond the stock table.
func (t TorpedoTypeIndex) Name() string {
	if int(t) < len(torpedoTypeNames) {
		return torpedoTypeNames[t]
	}
	return ""
}

func (t TorpedoTypeIndex) String() string {
	if n := t.Name(); n != "" {
		return n
	}
	return fmt.Sprintf("torp(%d)", uint8(t))
}

// MarshalJSON is AppendJSON for encoding/json.
func (t TorpedoTypeIndex) MarshalJSON() ([]byte, error) { return t.AppendJSON(nil), nil }

// AppendJSON appends {"id":2,"name":"PHOTON"} (name left out beyond the
// stock table).
func (t TorpedoTypeIndex) AppendJSON(b []byte) []byte {
	return appendNumberName(b, uint8(t), t.Name())
}

// AppendJSON leaves the target fields out when there is no target.
func (m *TorpedoFire) AppendJSON(b []byte) []byte {
	b = m.Object.AppendJSON(append(b, `{"object":`...))
	b = m.Type.AppendJSON(append(b, `,"torpedo_type":`...))
	b = appendUint(append(b, `,"flags":`...), uint64(m.Flags))
	b = jsonenc.Bool(append(b, `,"has_target":`...), m.Flags.HasTarget())
	b = m.Velocity.AppendJSON(append(b, `,"velocity":`...))
	if m.Flags.HasTarget() {
		b = m.Target.AppendJSON(append(b, `,"target":`...))
		b = appendContactJSON(append(b, `,"target_point":`...), m.TargetPoint)
	}
	return append(b, '}')
}
