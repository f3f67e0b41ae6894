package game

import (
	"fmt"

	"github.com/bcwire/bcwire/dissect"
)

// Explosion (0x29) is an explosion that deals area damage, sent by the host
// to every client for weapon kills and torpedo impacts (not for collision
// kills or self-destruct), and replayed to a client that asks for an object
// (RequestObject) while the explosion is still active.
//
// Layout, 14 bytes: the object id (u32), the explosion centre as a 5-byte
// CompressedVector4 (direction + CF16 magnitude), then the radius and the
// damage as CF16. PROTOCOL.md settles the order as radius then damage
// (seeds/001, from the sender); OpenBC's combat-system page has damage first.
type Explosion struct {
	// Object is the object the explosion belongs to (the dying or hit ship).
	Object ObjectID `json:"object"`
	// Impact is the explosion centre.
	Impact dissect.CV4 `json:"impact"`
	// Radius is the damage radius.
	Radius dissect.CF16 `json:"radius"`
	// Damage is the damage dealt.
	Damage dissect.CF16 `json:"damage"`
}

func init() { register(OpExplosion, func() Message { return new(Explosion) }) }

func (m *Explosion) Opcode() Opcode { return OpExplosion }

func (m *Explosion) decode(r *dissect.Reader, _ *Context) {
	m.Object = readID(r, "object")
	d := r.Dir3("impact direction") // not r.CV4: it builds a field name at run time, which allocates
	m.Impact = dissect.CV4{Dir: d, Mag: r.CF16("impact magnitude")}
	m.Radius = r.CF16("radius")
	m.Damage = r.CF16("damage")
}

// Append encodes m.
func (m *Explosion) Append(b []byte) []byte {
	w := dissect.NewWriter(append(b, byte(OpExplosion)))
	appendID(w, m.Object)
	w.CV4(m.Impact)
	w.CF16(m.Radius)
	w.CF16(m.Damage)
	return w.Bytes()
}

func (m *Explosion) String() string {
	return fmt.Sprintf("object=%s impact=%v radius=%v damage=%v", m.Object, m.Impact, m.Radius, m.Damage)
}
