package wireshark

import (
	"encoding/binary"
	"math"
	"reflect"
	"strings"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
)

// A Layout is what the dissector shows of one game message as typed
// fields: the message's leading fields that sit at fixed offsets. Fixed
// says they are the whole message; otherwise the bytes after them are
// shown as bytes.
//
// Layouts are read from the Go message types (exported fields, in order,
// named by their JSON keys) and then checked against the message's own
// encoder (Append): a field is kept only while Append puts its value at
// the offset the layout says, whatever the values (see check). So the Lua
// dissector cannot disagree with the Go decoder about where a field is,
// and a message whose layout depends on its values ends its typed prefix
// where the dependence begins.
type Layout struct {
	Op     game.Opcode
	Name   string // the opcode's name, as decode prints it
	Fields []Field
	Fixed  bool
}

// Field is one typed field of a Layout.
type Field struct {
	Name   string // the JSON key
	Offset int    // from the opcode byte
	Kind   Kind
}

// Kind is a field's wire form.
type Kind int

// The wire forms the dissector knows. Vectors are shown as their three
// components, each a float, as decode --json shows them.
const (
	U8 Kind = iota
	I8
	Bool
	U16
	U32
	I32
	F32
	CF16    // CompressedFloat16, shown decoded
	ObjID   // u32 shown in hex
	Dir3    // three signed bytes, each /127
	CV4     // Dir3 + CF16 magnitude
	CV4F    // Dir3 + f32 magnitude
	Contact // Dir3 + u8 magnitude (/255 of... see dissect.Contact)
	Vec3    // three f32
)

// Size is the field's length on the wire.
func (k Kind) Size() int {
	switch k {
	case U8, I8, Bool:
		return 1
	case U16, CF16:
		return 2
	case U32, I32, F32, ObjID:
		return 4
	case Dir3:
		return 3
	case CV4:
		return 5
	case CV4F:
		return 7
	case Contact:
		return 4
	case Vec3:
		return 12
	}
	return 0
}

var (
	typeObjectID = reflect.TypeFor[game.ObjectID]()
	typeCF16     = reflect.TypeFor[dissect.CF16]()
	typeDir3     = reflect.TypeFor[dissect.Dir3]()
	typeCV4      = reflect.TypeFor[dissect.CV4]()
	typeCV4F     = reflect.TypeFor[dissect.CV4F]()
	typeContact  = reflect.TypeFor[dissect.Contact]()
	typeVec3     = reflect.TypeFor[dissect.Vec3]()
)

// kindOf is the wire form of a Go field type, false for a type whose size
// on the wire is not fixed.
func kindOf(t reflect.Type) (Kind, bool) {
	switch t {
	case typeObjectID:
		return ObjID, true
	case typeCF16:
		return CF16, true
	case typeDir3:
		return Dir3, true
	case typeCV4:
		return CV4, true
	case typeCV4F:
		return CV4F, true
	case typeContact:
		return Contact, true
	case typeVec3:
		return Vec3, true
	}
	switch t.Kind() {
	case reflect.Uint8:
		return U8, true
	case reflect.Int8:
		return I8, true
	case reflect.Bool:
		return Bool, true
	case reflect.Uint16:
		return U16, true
	case reflect.Uint32:
		return U32, true
	case reflect.Int32:
		return I32, true
	case reflect.Float32:
		return F32, true
	}
	return 0, false
}

// Layouts returns the layout of every opcode with a Go message type, in
// opcode order.
func Layouts() []Layout {
	var out []Layout
	for op := range 256 {
		if l, ok := layoutOf(game.Opcode(op)); ok {
			out = append(out, l)
		}
	}
	return out
}

// candidate is a field the type declares, before checking.
type candidate struct {
	Field
	index int // struct field index
}

func layoutOf(op game.Opcode) (Layout, bool) {
	m := game.New(op)
	if m == nil {
		return Layout{}, false
	}
	l := Layout{Op: op, Name: op.String()}
	t := reflect.TypeOf(m).Elem()
	var cands []candidate
	off, whole := 1, true
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" || name == "" {
			// Not a wire field of its own (an opcode kept for Append,
			// a decoder's note).
			if name == "-" {
				continue
			}
			whole = false
			break
		}
		k, ok := kindOf(f.Type)
		if !ok || strings.Contains(opts, "omitempty") {
			// omitempty marks a field present only for some values.
			whole = false
			break
		}
		cands = append(cands, candidate{Field{Name: name, Offset: off, Kind: k}, i})
		off += k.Size()
	}
	n, encLen := check(m, cands)
	l.Fields = make([]Field, n)
	for i := range n {
		l.Fields[i] = cands[i].Field
	}
	l.Fixed = whole && n == len(cands) && encLen == off
	return l, true
}

// check encodes m twice, with every candidate field zero and with each set
// to a distinct pattern, and returns how many leading candidates Append
// put where they claim to be, and the length of the zero encoding.
func check(m game.Message, cands []candidate) (n, zeroLen int) {
	t := reflect.TypeOf(m).Elem()
	zero := reflect.New(t)
	zb := zero.Interface().(game.Message).Append(nil)
	pat := reflect.New(t)
	want := make([][]byte, len(cands))
	for i, c := range cands {
		want[i] = setPattern(pat.Elem().Field(c.index), byte(0x11*(i+1)))
	}
	pb := pat.Interface().(game.Message).Append(nil)
	for n = 0; n < len(cands); n++ {
		c := cands[n]
		end := c.Offset + c.Kind.Size()
		if end > len(zb) || end > len(pb) || string(pb[c.Offset:end]) != string(want[n]) {
			break
		}
		for _, b := range zb[c.Offset:end] {
			if b != 0 {
				return n, len(zb)
			}
		}
	}
	return n, len(zb)
}

// setPattern gives v a value made from seed and returns its little-endian
// wire bytes.
func setPattern(v reflect.Value, seed byte) []byte {
	switch v.Kind() {
	case reflect.Bool:
		v.SetBool(true)
		return []byte{1}
	case reflect.Uint8:
		v.SetUint(uint64(seed))
		return []byte{seed}
	case reflect.Int8:
		v.SetInt(int64(int8(seed & 0x7F)))
		return []byte{seed & 0x7F}
	case reflect.Uint16:
		x := uint16(seed)<<8 | uint16(seed+1)
		v.SetUint(uint64(x))
		return binary.LittleEndian.AppendUint16(nil, x)
	case reflect.Uint32, reflect.Int32:
		x := uint32(seed)<<24 | uint32(seed+1)<<16 | uint32(seed+2)<<8 | uint32(seed+3)
		if v.Kind() == reflect.Uint32 {
			v.SetUint(uint64(x))
		} else {
			v.SetInt(int64(int32(x)))
		}
		return binary.LittleEndian.AppendUint32(nil, x)
	case reflect.Float32:
		f := float32(seed) + 0.5
		v.SetFloat(float64(f))
		return binary.LittleEndian.AppendUint32(nil, math.Float32bits(f))
	case reflect.Array:
		var b []byte
		for i := range v.Len() {
			b = append(b, setPattern(v.Index(i), seed+byte(i))...)
		}
		return b
	case reflect.Struct:
		var b []byte
		for i := range v.NumField() {
			b = append(b, setPattern(v.Field(i), seed+byte(4*i))...)
		}
		return b
	}
	return nil
}
