package dissect

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"math/bits"
)

// Reader reads the game's TGBufferStream encoding from a byte slice. Errors
// are sticky: after the first failed read every later read returns a zero
// value, and Err reports the first failure with its offset. This keeps the
// opcode decoders linear (read every field, check Err once).
//
// Packed bits follow the stock stream exactly: a bit group is one byte whose
// top three bits hold how many bits it carries (1-5, the count itself, not
// count-1) and whose low five bits hold the values, first bit in bit 0; the
// group stays open across byte, short and string reads. The stock bytes
// that settle this are in docs/protocol-notes.md ("Packed bits").
type Reader struct {
	buf  []byte
	off  int
	base int // added to offsets in errors, for readers over a sub-slice

	bits   BitGroup
	strict bool // see StrictBits

	// err is the first error, or errShortPending when it is a short read
	// at shortAt of shortWhat, whose *Error Err makes (see shortError).
	// Making it there keeps has, which every field read inlines, small.
	err       error
	shortAt   int
	shortWhat string
}

// NewReader returns a Reader over b.
func NewReader(b []byte) *Reader { return &Reader{buf: b} }

// Reset points r at b, clearing all state, so one Reader can be reused
// without allocating.
func (r *Reader) Reset(b []byte) { *r = Reader{buf: b} }

// ResetAt is Reset with offsets in errors reported relative to base.
func (r *Reader) ResetAt(b []byte, base int) { *r = Reader{buf: b, base: base} }

// Offset is the number of bytes consumed so far.
func (r *Reader) Offset() int { return r.off }

// Len is the number of bytes not yet consumed.
func (r *Reader) Len() int { return len(r.buf) - r.off }

// Rest returns the unconsumed bytes without consuming them.
func (r *Reader) Rest() []byte { return r.buf[r.off:] }

// Err returns the first error met, or nil.
func (r *Reader) Err() error {
	if r.err == errShortPending {
		r.err = shortError(r.shortAt, r.shortWhat)
	}
	return r.err
}

// errShortPending marks a Reader's short read whose error Err has not made
// yet; it never leaves the Reader.
var errShortPending = errors.New("short read (internal)")

// Fail records a decoding error at the current offset unless one is already
// recorded. Opcode decoders use it for values that are readable but invalid.
func (r *Reader) Fail(what string, reason error) {
	if r.err == nil {
		r.err = &Error{Offset: r.base + r.off, What: what, Err: reason}
	}
}

// Failf is Fail with a formatted reason wrapping ErrBadValue.
func (r *Reader) Failf(what, format string, args ...any) {
	if r.err == nil {
		r.Fail(what, fmt.Errorf("%w: "+format, append([]any{ErrBadValue}, args...)...))
	}
}

// has reports whether n more bytes can be read, and when they cannot,
// records the short read (unless an error is recorded already). It and the
// read methods built on it are small enough for the compiler to inline, so
// a field read in a game decoder is a test and a slice read, not a call.
func (r *Reader) has(n int, what string) bool {
	if r.err == nil && uint(n) <= uint(len(r.buf)-r.off) {
		return true
	}
	if r.err == nil {
		r.err, r.shortAt, r.shortWhat = errShortPending, r.base+r.off, what
	}
	return false
}

func (r *Reader) take(n int, what string) []byte {
	if !r.has(n, what) {
		return nil
	}
	b := r.buf[r.off : r.off+n : r.off+n]
	r.off += n
	return b
}

// U8 reads one byte.
func (r *Reader) U8(what string) uint8 {
	if !r.has(1, what) {
		return 0
	}
	v := r.buf[r.off]
	r.off++
	return v
}

// I8 reads one signed byte.
func (r *Reader) I8(what string) int8 { return int8(r.U8(what)) }

// U16 reads a little-endian uint16.
func (r *Reader) U16(what string) uint16 {
	if !r.has(2, what) {
		return 0
	}
	v := binary.LittleEndian.Uint16(r.buf[r.off:])
	r.off += 2
	return v
}

// U32 reads a little-endian uint32.
func (r *Reader) U32(what string) uint32 {
	if !r.has(4, what) {
		return 0
	}
	v := binary.LittleEndian.Uint32(r.buf[r.off:])
	r.off += 4
	return v
}

