package dissect

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/bcwire/bcwire/internal/jsonenc"
)

// Compressed number forms of the stock stream. The float arithmetic is done
// in float32, as the game does, so decoded values match what a client sees.

// CF16 is a CompressedFloat16: [sign:1][scale:3][mantissa:12]. Scale s spans
// [0.001*10^(s-1), 0.001*10^s) (scale 0 spans [0, 0.001)), and the mantissa
// is a linear position in that decade out of 4095.
type CF16 uint16

const (
	cf16Base    float32 = 0.001
	cf16Mult    float32 = 10.0
	cf16EncMult float32 = 4095.0
)

// cf16DecInv is float32(1/4095), the decoder's constant. Using 1/4096 would
// make mantissa 4095 fall short of the top of its decade.
var cf16DecInv = float32(1.0 / 4095.0)

// Float decodes c.
func (c CF16) Float() float32 {
	d := &cf16Decades[c>>12&7]
	v := d.span*float32(c&0xFFF)*cf16DecInv + d.lo
	if c&0x8000 != 0 {
		v = -v
	}
	return v
}

// cf16Decade is the span of a scale: its bottom, and its top minus its
// bottom, in float32.
type cf16Decade struct{ lo, span float32 }

// cf16Decades (tables_gen.go, made by TestGeneratedTables) are the spans
// of the eight scales, worked out in float32 as the game does (each top
// ten times the one below), once rather than for every value.

// EncodeCF16 compresses v the way the stock encoder does: find the decade,
// then truncate (never round) the position in it to 12 bits. Values of 10000
// and more clamp to the largest code.
func EncodeCF16(v float32) CF16 {
	var sign CF16
	if v < 0 {
		sign = 0x8000
		v = -v
	}
	if v != v { // NaN encodes as zero rather than garbage
		return sign
	}
	lo, hi := float32(0), cf16Base
	scale := 0
	for v >= hi {
		scale++
		if scale == 8 {
			return sign | 0x7FFF
		}
		lo = hi
		hi = lo * cf16Mult
	}
	m := int32((v - lo) / (hi - lo) * cf16EncMult)
	if m > 0xFFF {
		m = 0xFFF
	}
	if m < 0 {
		m = 0
	}
	return sign | CF16(scale)<<12 | CF16(m)
}

// AppendJSON appends the decoded value (see appendJSONFloat).
func (c CF16) AppendJSON(b []byte) []byte { return appendJSONFloat(b, c.Float()) }

// MarshalJSON is AppendJSON for encoding/json.
func (c CF16) MarshalJSON() ([]byte, error) { return c.AppendJSON(nil), nil }

func (c CF16) String() string { return string(c.AppendString(nil)) }

// AppendString appends the String form: three decimals.
func (c CF16) AppendString(b []byte) []byte { return AppendFixed(b, c.Float(), 3) }

// ReadCF16 reads a CompressedFloat16.
func (r *Reader) CF16(what string) CF16 { return CF16(r.U16(what)) }

// CF16 appends a CompressedFloat16.
func (w *Writer) CF16(c CF16) { w.U16(uint16(c)) }

// Vec3 is a decoded 3-D vector.
type Vec3 struct{ X, Y, Z float32 }

func (v Vec3) String() string { return string(v.AppendString(nil)) }

// AppendString appends the String form, "(x, y, z)" with two decimals, as
// fmt's %.2f of a float32 would write each.
func (v Vec3) AppendString(b []byte) []byte {
	b = AppendFixed(append(b, '('), v.X, 2)
	b = AppendFixed(append(b, ", "...), v.Y, 2)
	b = AppendFixed(append(b, ", "...), v.Z, 2)
	return append(b, ')')
}

// AppendJSON appends [x,y,z], each rounded to four decimals (see
// appendJSONFloat).
func (v Vec3) AppendJSON(b []byte) []byte {
	if b, ok := appendVec3JSONShort(b, v); ok {
		return b
	}
	b = appendJSONFloat(append(b, '['), v.X)
	b = appendJSONFloat(append(b, ','), v.Y)
	b = appendJSONFloat(append(b, ','), v.Z)
	return append(b, ']')
}

// MarshalJSON is AppendJSON for encoding/json.
func (v Vec3) MarshalJSON() ([]byte, error) { return v.AppendJSON(nil), nil }

// Dir3 is a CompressedVector3 as it appears on the wire: a unit direction as
// three signed bytes, each component times 127 and truncated. The stock
// TorpedoFire bytes DF 87 11 decode to (-0.26, -0.95, 0.13).
type Dir3 [3]int8

// Vec returns the direction as floats (each byte / 127).
func (d Dir3) Vec() Vec3 {
	return Vec3{dirComponent[uint8(d[0])], dirComponent[uint8(d[1])], dirComponent[uint8(d[2])]}
}

