package game

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/internal/jsonenc"
)

// ObjCreate is ObjCreate (0x02) and ObjCreateTeam (0x03): a serialized game
// object (ship, station, asteroid, torpedo) for the receiver to create. A
// client sends 0x03 for the ship its player picked and the host relays the
// bytes unchanged to everyone else; the host also replays every existing
// object to a joining player (0x03 for ships with a team, 0x02 for the
// rest) and answers ObjNotFound/RequestObject with one.
//
// Layout: owner player slot (u8), team (u8, 0x03 only), then the object:
// class id (u32: 0x8008 ship, 0x8009 torpedo) and object id (u32). A ship
// continues with its species (u8, SpeciesToShip index), position (three
// f32), orientation quaternion (four f32, w first), direction of travel
// (three signed bytes, a unit vector as CompressedVector3 packs one) and
// speed (f32), the player name and the set name (each a u8 length and that
// many bytes, no terminator), and the subsystem state
// to the end of the message. A torpedo continues with its type
// (SpeciesToTorp index); no source describes what follows, so those bytes
// and the body of any other class are left undecoded.
//
// The envelope and header through the position are in OpenBC's decoded
// stock packets (objcreate-wire-format/10); the fields after it follow the
// same pages' field table, for which no source quotes whole bytes
// (OpenBC's join-flow page sketches the body differently: no class id,
// no reserved bytes, a ship class name where the set name is; the
// objcreate pages, which quote stock bytes, are followed). The subsystem
// states are decoded by name when the ship's class is known and they fit
// its list in the create form that stock bytes show (createstates.go);
// otherwise they are kept as bytes, with the reason.
type ObjCreate struct {
	// HasTeam selects the opcode: 0x03 (with Team) when set, 0x02 when not.
	HasTeam bool `json:"has_team"`
	// Owner is the player slot that owns the object (0-15).
	Owner uint8 `json:"owner"`
	// Team is the owner's team (0x03 only).
	Team uint8 `json:"team"`

	Class  ObjectClass `json:"class"`
	Object ObjectID    `json:"object"`

	// Ship fields (Class == ClassShip).
	Species     Species      `json:"species"`
	Position    dissect.Vec3 `json:"position"`
	Orientation Quaternion   `json:"orientation"`
	// Direction is the direction of travel and Speed the speed. The
	// sources' field table has the speed (f32) first and three bytes
	// always zero after it; the stock bytes of a moving ship (the
	// Valentine's-day trace's packet #311: CA 54 4D F2 FB A3 40) read
	// that way give a speed of -4.07e30, and read this way a unit
	// vector (|(-54, 84, 77)| = 126.1 of 127) and a speed of 5.12. Every
	// other stock ObjCreate has all seven bytes zero, which both
	// readings take the same.
	Direction  dissect.Dir3 `json:"direction"`
	Speed      float32      `json:"speed"`
	PlayerName string       `json:"player_name"`
	// SetName is the star system the object is created in ("Multi1").
	SetName string `json:"set_name"`
	// Subsystems are the ship's subsystem states by name, every entry of
	// its class's list in order, when they were decoded (children, facings
	// and extras alias the input). Append writes them when SubsystemData
	// is nil.
	Subsystems []SubsystemState `json:"subsystems"`
	// SubsystemData is the ship's subsystem state, to the end of the
	// message, when it was not decoded by name (aliases the input when
	// decoded); SubsystemsNote says why.
	SubsystemData  []byte `json:"subsystem_data"`
	SubsystemsNote string `json:"subsystems_undecoded"`
	// subsystemsMisfit: the class is known and has a create form, but the
	// bytes do not fit it (a warning).
	subsystemsMisfit bool

	// TorpedoType is a torpedo's type (Class == ClassTorpedo).
	TorpedoType TorpedoTypeIndex `json:"torpedo_type"`
}

// ObjectClass is the class id that opens a serialized object.
type ObjectClass uint32

