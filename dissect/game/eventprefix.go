package game

import (
	"strconv"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/internal/jsonenc"
)

// EventPrefix is an event-forward message too short for any event (and not
// the four-byte bare form): the stock event's fields decoded as far as its
// bytes go (class, code, source, related object), then the bytes left. It
// is what Decode gives for such a message, marked non-stock (the
// registry's event-length), so that what the peer did send is shown by
// name; OpenBC's StopFiring, for one, carries a class and a code only.
type EventPrefix struct {
	Op Opcode `json:"-"`
	// Fields is how many of the four header fields the bytes hold.
	Fields int
	Class  EventClass
	Code   EventCode
	Source ObjectID
	Dest   ObjectID
	// Rest holds the bytes after the last whole field (aliasing the input).
	Rest []byte
}

// read fills m from p (opcode first).
func (m *EventPrefix) read(p []byte) {
	*m = EventPrefix{Op: Opcode(p[0])}
	b := p[1:]
	for m.Fields < 4 && len(b) >= 4 {
		m.set(uint32(b[0]) | uint32(b[1])<<8 | uint32(b[2])<<16 | uint32(b[3])<<24)
		b = b[4:]
	}
	m.Rest = b
}

// set stores v as the next header field.
func (m *EventPrefix) set(v uint32) {
	switch m.Fields {
	case 0:
		m.Class = EventClass(v)
	case 1:
		m.Code = EventCode(v)
	case 2:
		m.Source = ObjectID(v)
	case 3:
		m.Dest = ObjectID(v)
	}
	m.Fields++
}

func (m *EventPrefix) Opcode() Opcode { return m.Op }

func (m *EventPrefix) decode(r *dissect.Reader, _ *Context) {
	*m = EventPrefix{Op: m.Op}
	for m.Fields < 4 && r.Len() >= 4 {
		m.set(r.U32("event field"))
	}
	m.Rest = r.Bytes(r.Len(), "rest")
}

// Append writes the message back as it came.
func (m *EventPrefix) Append(b []byte) []byte {
	b = append(b, byte(m.Op))
	for i, v := range [4]uint32{uint32(m.Class), uint32(m.Code), uint32(m.Source), uint32(m.Dest)} {
		if i < m.Fields {
			b = append(b, byte(v), byte(v>>8), byte(v>>16), byte(v>>24))
		}
	}
	return append(b, m.Rest...)
}

func (m *EventPrefix) String() string {
	var b []byte
	if m.Fields > 0 {
		b = append(b, "class="...)
		b = append(b, m.Class.String()...)
	}
	if m.Fields > 1 {
		b = append(b, " code="...)
		b = append(b, m.Code.String()...)
	}
	if m.Fields > 2 {
		b = append(b, " src="...)
		b = append(b, eventObj(m.Source)...)
	}
	if m.Fields > 3 {
		b = append(b, " dst="...)
		b = append(b, eventObj(m.Dest)...)
	}
	if len(m.Rest) > 0 {
		if len(b) > 0 {
			b = append(b, ' ')
		}
		b = append(b, "rest="...)
		for i, c := range m.Rest {
			if i > 0 {
				b = append(b, ' ')
			}
			b = appendHex(b, uint64(c), 2)
		}
	}
	return string(b)
}

// MarshalJSON is AppendJSON for encoding/json.
func (m *EventPrefix) MarshalJSON() ([]byte, error) { return m.AppendJSON(nil), nil }

// AppendJSON appends {"class","code","source","dest" as far as the bytes
// go, "rest":"<hex>"}.
func (m *EventPrefix) AppendJSON(b []byte) []byte {
	b = append(b, '{')
	b = strconv.AppendInt(append(b, `"fields":`...), int64(m.Fields), 10)
	if m.Fields > 0 {
		b = m.Class.AppendJSON(append(b, `,"class":`...))
	}
	if m.Fields > 1 {
		b = m.Code.AppendJSON(append(b, `,"code":`...))
	}
	if m.Fields > 2 {
		b = m.Source.AppendJSON(append(b, `,"source":`...))
	}
	if m.Fields > 3 {
		b = m.Dest.AppendJSON(append(b, `,"dest":`...))
	}
	b = jsonenc.Hex(append(b, `,"rest":`...), m.Rest)
	return append(b, '}')
}
