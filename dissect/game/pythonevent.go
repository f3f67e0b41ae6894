package game

import (
	"fmt"
	"strings"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/internal/jsonenc"
)

// Event is a serialized TGEvent, the payload of PythonEvent (0x06/0x0D), of
// the event-forward opcodes (0x07-0x12, 0x1B) and of CollisionEffect (0x15).
//
// Every class starts with the same 16 bytes: the class (factory id, u32),
// the event code (u32), and the source and destination object references
// (u32 each; 0 is no object, 0xFFFFFFFF the -1 sentinel). What follows
// depends on the class; the fields below the header are each used by the
// classes named in their comments and are zero otherwise. A class no source
// describes keeps the rest of the message in Extra (and the decoder warns).
//
// Decoding allocates nothing in steady state: SetName and Extra alias the
// input, and Contacts is reused from one message to the next.
type Event struct {
	Class  EventClass `json:"class"`
	Code   EventCode  `json:"code"`
	Source ObjectID   `json:"source"`
	Dest   ObjectID   `json:"dest"`

	// Value is the one byte of TGCharEvent, SubsystemControlEvent and
	// DeletePlayerEvent: the phaser level for SetPhaserLevel (0x12), the
	// new torpedo type for TorpedoTypeChange (0x1B), the wire peer id for
	// DeletePlayerUI (0x17).
	Value uint8 `json:"value"`
	// ObjPtr is TGObjPtrEvent's third object: the target (or 0) for
	// ET_WEAPON_FIRED and the phaser/tractor events, the previous target
	// for ET_TARGET_WAS_CHANGED, a subsystem for ET_REPAIR_INCREASE_PRIORITY.
	ObjPtr ObjectID `json:"obj_ptr"`
	// FiringPlayer (the killer's player id) and Lifetime (explosion effect
	// duration in seconds) belong to ObjectExplodingEvent.
	FiringPlayer int32   `json:"firing_player"`
	Lifetime     float32 `json:"lifetime"`
	// Contacts and Force belong to CollisionEvent: up to 255 contact
	// points relative to the reporting ship (in units of its bounding
	// radius) and the impact force. The count byte is len(Contacts).
	Contacts []dissect.Contact `json:"contacts"`
	Force    float32           `json:"force"`
	// FiringData is the eight bytes StartFiringEvent adds; no source
	// decodes them.
	FiringData [8]byte `json:"firing_data"`
	// SetName (u8 length + bytes), Destination (three f32) and Speed (f32)
	// belong to StartWarpEvent.
	SetName     []byte       `json:"set_name"`
	Destination dissect.Vec3 `json:"destination"`
	Speed       float32      `json:"speed"`
	// Extra is everything after the header when the class is unknown.
	Extra []byte `json:"extra"`
}

// read decodes a serialized event from r.
func (e *Event) read(r *dissect.Reader) {
	*e = Event{Contacts: e.Contacts[:0]}
	e.Class = EventClass(r.U32("event class"))
	e.Code = EventCode(r.U32("event code"))
	e.Source = readID(r, "source object")
	e.Dest = readID(r, "destination object")
	if r.Err() != nil {
		return
	}
	switch e.Class {
	case EventClassBase, EventClassSubsystem:
	case EventClassSubsystemControl, EventClassChar, EventClassDeletePlayer:
		e.Value = r.U8("event value")
	case EventClassObjPtr:
		e.ObjPtr = readID(r, "object pointer")
	case EventClassObjectExploding:
		e.FiringPlayer = r.I32("firing player")
		e.Lifetime = r.F32("explosion lifetime")
	case EventClassCollision:
		e.Contacts = readContacts(r, e.Contacts)
		e.Force = r.F32("collision force")
	case EventClassStartFiring:
		copy(e.FiringData[:], r.Bytes(len(e.FiringData), "start-firing data"))
	case EventClassStartWarp:
		n := r.U8("set name length")
		e.SetName = r.Bytes(int(n), "set name")
		e.Destination.X = r.F32("warp destination x")
		e.Destination.Y = r.F32("warp destination y")
		e.Destination.Z = r.F32("warp destination z")
		e.Speed = r.F32("warp speed")
	default:
		e.Extra = r.Bytes(r.Len(), "payload of unknown event class")
	}
}