// dirComponent (tables_gen.go, made by TestGeneratedTables) is each
// direction byte's component, its value / 127 in float32, divided once.

// EncodeDir3 compresses a vector's direction. A zero vector gives (0,0,0).
func EncodeDir3(v Vec3) Dir3 {
	m := float32(math.Sqrt(float64(v.X*v.X + v.Y*v.Y + v.Z*v.Z)))
	if m <= 1e-6 {
		return Dir3{}
	}
	return Dir3{clampI8(v.X / m * 127), clampI8(v.Y / m * 127), clampI8(v.Z / m * 127)}
}

func clampI8(f float32) int8 {
	switch {
	case f >= 127:
		return 127
	case f <= -128:
		return -128
	}
	return int8(f) // truncates toward zero, as the game's ftol does
}

func (d Dir3) String() string { return string(d.AppendString(nil)) }

// AppendString appends the String form, "(x, y, z)", each component's
// bytes from dirComponentText, stored whole and followed by its
// separator.
func (d Dir3) AppendString(b []byte) []byte {
	const room = 1 + 2*(7+2) + 8 // '(', two components of at most seven bytes and ", ", the last store
	b = slices.Grow(b, room)
	n := len(b)
	w := (*[room]byte)(b[n : n+room])
	x, y, z := &dirComponentText[uint8(d[0])], &dirComponentText[uint8(d[1])], &dirComponentText[uint8(d[2])]
	// Each component is at most five bytes ("-1.01"; seven fit): the store
	// after it covers its separator's place, and the separator is written
	// after.
	w[0] = '('
	binary.LittleEndian.PutUint64(w[1:], x.text)
	k := 1 + int(x.len&7)
	w[k], w[k+1] = ',', ' '
	binary.LittleEndian.PutUint64(w[k+2:], y.text)
	k += 2 + int(y.len&7)
	w[k], w[k+1] = ',', ' '
	binary.LittleEndian.PutUint64(w[k+2:], z.text)
	k += 2 + int(z.len&7)
	w[k] = ')'
	return b[:n+k+1]
}

// dirComponentText (tables_gen.go, made by TestGeneratedTables) is the
// text of each direction byte's component, as Vec().AppendString writes
// it (AppendFixed of byte/127 to two decimals), as a dirWord.

// AppendJSON appends the direction as floats, as Vec().AppendJSON does:
// [x,y,z], each component's bytes from dirComponentJSON, stored whole
// and followed by its separator.
func (d Dir3) AppendJSON(b []byte) []byte {
	const room = 1 + 3*8 // '[' and three stores of eight bytes
	b = slices.Grow(b, room)
	n := len(b)
	w := (*[room]byte)(b[n : n+room])
	x, y, z := &dirComponentJSON[uint8(d[0])], &dirComponentJSON[uint8(d[1])], &dirComponentJSON[uint8(d[2])]
	// Each component is at most seven bytes: the store after it covers
	// its separator's place, and the separator is written after.
	w[0] = '['
	binary.LittleEndian.PutUint64(w[1:], x.text)
	k := 1 + int(x.len&7)
	w[k] = ','
	binary.LittleEndian.PutUint64(w[k+1:], y.text)
	k += 1 + int(y.len&7)
	w[k] = ','
	binary.LittleEndian.PutUint64(w[k+1:], z.text)
	k += 1 + int(z.len&7)
	w[k] = ']'
	return b[:n+k+1]
}

// dirComponentJSON (tables_gen.go, made by TestGeneratedTables) is the
// JSON of each direction byte's component (appendJSONFloat of byte/127,
// to four decimals), formatted once rather than three times per
// direction, as a dirWord.

// dirWord is a direction component's text or JSON: its bytes, at most
// seven ("-0.9921"), in a little-endian word, the first lowest, and their
// count.
type dirWord struct {
	text uint64
	len  uint8
}

// MarshalJSON is AppendJSON for encoding/json.
func (d Dir3) MarshalJSON() ([]byte, error) { return d.AppendJSON(nil), nil }

// Dir3 reads a CompressedVector3.
func (r *Reader) Dir3(what string) Dir3 {
	if !r.has(3, what) {
		return Dir3{}
	}
	b := r.buf[r.off : r.off+3]
	r.off += 3
	return Dir3{int8(b[0]), int8(b[1]), int8(b[2])}
}

// Dir3 appends a CompressedVector3.
func (w *Writer) Dir3(d Dir3) { w.buf = append(w.buf, byte(d[0]), byte(d[1]), byte(d[2])) }

// CV4 is a CompressedVector4 in its 5-byte form: a direction and a CF16
// magnitude. StateUpdate position deltas and Explosion impact points use it.
// The wire tags name the parts in a Reader error of a message whose code
// is generated from its tags (dissect/game/internal/jsongen).
type CV4 struct {
	Dir Dir3 `wire:"direction"`
	Mag CF16 `wire:"magnitude"`
}