const (
	// ClassShip is a ship, station or asteroid (anything with position
	// tracking).
	ClassShip ObjectClass = 0x00008008
	// ClassTorpedo is a torpedo or other projectile in flight.
	ClassTorpedo ObjectClass = 0x00008009
)

func (c ObjectClass) String() string {
	switch c {
	case ClassShip:
		return "ship"
	case ClassTorpedo:
		return "torpedo"
	}
	return fmt.Sprintf("class(0x%08X)", uint32(c))
}

// MarshalJSON is AppendJSON for encoding/json.
func (c ObjectClass) MarshalJSON() ([]byte, error) { return c.AppendJSON(nil), nil }

// Quaternion is an orientation as four float32, W first on the wire.
type Quaternion struct{ W, X, Y, Z float32 }

func (q Quaternion) String() string {
	return fmt.Sprintf("(w=%.3f, %.3f, %.3f, %.3f)", q.W, q.X, q.Y, q.Z)
}

// MarshalJSON is AppendJSON for encoding/json.
func (q Quaternion) MarshalJSON() ([]byte, error) { return q.AppendJSON(nil), nil }

func init() {
	register(OpObjCreate, func() Message { return new(ObjCreate) })
	register(OpObjCreateTeam, func() Message { return &ObjCreate{HasTeam: true} })
}

// Opcode is 0x03 when m has a team, 0x02 when not.
func (m *ObjCreate) Opcode() Opcode {
	if m.HasTeam {
		return OpObjCreateTeam
	}
	return OpObjCreate
}

// decode reads the body; HasTeam is set by the constructor of each opcode.
func (m *ObjCreate) decode(r *dissect.Reader, ctx *Context) {
	subs := m.Subsystems[:0] // reused: a ship's states allocate once
	*m = ObjCreate{HasTeam: m.HasTeam, Subsystems: subs}
	m.Owner = r.U8("owner slot")
	if m.HasTeam {
		m.Team = r.U8("team")
	}
	m.Class = ObjectClass(r.U32("object class"))
	m.Object = readID(r, "object id")
	switch m.Class {
	case ClassShip:
		m.Species = Species(r.U8("species"))
		m.Position.X = r.F32("position x")
		m.Position.Y = r.F32("position y")
		m.Position.Z = r.F32("position z")
		m.Orientation.W = r.F32("orientation w")
		m.Orientation.X = r.F32("orientation x")
		m.Orientation.Y = r.F32("orientation y")
		m.Orientation.Z = r.F32("orientation z")
		m.Direction = r.Dir3("direction")
		m.Speed = r.F32("speed")
		m.PlayerName = ctx.str(r.Bytes(int(r.U8("player name length")), "player name"))
		m.SetName = ctx.str(r.Bytes(int(r.U8("set name length")), "set name"))
		m.readSubsystems(r.Bytes(r.Len(), "subsystem state"))
		if m.SubsystemData != nil {
			m.Subsystems = m.Subsystems[:0]
		}
	case ClassTorpedo:
		m.TorpedoType = TorpedoTypeIndex(r.U8("torpedo type"))
	}
}

// Append encodes m. Names longer than 255 bytes are cut to fit their
// one-byte length.
func (m *ObjCreate) Append(b []byte) []byte {
	w := dissect.NewWriter(append(b, byte(m.Opcode())))
	w.U8(m.Owner)
	if m.HasTeam {
		w.U8(m.Team)
	}
	w.U32(uint32(m.Class))
	appendID(w, m.Object)
	switch m.Class {
	case ClassShip:
		w.U8(uint8(m.Species))
		w.F32(m.Position.X)
		w.F32(m.Position.Y)
		w.F32(m.Position.Z)
		w.F32(m.Orientation.W)
		w.F32(m.Orientation.X)
		w.F32(m.Orientation.Y)
		w.F32(m.Orientation.Z)
		w.Dir3(m.Direction)
		w.F32(m.Speed)
		appendString8(w, m.PlayerName)
		appendString8(w, m.SetName)
		if m.SubsystemData == nil {
			for i := range m.Subsystems {
				m.Subsystems[i].appendCreate(w)
			}
		}
		w.Raw(m.SubsystemData)
	case ClassTorpedo:
		w.U8(uint8(m.TorpedoType))
	}
	return w.Bytes()
}

