package game

import (
	"fmt"
	"strings"

	"github.com/bcwire/bcwire/dissect"
)

// StateUpdate (0x1C) is the per-ship state sync, sent unreliably about ten
// times a second per ship in each direction: the owner sends its ship's
// movement and weapon states to the host, the host sends every ship's
// movement and subsystem states to the clients.
//
// Layout: object id (u32), game time (f32), the dirty-flags byte, then the
// fields of each flag that is set:
//
//	0x01 position  three f32, a packed bit "has hash", then the u16
//	               subsystem hash when the bit is set
//	0x02 delta     position change since the last absolute position, as a
//	               5-byte CompressedVector4
//	0x04 forward   Dir3
//	0x08 up        Dir3
//	0x10 speed     CF16, negative when reversing
//	0x40 cloak     a packed bit
//	0x20 subsystems  start index (u8), then subsystem states until the
//	               message ends (see SubsystemState)
//	0x80 weapons   (index u8, health u8) pairs until the message ends
//
// The cloak bit comes before the subsystem states: seeds/001's receiver
// reads 0x40 before 0x20, and it must, because the subsystem states run to
// the end of the message. (OpenBC's page says the fields follow in flag-bit
// order; seeds/001 is the higher authority.) All packed bits of a message
// share bit-group bytes: the has-hash bit, the cloak bit and the powered
// subsystems' power bits can all sit in one group byte.
//
// Stock direction split (PROTOCOL.md): client-to-server updates carry 0x80
// and never 0x20, server-to-client updates carry 0x20 and never 0x80. A
// message that breaks this for its direction decodes with a warning.
//
// Decoding allocates nothing in steady state: Subsystems and Weapons are
// reused, and children conditions and undecoded bytes alias the input.
//
// The header, the fields up to the round-robins, is declared once, here:
// internal/jsongen writes its reader, writer, text and JSON (zheader.go)
// from the wire, text and json tags, which its package comment explains.
// This file adds the round-robins. Hand-written code names no header
// field but Flags and Object (TestHeaderFieldsNamedOnlyInDeclaration), so
// a field added here needs nothing else but go generate and the goldens.
type StateUpdate struct {
	Object   ObjectID   `wire:"object" text:"object" json:"object"`
	GameTime float32    `wire:"game time" text:"time,prec=3" json:"game_time"`
	Flags    StateFlags `wire:"dirty flags" text:"flags" json:"flags"`

	// Position (flag 0x01) is the absolute world position. HasHash is
	// the packed bit after it; Hash, the XOR-folded anti-cheat hash of the
	// ship's subsystem values, is on the wire only when HasHash is set.
	Position dissect.Vec3 `wire:"position,flag=StatePosition" text:"pos" json:"position"`
	HasHash  bool         `wire:"has-hash bit,flag=StatePosition" text:"-" json:"has_hash"`
	Hash     uint16       `wire:"subsystem hash,flag=StatePosition,if=HasHash" text:"hash,hex,else=none" json:"hash"`
	// Delta (flag 0x02) is the position change since the last absolute
	// position.
	Delta dissect.CV4 `wire:"position delta,flag=StateDelta" text:"delta" json:"delta"`
	// Forward (0x04) and Up (0x08) are the ship's orientation.
	Forward dissect.Dir3 `wire:"forward,flag=StateForward" text:"fwd" json:"forward"`
	Up      dissect.Dir3 `wire:"up,flag=StateUp" text:"up" json:"up"`
	// Speed (0x10) is negative when the ship is reversing.
	Speed dissect.CF16 `wire:"speed,flag=StateSpeed" text:"speed" json:"speed"`
	// Cloaked (0x40) is the cloaking device state, set when cloaked
	// (seeds/001; OpenBC's cloaking page reads the bit the other way
	// round, as "shields on").
	Cloaked bool `wire:"cloak bit,flag=StateCloak" text:"cloaked" json:"cloaked"`

	// SubsystemStart (0x20) is the position in the ship class's top-level
	// subsystem list of the first state that follows; the states run on
	// from there, wrapping to entry 0 after the last entry.
	SubsystemStart uint8 `json:"subsystem_start"`
	// Subsystems are the states decoded by name, in wire order. The
	// decoder fills them when it knows the ship's class (from an ObjCreate
	// seen earlier); an encoder sets them directly or with
	// FillSubsystems.
	Subsystems []SubsystemState `json:"subsystems"`
	// Class is the ship class Subsystems were decoded with (nil when they
	// were not decoded). Append does not use it.
	Class *ShipSpec `json:"-"`
	// SubsystemsUndecoded marks a subsystem section kept as bytes because
	// the ship's class is unknown or the bytes do not fit its subsystem
	// list. SubsystemData is then everything after the start index and
	// SubsystemLeadBits the packed bits of the section that sit in a bit
	// group byte opened before the start index (by the has-hash or cloak
	// bit). Append writes Subsystems when this is false, these when true.
	SubsystemsUndecoded bool   `json:"subsystems_undecoded"`
	SubsystemData       []byte `json:"subsystem_data"`
	SubsystemLeadBits   []bool `json:"subsystem_lead_bits"`

	// Weapons (0x80) are weapon health reports.
	Weapons []WeaponHealth `json:"weapons"`

	// openbc: Subsystems fit only OpenBC's form; its bits say how
	// (openbcShield, openbcGroups).
	openbc uint8

	dir      Direction
	whyRaw   uint8     // undecodedUnknownClass or undecodedMismatch
	tried    *ShipSpec // the class whose list the bytes did not fit
	leadBuf  [5]bool   // backing array of SubsystemLeadBits
	childBuf []uint8   // backing array of children built by FillSubsystems
}