// appendTo encodes e. A set name longer than 255 bytes is cut to fit, as is
// a contact list longer than 255.
func (e *Event) appendTo(w *dissect.Writer) {
	w.U32(uint32(e.Class))
	w.U32(uint32(e.Code))
	appendID(w, e.Source)
	appendID(w, e.Dest)
	switch e.Class {
	case EventClassBase, EventClassSubsystem:
	case EventClassSubsystemControl, EventClassChar, EventClassDeletePlayer:
		w.U8(e.Value)
	case EventClassObjPtr:
		appendID(w, e.ObjPtr)
	case EventClassObjectExploding:
		w.I32(e.FiringPlayer)
		w.F32(e.Lifetime)
	case EventClassCollision:
		appendContacts(w, e.Contacts)
		w.F32(e.Force)
	case EventClassStartFiring:
		w.Raw(e.FiringData[:])
	case EventClassStartWarp:
		name := e.SetName
		if len(name) > 255 {
			name = name[:255]
		}
		w.U8(uint8(len(name)))
		w.Raw(name)
		w.F32(e.Destination.X)
		w.F32(e.Destination.Y)
		w.F32(e.Destination.Z)
		w.F32(e.Speed)
	default:
		w.Raw(e.Extra)
	}
}

// String lists the event's fields in wire order.
func (e Event) String() string { return string(e.AppendText(make([]byte, 0, 128))) }

// AppendText appends String's form. decode prints it for every event
// message (weapon fire, repairs: a tenth of a battle's lines): the common
// classes are appended directly, the rare ones through fmt
// (FuzzEventTextMatchesFmt holds them to fmt's form, stringFmt).
func (e *Event) AppendText(b []byte) []byte {
	b = append(append(b, "class="...), e.Class.String()...)
	b = append(append(b, " code="...), e.Code.String()...)
	b = appendEventObj(append(b, " src="...), e.Source)
	b = appendEventObj(append(b, " dst="...), e.Dest)
	switch e.Class {
	case EventClassSubsystemControl, EventClassChar, EventClassDeletePlayer:
		b = appendUint(append(b, " value="...), uint64(e.Value))
	case EventClassObjPtr:
		b = appendEventObj(append(b, " obj_ptr="...), e.ObjPtr)
	case EventClassStartFiring:
		b = append(b, " data="...)
		for i, c := range e.FiringData { // fmt's % X
			if i > 0 {
				b = append(b, ' ')
			}
			b = append(b, hexDigits[c>>4], hexDigits[c&0xF])
		}
	case EventClassBase, EventClassSubsystem:
	default:
		return e.appendTextFmt(b)
	}
	return b
}

// appendTextFmt appends the fields of the rarer classes with fmt.
func (e *Event) appendTextFmt(b []byte) []byte {
	switch e.Class {
	case EventClassObjectExploding:
		return fmt.Appendf(b, " firing_player=%d lifetime=%g", e.FiringPlayer, e.Lifetime)
	case EventClassCollision:
		b = append(b, contactsString(e.Contacts)...)
		return fmt.Appendf(b, " force=%g", e.Force)
	case EventClassStartWarp:
		return fmt.Appendf(b, " set=%q dest=%v speed=%g", e.SetName, e.Destination, e.Speed)
	}
	return fmt.Appendf(b, " extra=% X", e.Extra)
}

// appendEventObj appends eventObj's form of id.
func appendEventObj(b []byte, id ObjectID) []byte {
	switch id {
	case 0:
		return append(b, "null"...)
	case 0xFFFFFFFF:
		return append(b, "-1"...)
	}
	return id.AppendString(b)
}

// stringFmt is the String form as fmt wrote it before AppendText, kept
// for FuzzEventTextMatchesFmt.
func (e Event) stringFmt() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "class=%v code=%v src=%s dst=%s", e.Class, e.Code, eventObj(e.Source), eventObj(e.Dest))
	switch e.Class {
	case EventClassSubsystemControl, EventClassChar, EventClassDeletePlayer:
		fmt.Fprintf(&sb, " value=%d", e.Value)
	case EventClassObjPtr:
		fmt.Fprintf(&sb, " obj_ptr=%s", eventObj(e.ObjPtr))
	case EventClassObjectExploding:
		fmt.Fprintf(&sb, " firing_player=%d lifetime=%g", e.FiringPlayer, e.Lifetime)
	case EventClassCollision:
		sb.WriteString(contactsString(e.Contacts))
		fmt.Fprintf(&sb, " force=%g", e.Force)
	case EventClassStartFiring:
		fmt.Fprintf(&sb, " data=% X", e.FiringData[:])
	case EventClassStartWarp:
		fmt.Fprintf(&sb, " set=%q dest=%v speed=%g", e.SetName, e.Destination, e.Speed)
	case EventClassBase, EventClassSubsystem:
	default:
		fmt.Fprintf(&sb, " extra=% X", e.Extra)
	}
	return sb.String()
}