// appendString8 writes a u8 length and the string's bytes.
func appendString8(w *dissect.Writer, s string) {
	if len(s) > 255 {
		s = s[:255]
	}
	w.U8(uint8(len(s)))
	w.Raw([]byte(s))
}

// readSubsystems decodes b, the states after the set name, by the class
// of m.Species, or keeps them as bytes with the reason.
func (m *ObjCreate) readSubsystems(b []byte) {
	spec := ShipBySpecies(m.Species)
	switch {
	case spec == nil:
		m.SubsystemsNote = "no subsystem list is known for species " + m.Species.String()
	case len(b) == 0: // nothing to decode
	default:
		states, why := createStates(m.Subsystems[:0], b, spec)
		if states != nil {
			m.Subsystems = states
			return
		}
		m.SubsystemsNote = why
		_, known := createFormKnown(spec)
		m.subsystemsMisfit = known
	}
	m.SubsystemData = b
}

// createdShip tells the Decoder's registry the class of a created ship (nil
// for other objects and for species without a known subsystem list).
func (m *ObjCreate) createdShip() (ObjectID, *ShipSpec) {
	if m.Class != ClassShip {
		return m.Object, nil
	}
	return m.Object, ShipBySpecies(m.Species)
}

func (m *ObjCreate) warning() string {
	switch m.Class {
	case ClassShip:
		if int(m.Species) >= len(speciesNames) {
			return fmt.Sprintf("species %d is beyond the stock SpeciesToShip table (a mod's ship)", uint8(m.Species))
		}
		if d := m.Direction; d != (dissect.Dir3{}) {
			if n := int(d[0])*int(d[0]) + int(d[1])*int(d[1]) + int(d[2])*int(d[2]); n < 110*110 || n > 140*140 {
				return fmt.Sprintf("the direction bytes % X are not a unit vector", []byte{byte(d[0]), byte(d[1]), byte(d[2])})
			}
		}
		if m.subsystemsMisfit {
			return "subsystem states do not fit the stock ObjCreate form of the " + ShipBySpecies(m.Species).Name +
				" list (" + m.SubsystemsNote + "); kept undecoded"
		}
	case ClassTorpedo:
		return "no source describes a torpedo's serialized body after its type byte; the rest is left undecoded"
	default:
		return fmt.Sprintf("object class 0x%08X is neither ship (0x8008) nor torpedo (0x8009); its body is left undecoded", uint32(m.Class))
	}
	return ""
}

func (m *ObjCreate) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "owner=%d", m.Owner)
	if m.HasTeam {
		fmt.Fprintf(&sb, " team=%d", m.Team)
	}
	fmt.Fprintf(&sb, " class=%s object=%s", m.Class, m.Object)
	switch m.Class {
	case ClassShip:
		fmt.Fprintf(&sb, " species=%s pos=%v orient=%v", m.Species, m.Position, m.Orientation)
		if m.Direction != (dissect.Dir3{}) {
			fmt.Fprintf(&sb, " dir=%v", m.Direction)
		}
		fmt.Fprintf(&sb, " speed=%g", m.Speed)
		fmt.Fprintf(&sb, " player=%q set=%q", m.PlayerName, m.SetName)
		if m.SubsystemData != nil || len(m.Subsystems) == 0 {
			fmt.Fprintf(&sb, " subsystem-state=[% X]", m.SubsystemData)
			if m.SubsystemsNote != "" {
				fmt.Fprintf(&sb, " (undecoded: %s)", m.SubsystemsNote)
			}
		} else {
			b := []byte(" subsystems=[")
			for i := range m.Subsystems {
				if i > 0 {
					b = append(b, ' ')
				}
				b = m.Subsystems[i].appendString(b)
			}
			sb.Write(append(b, ']'))
		}
	case ClassTorpedo:
		fmt.Fprintf(&sb, " torpedo=%s", m.TorpedoType)
	}
	return sb.String()
}

