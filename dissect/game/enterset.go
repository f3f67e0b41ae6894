package game

import (
	"fmt"
	"math"

	"github.com/bcwire/bcwire/dissect"
)

// EnterSet (0x1F) moves a ship into another Set (a named scene region: a
// star system such as "Multi1"), after an in-system warp in multi-zone
// missions; standard game modes never send it. Layout: the object id
// (u32), the set name's length (i32), the name's bytes, then a NUL byte
// (OpenBC's enter-set page: the client trace shows both the length prefix
// and the terminator).
type EnterSet struct {
	Object  ObjectID `json:"object"`
	SetName string   `json:"set_name"`
	// Unterminated marks a name not followed by the NUL byte stock
	// senders write (Append then leaves it out too).
	Unterminated bool `json:"unterminated,omitempty"`
}

func init() { register(OpEnterSet, func() Message { return new(EnterSet) }) }

func (m *EnterSet) Opcode() Opcode { return OpEnterSet }

func (m *EnterSet) decode(r *dissect.Reader, ctx *Context) {
	*m = EnterSet{}
	m.Object = readID(r, "object")
	n := r.I32("set name length")
	if n < 0 {
		r.Failf("set name length", "negative length %d", n)
		return
	}
	m.SetName = ctx.str(r.Bytes(int(n), "set name"))
	if rest := r.Rest(); len(rest) > 0 && rest[0] == 0 {
		r.U8("set name terminator")
	} else {
		m.Unterminated = true
	}
}

// Append encodes m. A name too long for its i32 length is cut.
func (m *EnterSet) Append(b []byte) []byte {
	w := dissect.NewWriter(append(b, byte(OpEnterSet)))
	appendID(w, m.Object)
	name := m.SetName
	if len(name) > math.MaxInt32 {
		name = name[:math.MaxInt32]
	}
	w.I32(int32(len(name)))
	w.Raw([]byte(name))
	if !m.Unterminated {
		w.U8(0)
	}
	return w.Bytes()
}

func (m *EnterSet) warning() string {
	if m.Unterminated {
		return "set name is not followed by the NUL byte stock senders write"
	}
	return ""
}

func (m *EnterSet) String() string {
	return fmt.Sprintf("object=%s set=%q", m.Object, m.SetName)
}
