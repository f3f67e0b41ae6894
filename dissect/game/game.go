// Package game decodes and encodes Bridge Commander game messages: the
// payloads carried by type 0x32 transport messages, from Settings (0x00)
// through NewPlayerInGame (0x2A), the checksum/NetFile exchange (0x20-0x28)
// and the script messages sent from Python (0x2C and up).
//
// Each message type lives in its own file as a struct with named, typed
// fields, a decode method, Append (the encoder) and String (its one-line
// text form), and AppendJSON. What is mechanical is generated from the
// struct tags by internal/jsongen (`go generate ./dissect/game`): most
// messages' JSON into zjson.go, and StateUpdate's header (reader, writer,
// text and JSON) into zheader.go. A Decoder owns one value of every type and
// reuses it, so decoding allocates nothing per message in steady state; a
// decoded Message is valid until the Decoder's next call.
package game

import (
	"fmt"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/internal/jsonenc"
)

// Message is one decoded game message.
type Message interface {
	// Opcode is the message's first byte.
	Opcode() Opcode
	// decode reads the fields that follow the opcode byte from r, leaving
	// anything it does not understand unread. Errors go into r (sticky).
	decode(r *dissect.Reader, ctx *Context)
	// Append encodes the message, opcode byte included, and appends it to b.
	Append(b []byte) []byte
	// String is the one-line summary used by `decode` and by diffs: field
	// values only, in wire order, without the message name.
	String() string
}

// Direction says who sent a message; a few layouts depend on it.
type Direction uint8

const (
	DirUnknown Direction = iota
	ClientToServer
	ServerToClient
)

func (d Direction) String() string {
	switch d {
	case ClientToServer:
		return "C->S"
	case ServerToClient:
		return "S->C"
	}
	return "?"
}

// Context is what a decoder may need beyond the message bytes.
type Context struct {
	Dir Direction
	// Ships maps object ids to ship classes learnt from ObjCreate messages
	// earlier in the same capture, so StateUpdate can name subsystems.
	Ships *ShipRegistry
	// strs, when set, makes decoded strings come from the Decoder's
	// intern table (see Context.str).
	strs *internTable
}

// constructors makes a fresh value of each registered message type.
var constructors [256]func() Message

// register is called from each message file's init.
func register(op Opcode, newFn func() Message) {
	if constructors[op] != nil {
		panic(fmt.Sprintf("game: opcode %#02x registered twice", uint8(op)))
	}
	constructors[op] = newFn
}

// New returns a zero message of opcode op's type, or nil when no stock
// layout is known for op (Decode then returns a *Raw).
func New(op Opcode) Message {
	if f := constructors[op]; f != nil {
		return f()
	}
	return nil
}

// Result is the outcome of decoding one game message.
type Result struct {
	Msg Message
	// Unparsed holds bytes the decoder left over (aliasing the input);
	// Warning then says so. A message with unparsed bytes still decoded.
	Unparsed []byte
	Warning  string
	// Err is set when the message could not be decoded as its opcode's
	// layout; Msg is then a *Raw with every byte. (An event-forward
	// message too short for any event is an *EventPrefix, marked
	// non-stock, without an error.)
	Err error
	// NonStock is set when the message is not in stock's form: a form of
	// the registry (dissect.Forms), or unknown when Err is set and no form
	// fits. It points into the Decoder, like Msg.
	NonStock *dissect.NonStock
}

// Decoder decodes game messages, reusing one value per message type.
type Decoder struct {
	Ships ShipRegistry
	msgs  [256]decoderSlot
	// su is msgs[OpStateUpdate]'s message once made, which Decode calls
	// directly.
	su   *StateUpdate
	raw  Raw
	r    dissect.Reader
	ctx  Context // kept here so passing it to decode does not allocate
	strs internTable
	ns   dissect.NonStock // Result.NonStock's value
	// prefix is Result.Msg for an event-forward message too short for
	// any event.
	prefix EventPrefix
}

// decoderSlot is an opcode's reusable message and, when it has one, its
// warning method, looked up once so that Decode makes no type assertion.
type decoderSlot struct {
	m Message
	w warner
}

// NewDecoder returns a ready Decoder.
func NewDecoder() *Decoder {
	d := &Decoder{}
	d.Ships.init()
	d.ctx.Ships, d.ctx.strs = &d.Ships, &d.strs
	return d
}

// Decode decodes the game message p (opcode byte first) sent in direction
// dir. The returned message and slices alias p and d, and stay valid until
// the next call. A message that is not in stock's form is marked
// (Result.NonStock).
func (d *Decoder) Decode(p []byte, dir Direction) (res Result) {
	d.DecodeTo(&res, p, dir)
	return res
}

