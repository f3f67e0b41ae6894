package game

import (
	"fmt"
	"strings"

	"github.com/bcwire/bcwire/dissect"
)

// CollisionEffect (0x15) is a client's report of a collision involving its
// ship, sent to the host only (never relayed). It is a serialized
// CollisionEvent: the event header (class 0x8124, code ET_COLLISION_EFFECT,
// the other object, the reporting ship), a u8 contact count, that many
// 4-byte contact points, and the impact force as an f32. The host checks
// the report and re-posts it as ET_HOST_COLLISION_EFFECT to apply damage.
//
// Each contact point is a direction (three signed bytes /127) and one
// magnitude byte, a fraction (/255) of the reporting ship's bounding radius,
// in the ship's own frame. The radius is not on the wire.
type CollisionEffect struct {
	// Class is the event class; stock always sends EventClassCollision.
	Class EventClass `json:"class"`
	// Code is ET_COLLISION_EFFECT in every stock message.
	Code EventCode `json:"code"`
	// Source is the other colliding object, 0 for the environment
	// (asteroids, planets).
	Source ObjectID `json:"source"`
	// Target is the ship that reports the collision.
	Target ObjectID `json:"target"`
	// Contacts are the contact points (1 or 2 in stock traffic, 255 at
	// most); the count byte on the wire is len(Contacts).
	Contacts []dissect.Contact `json:"contacts"`
	// Force is the impact force.
	Force float32 `json:"force"`
}

func init() { register(OpCollisionEffect, func() Message { return new(CollisionEffect) }) }

func (m *CollisionEffect) Opcode() Opcode { return OpCollisionEffect }

func (m *CollisionEffect) decode(r *dissect.Reader, _ *Context) {
	m.Class = EventClass(r.U32("event class"))
	if r.Err() == nil && m.Class != EventClassCollision {
		r.Failf("event class", "%s is not the collision event class 0x00008124", hex32(uint32(m.Class)))
		return
	}
	m.Code = EventCode(r.U32("event code"))
	m.Source = readID(r, "source object")
	m.Target = readID(r, "target object")
	m.Contacts = readContacts(r, m.Contacts)
	m.Force = r.F32("collision force")
}

// Append encodes m. The class is written as stored; a zero Class (a literal
// that left it out) is written as EventClassCollision.
func (m *CollisionEffect) Append(b []byte) []byte {
	class := m.Class
	if class == 0 {
		class = EventClassCollision
	}
	w := dissect.NewWriter(append(b, byte(OpCollisionEffect)))
	w.U32(uint32(class))
	w.U32(uint32(m.Code))
	appendID(w, m.Source)
	appendID(w, m.Target)
	appendContacts(w, m.Contacts)
	w.F32(m.Force)
	return w.Bytes()
}

func (m *CollisionEffect) String() string {
	return fmt.Sprintf("class=%v code=%v src=%s target=%s%s force=%g",
		m.Class, m.Code, eventObj(m.Source), eventObj(m.Target), contactsString(m.Contacts), m.Force)
}

func (m *CollisionEffect) warning() string {
	if m.Code != ETCollisionEffect {
		return fmt.Sprintf("collision event code is %v, not ET_COLLISION_EFFECT (0x00800050) as in every stock report", m.Code)
	}
	return ""
}

// MarshalJSON is AppendJSON for encoding/json.
func (m CollisionEffect) MarshalJSON() ([]byte, error) { return m.AppendJSON(nil), nil }

// readContacts reads a u8 count and that many contact points into dst,
// reusing its storage. (The fields are read one by one with constant
// names: Reader.Contact builds its magnitude's name at run time, which
// allocates.)
func readContacts(r *dissect.Reader, dst []dissect.Contact) []dissect.Contact {
	n := int(r.U8("contact count"))
	dst = dst[:0]
	for i := 0; i < n && r.Err() == nil; i++ {
		d := r.Dir3("contact point direction")
		dst = append(dst, dissect.Contact{Dir: d, Mag: r.U8("contact point magnitude")})
	}
	return dst
}

// appendContacts writes the count and at most 255 contact points.
func appendContacts(w *dissect.Writer, cs []dissect.Contact) {
	if len(cs) > 255 {
		cs = cs[:255]
	}
	w.U8(uint8(len(cs)))
	for _, c := range cs {
		w.Contact(c)
	}
}

func contactsString(cs []dissect.Contact) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, " contacts=%d", len(cs))
	for _, c := range cs {
		fmt.Fprintf(&sb, " [dir=(%d,%d,%d) mag=%d]", c.Dir[0], c.Dir[1], c.Dir[2], c.Mag)
	}
	return sb.String()
}

// AppendJSON appends the event header, the contact count, each contact's
// decoded point, and the force.
func (m *CollisionEffect) AppendJSON(b []byte) []byte {
	b = m.Class.AppendJSON(append(b, `{"class":`...))
	b = m.Code.AppendJSON(append(b, `,"code":`...))
	b = m.Source.AppendJSON(append(b, `,"source":`...))
	b = m.Target.AppendJSON(append(b, `,"target":`...))
	b = appendContactsJSON(append(b, ','), m.Contacts)
	b = appendJSONF32(append(b, `,"force":`...), m.Force)
	return append(b, '}')
}