const (
	undecodedUnknownClass = 1 + iota
	undecodedMismatch
)

// StateFlags is StateUpdate's dirty-flags byte.
type StateFlags uint8

const (
	StatePosition   StateFlags = 0x01
	StateDelta      StateFlags = 0x02
	StateForward    StateFlags = 0x04
	StateUp         StateFlags = 0x08
	StateSpeed      StateFlags = 0x10
	StateSubsystems StateFlags = 0x20
	StateCloak      StateFlags = 0x40
	StateWeapons    StateFlags = 0x80
)

var stateFlagNames = [8]string{"POS", "DELTA", "FWD", "UP", "SPEED", "SUBSYS", "CLOAK", "WEAPONS"}

// String lists the set flags: "POS|FWD|UP|SPEED|WEAPONS" ("none" for 0).
func (f StateFlags) String() string { return string(f.appendString(nil)) }

// appendString appends the String form.
func (f StateFlags) appendString(b []byte) []byte { return append(b, stateFlagsText[f]...) }

// stateFlagsText and stateFlagsJSON (tables_gen.go) are the text and JSON
// forms of every flags byte, made from appendNames and appendJSONForm by
// TestGeneratedTables: every StateUpdate decode prints has its flags.

// appendNames appends the String form, made from the names.
func (f StateFlags) appendNames(b []byte) []byte {
	if f == 0 {
		return append(b, "none"...)
	}
	start := len(b)
	for i, n := range stateFlagNames {
		if f&(1<<i) != 0 {
			if len(b) > start {
				b = append(b, '|')
			}
			b = append(b, n...)
		}
	}
	return b
}

// MarshalJSON is AppendJSON for encoding/json.
func (f StateFlags) MarshalJSON() ([]byte, error) { return f.AppendJSON(nil), nil }

// WeaponHealth is one entry of the StateUpdate weapon round-robin. Health
// is a scaled byte: the stock trace shows 0xCC for weapons at full health.
type WeaponHealth struct {
	Index  uint8 `json:"index"`
	Health uint8 `json:"health"`
}

func init() { register(OpStateUpdate, func() Message { return new(StateUpdate) }) }

func (m *StateUpdate) Opcode() Opcode { return OpStateUpdate }

// reset zeroes m for a new decode, keeping its buffers for reuse. It sets
// the fields one by one and stores into the pointer fields only when they
// hold something (each pointer store costs a write-barrier check): clearing
// the whole value cost more than reading the usual message. leadBuf is left
// as it is: only SubsystemLeadBits, nil here, shows it.
// TestStateUpdateResetClearsEveryField checks that no field is forgotten.
func (m *StateUpdate) reset() {
	m.resetHeader()
	m.SubsystemStart, m.SubsystemsUndecoded = 0, false
	m.Subsystems, m.Weapons, m.childBuf = m.Subsystems[:0], m.Weapons[:0], m.childBuf[:0]
	if m.Class != nil || m.SubsystemData != nil || m.SubsystemLeadBits != nil || m.tried != nil {
		m.Class, m.SubsystemData, m.SubsystemLeadBits, m.tried = nil, nil, nil, nil
	}
	m.dir, m.whyRaw, m.openbc = 0, 0, 0
}