// DecodeTo is Decode writing the result into *res, every field of it: a
// caller that keeps its Result in place (flow's Tracker) saves the copy of
// a returned one, which cost more than the usual StateUpdate's decoding (a
// store-forwarding stall: the copy reads with 16-byte loads what Decode
// had just stored 8 bytes at a time).
func (d *Decoder) DecodeTo(res *Result, p []byte, dir Direction) {
	// StateUpdate is most of the game traffic: its usual form is decoded
	// without the Reader, and the rest with its decode, both on its own
	// type rather than through the Message and warner interfaces (as
	// quic-go's frame parser special-cases its common frames).
	if d.DecodeStateUpdate(res, p, dir) {
		return
	}
	*res = Result{}
	if len(p) == 0 {
		d.raw = Raw{}
		d.ns = dissect.NonStock{Form: dissect.FormUnknown, Stock: "an opcode byte"}
		res.Msg, res.Err, res.NonStock = &d.raw, &dissect.Error{Offset: 0, What: "opcode", Err: dissect.ErrShort}, &d.ns
		return
	}
	op := Opcode(p[0])
	if classifiedOps[op] && shortEvent(p) {
		// The event decoder would only fail (and allocate its error): the
		// message is read as the event's fields as far as they go.
		d.prefix.read(p)
		res.Msg = &d.prefix
		d.classify(p, dir, res)
		return
	}
	d.decode(res, p, op, dir)
	if res.Err != nil || classifiedOps[op] || op == OpStateUpdate && d.su.openbc != 0 {
		d.classify(p, dir, res)
	}
}

// decode is DecodeTo for the messages its fast paths leave; *res is zero.
func (d *Decoder) decode(res *Result, p []byte, op Opcode, dir Direction) {
	d.ctx.Dir = dir
	d.r.ResetAt(p[1:], 1)
	var warning string
	var m Message
	if op == OpStateUpdate && d.su != nil {
		d.su.decode(&d.r, &d.ctx)
		if d.r.Err() == nil {
			warning = d.su.warning()
		}
		m = d.su
	} else {
		slot := &d.msgs[op]
		if slot.m == nil {
			if !d.newSlot(slot, op) {
				d.raw = Raw{Op: op, Data: p[1:]}
				res.Msg = &d.raw
				if !op.IsScript() { // a mod's own script message is not an error
					res.Warning = fmt.Sprintf("no stock layout for opcode %#02x; shown raw", uint8(op))
				}
				return
			}
		}
		m = slot.m
		m.decode(&d.r, &d.ctx)
		if slot.w != nil && d.r.Err() == nil {
			warning = slot.w.warning()
		}
	}
	if err := d.r.Err(); err != nil {
		d.raw = Raw{Op: op, Data: p[1:]}
		res.Msg, res.Err = &d.raw, err
		return
	}
	if op == OpObjCreate || op == OpObjCreateTeam {
		d.Ships.learn(m)
	}
	res.Msg, res.Warning = m, warning
	if d.r.Len() == 0 {
		return
	}
	res.Unparsed = d.r.Rest()
	if warning == "" {
		res.Warning = fmt.Sprintf("%d bytes after the last field were not decoded", len(res.Unparsed))
	}
}

// newSlot makes op's message in slot, and reports false when op has no
// stock layout.
func (d *Decoder) newSlot(slot *decoderSlot, op Opcode) bool {
	m := New(op)
	if m == nil {
		return false
	}
	slot.m = m
	slot.w, _ = m.(warner)
	if su, ok := m.(*StateUpdate); ok {
		d.su = su
	}
	d.ctx.Ships, d.ctx.strs = &d.Ships, &d.strs
	return true
}

// warner is implemented by messages that decode but look odd (a dead
// opcode, a value outside what stock sends).
type warner interface{ warning() string }

// Raw is a message shown as bytes: a mod's custom script message, an opcode
// with no stock layout, or one that failed to decode.
type Raw struct {
	Op   Opcode `json:"-"`
	Data []byte `json:"data"` // everything after the opcode byte
}

func (m *Raw) Opcode() Opcode                       { return m.Op }
func (m *Raw) decode(r *dissect.Reader, _ *Context) { m.Data = r.Bytes(r.Len(), "data") }
func (m *Raw) Append(b []byte) []byte               { return append(append(b, byte(m.Op)), m.Data...) }
func (m *Raw) String() string                       { return fmt.Sprintf("% X", m.Data) }

// MarshalJSON is AppendJSON for encoding/json.
func (m *Raw) MarshalJSON() ([]byte, error) { return m.AppendJSON(nil), nil }

// AppendJSON appends {"data":"<hex>"}.
func (m *Raw) AppendJSON(b []byte) []byte {
	return append(jsonenc.Hex(append(b, `{"data":`...), m.Data), '}')
}