// MarshalJSON is AppendJSON for encoding/json.
func (m ObjCreate) MarshalJSON() ([]byte, error) { return m.AppendJSON(nil), nil }

// SubsystemSummary sums up a ship's subsystem states in a line for
// session facts: "11 subsystems, all full" when every condition, battery
// and facing is full and every powered subsystem on at 100%; otherwise the
// ones that are not, conditions as a percentage ("Phasers 50%, Sensor Array
// off at 80%; 9 others full"). Undecoded states give "subsystems
// undecoded: " and the reason; a body without states gives "".
func (m *ObjCreate) SubsystemSummary() string {
	if m.Class != ClassShip {
		return ""
	}
	if len(m.Subsystems) == 0 || m.SubsystemData != nil {
		if m.SubsystemsNote == "" {
			return ""
		}
		return "subsystems undecoded: " + m.SubsystemsNote
	}
	var odd []string
	for i := range m.Subsystems {
		if d := m.Subsystems[i].notFull(); d != "" {
			odd = append(odd, d)
		}
	}
	if len(odd) == 0 {
		return strconv.Itoa(len(m.Subsystems)) + " subsystems, all full"
	}
	return strings.Join(odd, ", ") + "; " + strconv.Itoa(len(m.Subsystems)-len(odd)) + " others full"
}

// AppendJSON appends {"id":"0x00008008","name":"ship"} (name left out for
// unknown classes).
func (c ObjectClass) AppendJSON(b []byte) []byte {
	name := ""
	if c == ClassShip || c == ClassTorpedo {
		name = c.String()
	}
	return appendIDName(b, `{"id":"`, uint32(c), name)
}

// AppendJSON appends [w,x,y,z] (NaN and infinities as null).
func (q Quaternion) AppendJSON(b []byte) []byte {
	b = appendJSONF32(append(b, '['), q.W)
	b = appendJSONF32(append(b, ','), q.X)
	b = appendJSONF32(append(b, ','), q.Y)
	b = appendJSONF32(append(b, ','), q.Z)
	return append(b, ']')
}

// AppendJSON appends the envelope, the header and the class's fields.
func (m *ObjCreate) AppendJSON(b []byte) []byte {
	b = appendUint(append(b, `{"owner":`...), uint64(m.Owner))
	if m.HasTeam {
		b = appendUint(append(b, `,"team":`...), uint64(m.Team))
	}
	b = m.Class.AppendJSON(append(b, `,"class":`...))
	b = m.Object.AppendJSON(append(b, `,"object":`...))
	switch m.Class {
	case ClassShip:
		b = m.Species.AppendJSON(append(b, `,"species":`...))
		if spec := ShipBySpecies(m.Species); spec != nil {
			b = jsonenc.String(append(b, `,"ship_class":`...), spec.Name)
		}
		b = m.Position.AppendJSON(append(b, `,"position":`...))
		b = m.Orientation.AppendJSON(append(b, `,"orientation":`...))
		b = m.Direction.AppendJSON(append(b, `,"direction":`...))
		b = appendJSONF32(append(b, `,"speed":`...), m.Speed)
		b = jsonenc.String(append(b, `,"player_name":`...), m.PlayerName)
		b = jsonenc.String(append(b, `,"set_name":`...), m.SetName)
		if m.SubsystemData == nil && len(m.Subsystems) > 0 {
			b = append(b, `,"subsystems":[`...)
			for i := range m.Subsystems {
				if i > 0 {
					b = append(b, ',')
				}
				b = m.Subsystems[i].AppendJSON(b)
			}
			b = append(b, ']')
		} else {
			b = jsonenc.Hex(append(b, `,"subsystem_data":`...), m.SubsystemData)
			if m.SubsystemsNote != "" {
				b = jsonenc.String(append(b, `,"subsystems_undecoded":`...), m.SubsystemsNote)
			}
		}
	case ClassTorpedo:
		b = m.TorpedoType.AppendJSON(append(b, `,"torpedo_type":`...))
	}
	return append(b, '}')
}