func (m *StateUpdate) decode(r *dissect.Reader, ctx *Context) {
	m.reset()
	var ships *ShipRegistry
	if ctx != nil {
		m.dir, ships = ctx.Dir, ctx.Ships
	}
	// Reject the bit groups Append could not reproduce.
	r.StrictBits()

	m.readFields(r)
	if m.Flags&StateSubsystems != 0 && r.Err() == nil {
		m.SubsystemStart = r.U8("subsystem start index")
		if r.Err() == nil {
			m.readSubsystems(r, ships.lookupClass(m.Object))
		}
	}
	if m.Flags&StateWeapons != 0 && r.Err() == nil {
		m.readWeapons(r.Rest())
		// An odd last byte stays unread: the Decoder reports it.
		r.Skip(2 * len(m.Weapons))
	}
	if n := r.BitsLeft(); n > 0 && r.Err() == nil {
		r.Failf("packed bits", "the last bit group byte claims %d more bits than the message has fields for", n)
	}
}

// readFields reads the header (the fields before the round-robins) by
// offset with readHeaderFast, as decodeFast does, and when that fails
// field by field with readHeader, which names the damage. Both are
// generated from the declaration (zheader.go).
func (m *StateUpdate) readFields(r *dissect.Reader) {
	b := r.Rest()
	if n, bits, ok := m.readHeaderFast(b, r.BitGroup()); ok {
		r.Commit(b[n:], bits)
		return
	}
	m.readHeader(r)
}

// DecodeStateUpdate is DecodeTo for the usual StateUpdate (p[0] is
// OpStateUpdate): a header that readHeaderFast reads, then subsystem states
// of a known class that fit it, or an even number of weapon bytes with no
// packed bit left, or nothing. It reports false for any other message,
// leaving *res as it was (and perhaps the Decoder's StateUpdate changed),
// and DecodeTo then decodes the message; on true, *res is what DecodeTo
// makes of p (FuzzStateUpdateMatchesReference). DecodeTo tries it first;
// a caller that decodes many messages (flow's Tracker) calls it before
// DecodeTo, which saves a call for most of a battle's messages.
func (d *Decoder) DecodeStateUpdate(res *Result, p []byte, dir Direction) bool {
	m := d.su
	if len(p) == 0 || Opcode(p[0]) != OpStateUpdate || m == nil {
		return false
	}
	body := p[1:]
	// reset, written out (resetHeader is inlined): as a call, too large
	// to inline, its frame and the arguments kept across it cost about as
	// much as its stores.
	m.resetHeader()
	m.SubsystemStart, m.SubsystemsUndecoded = 0, false
	m.Subsystems, m.Weapons, m.childBuf = m.Subsystems[:0], m.Weapons[:0], m.childBuf[:0]
	if m.Class != nil || m.SubsystemData != nil || m.SubsystemLeadBits != nil || m.tried != nil {
		m.Class, m.SubsystemData, m.SubsystemLeadBits, m.tried = nil, nil, nil, nil
	}
	m.dir, m.whyRaw, m.openbc = dir, 0, 0
	n, bits, ok := m.readHeaderFast(body, dissect.BitGroup{})
	if !ok {
		return false
	}
	rest := body[n:]
	switch f := m.Flags; {
	case f&StateSubsystems != 0:
		// Both round-robins (decode warns that the weapons have no room)
		// are left to decode, as is a section without its start index.
		if f&StateWeapons != 0 || len(rest) == 0 {
			return false
		}
		class := d.Ships.lookupClass(m.Object)
		if class == nil {
			return false
		}
		m.SubsystemStart, m.Class = rest[0], class.spec
		if _, ok := m.statesByClass(rest[1:], bits, class); !ok {
			return false
		}
	case !bits.Empty():
		return false // decode reports the bits left over
	case f&StateWeapons != 0:
		if len(rest)%2 != 0 {
			return false
		}
		m.readWeapons(rest)
	case len(rest) != 0:
		return false
	}
	w, ok := m.commonWarning()
	if !ok {
		w = m.warning()
	}
	*res = Result{}
	res.Msg, res.Warning = m, w
	if m.openbc != 0 {
		d.classify(p, dir, res)
	}
	return true
}

// readWeapons reads b as weapon (index, health) pairs; an odd last byte
// is left out.
func (m *StateUpdate) readWeapons(b []byte) {
	for ; len(b) >= 2; b = b[2:] {
		m.Weapons = append(m.Weapons, WeaponHealth{Index: b[0], Health: b[1]})
	}
}