// MarshalJSON is AppendJSON for encoding/json.
func (e Event) MarshalJSON() ([]byte, error) { return e.AppendJSON(nil), nil }

// warning flags a class whose payload no source describes.
func (e *Event) warning() string {
	if e.Class.Known() {
		return ""
	}
	return fmt.Sprintf("event class %s is not one the sources describe; its %d payload bytes are kept raw",
		hex32(uint32(e.Class)), len(e.Extra))
}

// eventObj shows an object reference with the two special values named.
func eventObj(id ObjectID) string {
	switch id {
	case 0:
		return "null"
	case 0xFFFFFFFF:
		return "-1"
	}
	return id.String()
}

// PythonEvent carries one serialized event. 0x06 (PythonEvent) is what the
// host sends every other peer: repair-list changes (TGSubsystemEvent), weapon
// and tractor notifications (TGObjPtrEvent) and ship explosions
// (ObjectExplodingEvent). 0x0D (PythonEvent2) has the same layout and is sent
// by clients to the host only, which dispatches it without relaying; stock
// clients use it for ET_TARGET_WAS_CHANGED. Op says which of the two it is.
type PythonEvent struct {
	Op Opcode `json:"-"` // OpPythonEvent or OpPythonEvent2
	Event
}

func init() {
	register(OpPythonEvent, func() Message { return &PythonEvent{Op: OpPythonEvent} })
	register(OpPythonEvent2, func() Message { return &PythonEvent{Op: OpPythonEvent2} })
}

func (m *PythonEvent) Opcode() Opcode { return m.Op }

func (m *PythonEvent) decode(r *dissect.Reader, _ *Context) { m.Event.read(r) }

// Append encodes m with its Op (0x06 when Op is neither 0x06 nor 0x0D).
func (m *PythonEvent) Append(b []byte) []byte {
	op := m.Op
	if op != OpPythonEvent && op != OpPythonEvent2 {
		op = OpPythonEvent
	}
	w := dissect.NewWriter(append(b, byte(op)))
	m.Event.appendTo(w)
	return w.Bytes()
}

func (m *PythonEvent) String() string { return m.Event.String() }

// AppendString appends String's form (decode's printer appends it to its
// line without making the string).
func (m *PythonEvent) AppendString(b []byte) []byte { return m.Event.AppendText(b) }

func (m *PythonEvent) warning() string { return m.Event.warning() }

// MarshalJSON is AppendJSON for encoding/json.
func (m PythonEvent) MarshalJSON() ([]byte, error) { return m.AppendJSON(nil), nil }

// AppendJSON appends the header and the fields of the event's class only.
func (e *Event) AppendJSON(b []byte) []byte {
	return append(e.appendJSONFields(append(b, '{')), '}')
}

// appendJSONFields appends the event's members without the braces.
func (e *Event) appendJSONFields(b []byte) []byte {
	b = e.Class.AppendJSON(append(b, `"class":`...))
	b = e.Code.AppendJSON(append(b, `,"code":`...))
	b = e.Source.AppendJSON(append(b, `,"source":`...))
	b = e.Dest.AppendJSON(append(b, `,"dest":`...))
	switch e.Class {
	case EventClassSubsystemControl, EventClassChar, EventClassDeletePlayer:
		b = appendUint(append(b, `,"value":`...), uint64(e.Value))
	case EventClassObjPtr:
		b = e.ObjPtr.AppendJSON(append(b, `,"obj_ptr":`...))
	case EventClassObjectExploding:
		b = appendInt(append(b, `,"firing_player":`...), int64(e.FiringPlayer))
		b = appendJSONF32(append(b, `,"lifetime":`...), e.Lifetime)
	case EventClassCollision:
		b = appendContactsJSON(append(b, ','), e.Contacts)
		b = appendJSONF32(append(b, `,"force":`...), e.Force)
	case EventClassStartFiring:
		b = jsonenc.Hex(append(b, `,"firing_data":`...), e.FiringData[:])
	case EventClassStartWarp:
		b = jsonenc.String(append(b, `,"set_name":`...), e.SetName)
		b = e.Destination.AppendJSON(append(b, `,"destination":`...))
		b = appendJSONF32(append(b, `,"speed":`...), e.Speed)
	case EventClassBase, EventClassSubsystem:
	default:
		b = jsonenc.Hex(append(b, `,"extra":`...), e.Extra)
	}
	return b
}

// AppendJSON appends the event's fields.
func (m *PythonEvent) AppendJSON(b []byte) []byte { return m.Event.AppendJSON(b) }
