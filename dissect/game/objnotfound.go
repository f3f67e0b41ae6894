package game

import "github.com/bcwire/bcwire/dissect"

// ObjNotFound (0x1D) and RequestObject (0x1E) form the object recovery
// exchange: a peer that meets an object id it does not know (or wants an
// object's full state) names it, and the host answers with an ObjCreate
// (0x02/0x03) for that object, not with a message of these opcodes. Both
// are the object id (u32) and nothing else.

// ObjNotFound (0x1D) reports an object id the sender does not know.
type ObjNotFound struct {
	Object ObjectID `json:"object"`
}

// RequestObject (0x1E) asks the host for an object's full state.
type RequestObject struct {
	Object ObjectID `json:"object"`
}

func init() {
	register(OpObjNotFound, func() Message { return new(ObjNotFound) })
	register(OpRequestObject, func() Message { return new(RequestObject) })
}

func (m *ObjNotFound) Opcode() Opcode { return OpObjNotFound }

func (m *ObjNotFound) decode(r *dissect.Reader, _ *Context) { m.Object = readID(r, "object") }

func (m *ObjNotFound) Append(b []byte) []byte {
	w := dissect.NewWriter(append(b, byte(OpObjNotFound)))
	appendID(w, m.Object)
	return w.Bytes()
}

func (m *ObjNotFound) String() string { return "object=" + m.Object.String() }

func (m *RequestObject) Opcode() Opcode { return OpRequestObject }

func (m *RequestObject) decode(r *dissect.Reader, _ *Context) { m.Object = readID(r, "object") }

func (m *RequestObject) Append(b []byte) []byte {
	w := dissect.NewWriter(append(b, byte(OpRequestObject)))
	appendID(w, m.Object)
	return w.Bytes()
}

func (m *RequestObject) String() string { return "object=" + m.Object.String() }