// Append encodes m: the fields of every flag set in m.Flags.
func (m *StateUpdate) Append(b []byte) []byte {
	w := dissect.NewWriter(append(b, byte(OpStateUpdate)))
	m.appendHeader(w)
	f := m.Flags
	if f&StateSubsystems != 0 {
		if m.SubsystemsUndecoded {
			for _, v := range m.SubsystemLeadBits {
				w.Bit(v)
			}
			w.U8(m.SubsystemStart)
			w.Raw(m.SubsystemData)
		} else {
			w.U8(m.SubsystemStart)
			for i := range m.Subsystems {
				m.Subsystems[i].append(w)
			}
		}
	}
	if f&StateWeapons != 0 {
		for _, x := range m.Weapons {
			w.U8(x.Index)
			w.U8(x.Health)
		}
	}
	return w.Bytes()
}

const (
	warnClientSubsystems = "client-to-server StateUpdate carries subsystem states (0x20), which stock clients never send"
	warnServerWeapons    = "server-to-client StateUpdate carries weapon states (0x80), which the stock host never sends"
	warnBothRoundRobins  = "subsystem states run to the end of the message, so the weapon flag (0x80) has no room for data"
)

// commonWarning is warning for the messages whose warning is at most one
// of the two constants (ok), small enough to be inlined where Decode's
// fast path would otherwise call warning for every StateUpdate.
func (m *StateUpdate) commonWarning() (w string, ok bool) {
	f := m.Flags
	if f&(StateSubsystems|StateWeapons) == StateSubsystems|StateWeapons || m.whyRaw == undecodedMismatch || m.openbc != 0 {
		return "", false
	}
	if m.dir == ClientToServer && f&StateSubsystems != 0 {
		return warnClientSubsystems, true
	}
	if m.dir == ServerToClient && f&StateWeapons != 0 {
		return warnServerWeapons, true
	}
	return "", true
}

func (m *StateUpdate) warning() string {
	w := ""
	switch {
	case m.dir == ClientToServer && m.Flags&StateSubsystems != 0:
		w = warnClientSubsystems
	case m.dir == ServerToClient && m.Flags&StateWeapons != 0:
		w = warnServerWeapons
	}
	both := m.Flags&(StateSubsystems|StateWeapons) == StateSubsystems|StateWeapons
	if !both && m.whyRaw != undecodedMismatch && m.openbc == 0 {
		return w // the common cases allocate nothing
	}
	ws := make([]string, 0, 3)
	if w != "" {
		ws = append(ws, w)
	}
	if both {
		ws = append(ws, warnBothRoundRobins)
	}
	if m.whyRaw == undecodedMismatch {
		ws = append(ws, "subsystem states do not fit the "+m.tried.Name+" subsystem list; kept undecoded")
	}
	if m.openbc != 0 && !m.SubsystemsUndecoded {
		if w == "" && !both {
			return openbcWarnings[m.openbc] // a constant: no allocation
		}
		ws = append(ws, openbcWarnings[m.openbc])
	}
	return strings.Join(ws, "; ")
}

func (m *StateUpdate) String() string { return string(m.appendString(make([]byte, 0, 256))) }

// AppendString appends the String form, for printers that build a line in
// a buffer of their own (decode) and need not make the string.
func (m *StateUpdate) AppendString(b []byte) []byte { return m.appendString(b) }

// appendString appends the String form: the header (appendHeaderText),
// then the round-robins. It runs for every StateUpdate that `bcwire decode`
// prints (most of a battle's lines), so the common fields are appended
// directly; fmt is left to the rare undecoded-subsystem case.
func (m *StateUpdate) appendString(b []byte) []byte {
	b = m.appendHeaderText(b)
	f := m.Flags
	if f&StateSubsystems != 0 {
		b = appendInt(append(b, " subsystems@"...), int64(m.SubsystemStart))
		if m.SubsystemsUndecoded {
			b = fmt.Appendf(b, " undecoded (%s)", m.subsystemNote())
			if len(m.SubsystemLeadBits) > 0 {
				b = fmt.Appendf(b, " lead-bits=%v", m.SubsystemLeadBits)
			}
			b = fmt.Appendf(b, " [% X]", m.SubsystemData)
		} else {
			b = append(b, " ["...)
			for i := range m.Subsystems {
				if i > 0 {
					b = append(b, ' ')
				}
				b = m.Subsystems[i].appendString(b)
			}
			b = append(b, ']')
		}
	}
	if f&StateWeapons != 0 {
		b = append(b, " weapons=["...)
		for i, x := range m.Weapons {
			if i > 0 {
				b = append(b, ' ')
			}
			b = appendInt(b, int64(x.Index))
			b = appendHex(append(b, ":0x"...), uint64(x.Health), 2)
		}
		b = append(b, ']')
	}
	return b
}

// MarshalJSON is AppendJSON for encoding/json.
func (m StateUpdate) MarshalJSON() ([]byte, error) { return m.AppendJSON(nil), nil }
