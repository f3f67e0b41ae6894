package game

import (
	"fmt"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/internal/jsonenc"
)

// EventForward is one of the event-forward opcodes: 0x07-0x0C, 0x0E-0x12 and
// 0x1B. A peer tells every other peer (through the host, which relays the
// bytes unchanged) that something happened to one of its own objects. The
// body is a serialized event (see Event); the opcode decides which event code
// the receiver posts (ReceiverCode). Classes seen per opcode in stock traces:
//
//	0x07 StartFiring         StartFiringEvent (0x8128), code ET_START_FIRING_NOTIFY
//	0x08 StopFiring          TGSubsystemEvent (0x0101), code ET_STOP_FIRING_NOTIFY
//	0x0A SubsystemStatus     SubsystemControlEvent (0x0104), one value byte
//	0x10 StartWarp           StartWarpEvent (0x812A): set name, destination, speed
//	0x11 RepairListPriority  TGObjPtrEvent (0x010C), ET_REPAIR_INCREASE_PRIORITY
//	0x12 SetPhaserLevel      TGCharEvent (0x0105), ET_SET_PHASER_LEVEL, level 0-2
//	0x1B TorpedoTypeChange   TGCharEvent (0x0105), ET_TORP_TYPE_CHANGE, torpedo type
//
// 0x09, 0x0B, 0x0C, 0x0E and 0x0F were not seen in any published trace; they
// decode like the rest, whatever class they carry.
//
// seeds/001 describes the body as "object id, then event data". The stock
// StopFiring bytes settle it: the body is a whole serialized event whose
// first word is the class (0x0101), not an object id. A body of exactly four
// bytes cannot be an event; it is decoded as that older "object id only" form
// (Bare), with a warning. An independent implementation sends StartCloaking
// that way (vectors/cipher.json).
type EventForward struct {
	Op Opcode `json:"-"` // one of the event-forward opcodes
	// Bare marks the four-byte form: Object and nothing else.
	Bare bool `json:"bare"`
	// Object is the bare form's object id (unused otherwise).
	Object ObjectID `json:"object"`
	// Event is the serialized event (unused in the bare form).
	Event
}

// eventForwardOps lists the opcodes EventForward decodes.
var eventForwardOps = []Opcode{
	OpStartFiring, OpStopFiring, OpStopFiringAtTarget, OpSubsystemStatus, OpAddToRepairList,
	OpClientEvent, OpStartCloaking, OpStopCloaking, OpStartWarp, OpRepairListPriority,
	OpSetPhaserLevel, OpTorpTypeChange,
}

func init() {
	for _, op := range eventForwardOps {
		register(op, func() Message { return &EventForward{Op: op} })
	}
}

func isEventForwardOp(op Opcode) bool {
	for _, o := range eventForwardOps {
		if o == op {
			return true
		}
	}
	return false
}

func (m *EventForward) Opcode() Opcode { return m.Op }

func (m *EventForward) decode(r *dissect.Reader, _ *Context) {
	m.Bare, m.Object = false, 0
	if r.Len() == 4 {
		m.Event = Event{Contacts: m.Contacts[:0]}
		m.Bare = true
		m.Object = readID(r, "object")
		return
	}
	m.Event.read(r)
}

// Append encodes m with its Op (StartFiring when Op is not an event-forward
// opcode).
func (m *EventForward) Append(b []byte) []byte {
	op := m.Op
	if !isEventForwardOp(op) {
		op = OpStartFiring
	}
	w := dissect.NewWriter(append(b, byte(op)))
	if m.Bare {
		appendID(w, m.Object)
	} else {
		m.Event.appendTo(w)
	}
	return w.Bytes()
}

