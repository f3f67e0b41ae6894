package game

import (
	"fmt"

	"github.com/bcwire/bcwire/dissect"
)

// UICollision (0x16, UICollisionSetting) tells a client whether collision
// damage is on, updating the multiplayer window's collision toggle. It is one
// packed bit (a group byte of 0x20 or 0x21). Stock hosts do not send it
// during the join handshake: Settings already carries the same flag.
type UICollision struct {
	CollisionDamage bool `json:"collision_damage"`
}

func init() { register(OpUICollision, func() Message { return new(UICollision) }) }

func (m *UICollision) Opcode() Opcode { return OpUICollision }

func (m *UICollision) decode(r *dissect.Reader, _ *Context) {
	group := connPeekByte(r)
	m.CollisionDamage = r.Bit("collision damage")
	verifyStockBitGroup(r, group, "collision bit group", m.CollisionDamage)
}

func (m *UICollision) Append(b []byte) []byte {
	w := dissect.NewWriter(append(b, byte(OpUICollision)))
	w.Bit(m.CollisionDamage)
	return w.Bytes()
}

func (m *UICollision) String() string {
	return fmt.Sprintf("collision=%s", connOnOff(m.CollisionDamage))
}