// Vec returns direction × magnitude.
func (c CV4) Vec() Vec3 {
	d, m := c.Dir.Vec(), c.Mag.Float()
	return Vec3{d.X * m, d.Y * m, d.Z * m}
}

// EncodeCV4 compresses v into direction and CF16 magnitude.
func EncodeCV4(v Vec3) CV4 {
	m := float32(math.Sqrt(float64(v.X*v.X + v.Y*v.Y + v.Z*v.Z)))
	return CV4{Dir: EncodeDir3(v), Mag: EncodeCF16(m)}
}

func (c CV4) String() string { return c.Vec().String() }

// AppendString appends the String form.
func (c CV4) AppendString(b []byte) []byte { return c.Vec().AppendString(b) }

// AppendJSON appends the decoded vector.
func (c CV4) AppendJSON(b []byte) []byte { return c.Vec().AppendJSON(b) }

// MarshalJSON is AppendJSON for encoding/json.
func (c CV4) MarshalJSON() ([]byte, error) { return c.AppendJSON(nil), nil }

// CV4 reads a 5-byte CompressedVector4.
func (r *Reader) CV4(what string) CV4 {
	d := r.Dir3(what)
	return CV4{Dir: d, Mag: r.CF16(what)}
}

// CV4 appends a 5-byte CompressedVector4.
func (w *Writer) CV4(c CV4) { w.Dir3(c.Dir); w.CF16(c.Mag) }

// CV4F is a CompressedVector4 in its 7-byte form: direction and a raw float32
// magnitude.
type CV4F struct {
	Dir Dir3
	Mag float32
}

// Vec returns direction × magnitude.
func (c CV4F) Vec() Vec3 {
	d := c.Dir.Vec()
	return Vec3{d.X * c.Mag, d.Y * c.Mag, d.Z * c.Mag}
}

func (c CV4F) String() string { return c.Vec().String() }

// AppendJSON appends the decoded vector.
func (c CV4F) AppendJSON(b []byte) []byte { return c.Vec().AppendJSON(b) }

// MarshalJSON is AppendJSON for encoding/json.
func (c CV4F) MarshalJSON() ([]byte, error) { return c.AppendJSON(nil), nil }

// CV4F reads a 7-byte CompressedVector4.
func (r *Reader) CV4F(what string) CV4F {
	d := r.Dir3(what)
	return CV4F{Dir: d, Mag: r.F32(what)}
}

// CV4F appends a 7-byte CompressedVector4.
func (w *Writer) CV4F(c CV4F) { w.Dir3(c.Dir); w.F32(c.Mag) }

// Contact is the 4-byte point form used by CollisionEffect contact points and
// TorpedoFire target points: a direction and one magnitude byte that is a
// fraction (of 255) of the object's bounding radius. The radius is not on the
// wire, so the decoded vector is in units of that radius.
type Contact struct {
	Dir Dir3
	Mag uint8
}

// Vec returns the point in bounding-radius units (direction × Mag/255).
func (c Contact) Vec() Vec3 {
	d, m := c.Dir.Vec(), float32(c.Mag)/255
	return Vec3{d.X * m, d.Y * m, d.Z * m}
}

func (c Contact) String() string {
	return fmt.Sprintf("dir%s mag=%d", c.Dir.Vec(), c.Mag)
}

// AppendJSON appends {"dir":[x,y,z],"mag":n}.
func (c Contact) AppendJSON(b []byte) []byte {
	b = c.Dir.AppendJSON(append(b, `{"dir":`...))
	b = strconv.AppendUint(append(b, `,"mag":`...), uint64(c.Mag), 10)
	return append(b, '}')
}

// MarshalJSON is AppendJSON for encoding/json.
func (c Contact) MarshalJSON() ([]byte, error) { return c.AppendJSON(nil), nil }

// Contact reads the 4-byte point form.
func (r *Reader) Contact(what string) Contact {
	d := r.Dir3(what)
	return Contact{Dir: d, Mag: r.U8(what)}
}

// Contact appends the 4-byte point form.
func (w *Writer) Contact(c Contact) { w.Dir3(c.Dir); w.U8(c.Mag) }

// compile-time checks that the JSON forms are what encoding/json uses.
var (
	_ json.Marshaler = CF16(0)
	_ json.Marshaler = Vec3{}
	_ json.Marshaler = Contact{}

	_ jsonenc.Appender = CF16(0)
	_ jsonenc.Appender = Vec3{}
	_ jsonenc.Appender = Dir3{}
	_ jsonenc.Appender = CV4{}
	_ jsonenc.Appender = CV4F{}
	_ jsonenc.Appender = Contact{}
)
