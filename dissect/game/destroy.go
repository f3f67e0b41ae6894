package game

import "github.com/bcwire/bcwire/dissect"

// DestroyObject (0x14) tells clients to remove an object: the host sends
// it to the remaining players for a disconnected player's ship (before
// DeletePlayerUI and DeletePlayerAnim). Stock play does not use it for ship
// deaths. Layout: the object id (u32).
type DestroyObject struct {
	Object ObjectID `json:"object"`
}

func init() { register(OpDestroyObject, func() Message { return new(DestroyObject) }) }

func (m *DestroyObject) Opcode() Opcode { return OpDestroyObject }

func (m *DestroyObject) decode(r *dissect.Reader, _ *Context) { m.Object = readID(r, "object") }

func (m *DestroyObject) Append(b []byte) []byte {
	w := dissect.NewWriter(append(b, byte(OpDestroyObject)))
	appendID(w, m.Object)
	return w.Bytes()
}

func (m *DestroyObject) String() string { return "object=" + m.Object.String() }