// ReceiverCode is the event code a receiving peer posts: the opcode's fixed
// code for the opcodes that replace the wire code (the sender posts the
// _NOTIFY code locally, receivers the command code), else the wire code.
func (m *EventForward) ReceiverCode() EventCode {
	switch m.Op {
	case OpStartFiring:
		return ETStartFiring
	case OpStopFiring:
		return ETStopFiring
	case OpStopFiringAtTarget:
		return ETStopFiringAtTarget
	case OpSubsystemStatus:
		return ETSubsystemStatus
	case OpStartCloaking:
		return ETStartCloaking
	case OpStopCloaking:
		return ETStopCloaking
	case OpStartWarp:
		return ETStartWarp
	case OpTorpTypeChange:
		return ETTorpTypeChanged
	}
	return m.Code
}

// PhaserLevel is SetPhaserLevel's value byte (only meaningful for 0x12).
func (m *EventForward) PhaserLevel() PhaserPowerLevel { return PhaserPowerLevel(m.Value) }

// TorpedoType is TorpedoTypeChange's value byte (only meaningful for 0x1B).
func (m *EventForward) TorpedoType() TorpedoTypeIndex { return TorpedoTypeIndex(m.Value) }

// hasValue reports whether the event class carries the value byte.
func (m *EventForward) hasValue() bool {
	switch m.Class {
	case EventClassSubsystemControl, EventClassChar, EventClassDeletePlayer:
		return true
	}
	return false
}

func (m *EventForward) String() string { return string(m.AppendString(make([]byte, 0, 128))) }

// AppendString appends String's form (decode's printer appends it to its
// line without making the string).
func (m *EventForward) AppendString(b []byte) []byte {
	if m.Bare {
		return appendEventObj(append(b, "object="...), m.Object)
	}
	b = m.Event.AppendText(b)
	if m.hasValue() {
		switch m.Op {
		case OpSetPhaserLevel:
			b = append(append(append(b, " (level "...), m.PhaserLevel().String()...), ')')
		case OpTorpTypeChange:
			b = append(append(append(b, " (torpedo "...), m.TorpedoType().String()...), ')')
		}
	}
	return b
}

func (m *EventForward) warning() string {
	if m.Bare {
		return "event-forward body is a bare object id, not a serialized event (stock peers send a whole event)"
	}
	return m.Event.warning()
}

// MarshalJSON is AppendJSON for encoding/json.
func (m EventForward) MarshalJSON() ([]byte, error) { return m.AppendJSON(nil), nil }

// PhaserPowerLevel is the phaser intensity toggle that SetPhaserLevel (0x12)
// carries (PhaserSystem.PP_LOW/PP_MEDIUM/PP_HIGH).
type PhaserPowerLevel uint8

const (
	PhaserLow    PhaserPowerLevel = 0
	PhaserMedium PhaserPowerLevel = 1
	PhaserHigh   PhaserPowerLevel = 2
)

func (l PhaserPowerLevel) String() string {
	switch l {
	case PhaserLow:
		return "LOW"
	case PhaserMedium:
		return "MEDIUM"
	case PhaserHigh:
		return "HIGH"
	}
	return fmt.Sprintf("level(%d)", uint8(l))
}

// AppendJSON appends the event's fields, the receiver's event code, and the
// value byte's meaning for SetPhaserLevel and TorpedoTypeChange; the bare
// form is {"bare":true,"object":...}.
func (m *EventForward) AppendJSON(b []byte) []byte {
	if m.Bare {
		b = m.Object.AppendJSON(append(b, `{"bare":true,"object":`...))
		return append(b, '}')
	}
	b = m.Event.appendJSONFields(append(b, '{'))
	b = m.ReceiverCode().AppendJSON(append(b, `,"receiver_code":`...))
	if m.hasValue() {
		switch m.Op {
		case OpSetPhaserLevel:
			b = jsonenc.String(append(b, `,"phaser_level":`...), m.PhaserLevel().String())
		case OpTorpTypeChange:
			b = m.TorpedoType().AppendJSON(append(b, `,"torpedo_type":`...))
		}
	}
	return append(b, '}')
}