// I32 reads a little-endian int32.
func (r *Reader) I32(what string) int32 { return int32(r.U32(what)) }

// F32 reads a little-endian IEEE 754 float32.
func (r *Reader) F32(what string) float32 { return math.Float32frombits(r.U32(what)) }

// Skip consumes n bytes that the caller has read from Rest itself; it
// does nothing when fewer than n are left.
func (r *Reader) Skip(n int) {
	if uint(n) <= uint(r.Len()) {
		r.off += n
	}
}

// Bytes reads n raw bytes. The result aliases the input.
func (r *Reader) Bytes(n int, what string) []byte { return r.take(n, what) }

// String16 reads a string with a little-endian uint16 length prefix and no
// terminator (the stream's WriteCString form). The result aliases the input.
func (r *Reader) String16(what string) []byte {
	n := r.U16(what) // an error names the string either way, and concatenating here would allocate
	return r.take(int(n), what)
}

// Bit reads one packed boolean.
func (r *Reader) Bit(what string) bool {
	if r.bits.Empty() || r.err != nil {
		return r.openBitGroup(what)
	}
	return r.bits.take()
}

// BitsLeft is the number of bits of the open bit group not read yet (0 when
// none is open).
func (r *Reader) BitsLeft() int { return r.bits.Left() }

// StrictBits makes r reject, until the next Reset, the bit groups that the
// stock writer (and so Writer) cannot produce: a group of fewer than five
// bits followed by another group, and value bits set above a group's
// count. A decoder that must re-encode to exactly its input turns it on.
func (r *Reader) StrictBits() { r.strict = true }

// openBitGroup reads a new bit group byte and the group's first bit; Bit
// calls it when no group is open (or an error is recorded), so that Bit's
// common case, a bit of the open group, stays short.
func (r *Reader) openBitGroup(what string) bool {
	if r.err != nil {
		return false
	}
	if size := r.bits.size(); r.strict && size != 0 && size < 5 {
		r.Failf(what, "a bit group of %d bits is followed by another (the stock writer fills groups to 5 bits)", size)
		return false
	}
	off := r.off
	b := r.take(1, what)
	if b == nil {
		return false
	}
	count := b[0] >> 5
	if r.strict && count >= 1 && count <= 5 && (b[0]&0x1F)>>count != 0 {
		r.off = off // the error is reported at the group byte
		r.Failf(what, "bit group byte %#02x has value bits set above its count %d", b[0], count)
		return false
	}
	if count == 0 || count > 5 {
		r.err = &Error{Offset: r.base + off, What: what,
			Err: fmt.Errorf("%w: bit group byte %#02x claims %d bits (1-5 allowed)", ErrBadValue, b[0], count)}
		return false
	}
	r.bits.open(b[0])
	return r.bits.take()
}

// BitGroup is a Reader's packed-bit state: the open group's unread bits.
// A decoder that tries a layout and falls back to another when the bytes
// do not fit (StateUpdate's subsystem states) can read that section
// straight from Rest, with no error bookkeeping: it takes the state with
// Reader.BitGroup, reads bits with Opened and Next and hands the outcome
// back with Reader.Commit. The methods take and return values rather than
// change a BitGroup in place, so that a BitGroup in a local variable stays
// in registers.
type BitGroup struct {
	// s packs the state into one word, so that it takes one register.
	// Bits 0-5 hold the unread value bits, the next one in bit 0, under a
	// marker bit just above the last of them: reading a bit is a shift,
	// and no bits are left when only the marker (or nothing, in the zero
	// value) remains. Bits 8-10 hold the size of the open (or last) group
	// (0 = none yet).
	s uint16
}

// Left is the number of bits of the open group not read yet.
func (g BitGroup) Left() int { return bits.Len8(uint8(g.s&0x3F)|1) - 1 }

// Empty reports whether no bit of the open group is left unread (Left is
// 0), more cheaply than Left.
func (g BitGroup) Empty() bool { return g.s&0x3E == 0 }

// size is the size of the open (or last) group; 0 when there was none.
func (g BitGroup) size() uint8 { return uint8(g.s >> 8) }

// Opened returns g with a new group opened by group byte c, for when Left
// is 0, under the rules of StrictBits: ok is false, and g returned as it
// was, when c cannot open a group there (the strict Reader would fail).
func (g BitGroup) Opened(c byte) (BitGroup, bool) {
	if size := g.size(); size != 0 && size < 5 {
		return g, false
	}
	if n := c >> 5; n == 0 || n > 5 || (c&0x1F)>>n != 0 {
		return g, false
	}
	g.open(c)
	return g, true
}

// Next returns the next bit of the open group and g without it (false and
// g unchanged when Left is 0).
func (g BitGroup) Next() (bool, BitGroup) {
	if g.Empty() {
		return false, g
	}
	return g.take(), g
}

// open starts the group of group byte c (whose count must be 1-5).
func (g *BitGroup) open(c byte) {
	n := c >> 5
	g.s = uint16(c&0x1F|1<<n) | uint16(n)<<8
}

// take reads the next bit of the open group (Left must be above 0).
func (g *BitGroup) take() bool {
	v := g.s&1 == 1
	g.s = g.s&0xFF00 | (g.s&0x3F)>>1
	return v
}

// BitGroup returns r's packed-bit state, for reading a section directly.
func (r *Reader) BitGroup() BitGroup { return r.bits }

// Commit ends a direct read of a section that BitGroup began: rest, the
// part of Rest() not consumed, becomes the unread input and g the
// packed-bit state. A rest longer than Rest() is ignored.
func (r *Reader) Commit(rest []byte, g BitGroup) {
	if len(rest) > r.Len() {
		return
	}
	r.off = len(r.buf) - len(rest)
	r.bits = g
}

// Writer appends the TGBufferStream encoding to a byte slice. The zero value
// is ready to use; Reset reuses its buffer.
type Writer struct {
	buf     []byte
	bitOff  int   // offset of the open bit group byte
	bitUsed uint8 // bits in the open group; 0 = none open
}

// NewWriter returns a Writer that appends to b.
func NewWriter(b []byte) *Writer { return &Writer{buf: b} }

// Reset makes w append to b, forgetting any open bit group.
func (w *Writer) Reset(b []byte) { *w = Writer{buf: b} }

// Bytes returns everything written so far.
func (w *Writer) Bytes() []byte { return w.buf }

// Len is the number of bytes written so far.
func (w *Writer) Len() int { return len(w.buf) }

// U8 appends one byte.
func (w *Writer) U8(v uint8) { w.buf = append(w.buf, v) }

// I8 appends one signed byte.
func (w *Writer) I8(v int8) { w.buf = append(w.buf, byte(v)) }

// U16 appends a little-endian uint16.
func (w *Writer) U16(v uint16) { w.buf = binary.LittleEndian.AppendUint16(w.buf, v) }

// U32 appends a little-endian uint32.
func (w *Writer) U32(v uint32) { w.buf = binary.LittleEndian.AppendUint32(w.buf, v) }

// I32 appends a little-endian int32.
func (w *Writer) I32(v int32) { w.U32(uint32(v)) }

// F32 appends a little-endian float32.
func (w *Writer) F32(v float32) { w.U32(math.Float32bits(v)) }

// Raw appends b unchanged.
func (w *Writer) Raw(b []byte) { w.buf = append(w.buf, b...) }

// String16 appends a uint16 length prefix and the bytes of s. Strings longer
// than 65535 bytes are cut to fit; the prefix always matches what follows.
func (w *Writer) String16(s []byte) {
	if len(s) > math.MaxUint16 {
		s = s[:math.MaxUint16]
	}
	w.U16(uint16(len(s)))
	w.buf = append(w.buf, s...)
}

// EndBits closes the open bit group: the next Bit opens a new group byte
// even when the open one has room. The stock writer never does this;
// encoders use it to reproduce, byte for byte, a writer that does.
func (w *Writer) EndBits() { w.bitUsed = 0 }

// Bit appends one packed boolean, sharing the open group byte while it has
// room for fewer than five bits.
func (w *Writer) Bit(v bool) {
	if w.bitUsed == 0 || w.bitUsed == 5 {
		w.bitOff = len(w.buf)
		w.buf = append(w.buf, 0)
		w.bitUsed = 0
	}
	b := w.buf[w.bitOff] & 0x1F
	if v {
		b |= 1 << w.bitUsed
	}
	w.bitUsed++
	w.buf[w.bitOff] = b | w.bitUsed<<5
}
