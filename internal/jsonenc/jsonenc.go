// Package jsonenc appends JSON without encoding/json. The decoded values of
// this module encode themselves with AppendJSON methods built from these
// helpers, which make the bytes encoding/json makes (its string escaping,
// HTML-safe; its float format) but allocate nothing and skip the
// reflection, validation and compaction that cost encoding/json most of its
// time on `decode --json`.
package jsonenc

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"unicode/utf8"
)

// Appender is a value that appends its own JSON form.
type Appender interface {
	// AppendJSON appends the value's JSON encoding to b: the bytes
	// json.Marshal gives for it. A value that json.Marshal refuses (a NaN
	// or infinite float where the value's JSON form has no null) appends
	// nothing.
	AppendJSON(b []byte) []byte
}

// Append appends v's JSON form to b; ok is false when v refused (see
// Appender) and b is then unchanged.
func Append(b []byte, v Appender) (out []byte, ok bool) {
	n := len(b)
	b = v.AppendJSON(b)
	return b, len(b) > n
}

const hexLower = "0123456789abcdef"

// htmlSafe marks the bytes a JSON string holds as they are: ASCII but the
// ones encoding/json escapes (the quote, the backslash, control characters
// and, to keep the output safe inside HTML, '<', '>' and '&'). Bytes from
// 0x80 up start a UTF-8 sequence that String checks.
var htmlSafe = func() (t [256]bool) {
	t = safe
	for _, c := range `<>&` {
		t[c] = false
	}
	return t
}()

// safe is htmlSafe with '<', '>' and '&' held as they are, as an Encoder
// with SetEscapeHTML(false) holds them.
var safe = func() (t [256]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = false, false
	return t
}()

// String appends s as a JSON string, escaped as encoding/json escapes it:
// \" \\ \b \f \n \r \t, other control characters and < > & as \u00XX,
// U+2028 and U+2029 as \u2028 and \u2029, and each byte of invalid UTF-8 as
// \ufffd.
func String[T ~string | ~[]byte](b []byte, s T) []byte {
	return appendString(b, s, true)
}

// StringNoHTML is String as an encoding/json Encoder with SetEscapeHTML(false)
// writes it: '<', '>' and '&' stay as they are ("C->S" stays readable).
func StringNoHTML[T ~string | ~[]byte](b []byte, s T) []byte {
	return appendString(b, s, false)
}

// appendString appends s quoted, escaping every byte that htmlSafe (html)
// or safe does not mark plain. Runs of plain bytes are skipped eight at a
// time (specialBytes); `stats --json` writes long registry texts.
func appendString[T ~string | ~[]byte](b []byte, s T, html bool) []byte {
	plain := &safe
	if html {
		plain = &htmlSafe
	}
	b = append(b, '"')
	start := 0 // s[start:i] is plain and not yet appended
	for i := 0; i < len(s); {
		for i+8 <= len(s) {
			if m := specialBytes(load64(s, i), html); m != 0 {
				i += bits.TrailingZeros64(m) >> 3 // s[i] is not plain
				break
			}
			i += 8
		}
		for i < len(s) && plain[s[i]] { // the last few bytes
			i++
		}
		if i == len(s) {
			break
		}
		c := s[i]
		if c < utf8.RuneSelf {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexLower[c>>4], hexLower[c&0xF])
			}
			i++
			start = i
			continue
		}
		// The conversion of at most four bytes stays on the stack.
		r, size := utf8.DecodeRuneInString(string(s[i:min(len(s), i+utf8.UTFMax)]))
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexLower[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// load64 reads s[i:i+8] as one little-endian word (one load).
func load64[T ~string | ~[]byte](s T, i int) uint64 {
	s = s[i : i+8]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

const (
	lsbs = 0x0101010101010101
	msbs = 0x8080808080808080
)

// specialBytes marks, with its top bit, each byte of x that is not plain
// (htmlSafe when html, else safe): below 0x20, '"', '\\', 0x80 and up, and
// with html '<', '>' and '&'. It is 0 when all eight are plain. A borrow
// can mark a plain byte above (after) a marked one, never below it: the
// lowest mark is always the first byte that is not plain.
func specialBytes(x uint64, html bool) uint64 {
	m := x | (x-lsbs*0x20)&^x | zeroBytes(x^(lsbs*'"')) | zeroBytes(x^(lsbs*'\\'))
	if html {
		m |= zeroBytes(x^(lsbs*'<')) | zeroBytes(x^(lsbs*'>')) | zeroBytes(x^(lsbs*'&'))
	}
	return m & msbs
}

// zeroBytes marks the zero bytes of v with their top bit, exactly up to
// the first one (see specialBytes); the caller keeps only the top bits.
func zeroBytes(v uint64) uint64 { return (v - lsbs) &^ v }

// Uint appends v in decimal. Most numbers in the decoded messages are
// bytes, and most of those single digits (peers, slots, message indexes),
// which take no call.
func Uint(b []byte, v uint64) []byte {
	if v < 10 {
		return append(b, byte('0'+v))
	}
	return appendUintLong(b, v)
}

// appendUintLong is Uint for v of two digits or more.
func appendUintLong(b []byte, v uint64) []byte {
	b = slices.Grow(b, 20)
	n := len(b)
	if v < 1000 {
		return b[:n+PutSmallUint(b[n:n+4], v)]
	}
	return b[:n+putUintLong(b[n:n+20], v)]
}

// DigitPairs holds the two digits of 00 to 99: those of v at 2*v and
// 2*v+1. Writing two digits from it takes a tenth of the divisions.
const DigitPairs = "00010203040506070809" + "10111213141516171819" + "20212223242526272829" +
	"30313233343536373839" + "40414243444546474849" + "50515253545556575859" +
	"60616263646566676869" + "70717273747576777879" + "80818283848586878889" + "90919293949596979899"

// PairWords (tables_gen.go, made by TestGeneratedTables) holds the two
// digits of 00 to 99 as little-endian words, the first digit in the low
// byte: one load and one store write them.

// smallDecimals (tables_gen.go, made by TestGeneratedTables) holds the
// decimal digits of 0 to 999 in the low bytes of a little-endian word, the
// first digit lowest, and their count in its top byte.

// PutUint writes v in decimal at the start of d and returns its length,
// as many bytes as Uint appends. It is for a writer that makes room for
// a whole value at once: below 1000 it stores four bytes in one go
// (PutSmallUint), whatever the length, so d must have room for four
// bytes and for the digits (20 bytes for any v); the bytes past the
// length are scratch.
func PutUint(d []byte, v uint64) int {
	if v < 1000 {
		return PutSmallUint(d, v)
	}
	return putUintLong(d, v)
}

// PutSmallUint is PutUint for v below 1000 (it panics for more), small
// enough to be inlined.
func PutSmallUint(d []byte, v uint64) int {
	e := smallDecimals[v]
	binary.LittleEndian.PutUint32(d, e)
	return int(e >> 24)
}

// putUintLong is PutUint for any v: two digits at a time from
// DigitPairs, from the right.
func putUintLong(d []byte, v uint64) int {
	n := decimalLen(v)
	d = d[:n]
	i := n
	for v >= 100 {
		q := v / 100
		r := 2 * (v - q*100)
		i -= 2
		d[i], d[i+1] = DigitPairs[r], DigitPairs[r+1]
		v = q
	}
	if v >= 10 {
		d[0], d[1] = DigitPairs[2*v], DigitPairs[2*v+1]
	} else {
		d[0] = byte('0' + v)
	}
	return n
}

// decimalLen is the number of decimal digits of v (1 for 0).
func decimalLen(v uint64) int {
	// bits.Len64(v)*1233>>12 is log10(2^bits), v's digits or one fewer.
	n := bits.Len64(v) * 1233 >> 12
	if n < len(pow10u) && v >= pow10u[n] {
		n++
	}
	return max(n, 1)
}

// pow10u are the powers of ten that fit a uint64.
var pow10u = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10,
	1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19}

// Int appends v in decimal.
func Int(b []byte, v int64) []byte {
	if v < 0 {
		if v == math.MinInt64 {
			return strconv.AppendInt(b, v, 10)
		}
		b, v = append(b, '-'), -v
	}
	return Uint(b, uint64(v))
}

// Bool appends true or false.
func Bool(b []byte, v bool) []byte {
	if v {
		return append(b, "true"...)
	}
	return append(b, "false"...)
}

// Float32 appends f as encoding/json writes a float32 field: the shortest
// decimal that reads back as f, in 'f' form, or in 'e' form (with at least
// one exponent digit: 1e-7, not 1e-07) below 1e-6 and from 1e21 on. NaN and
// infinities have no JSON form: ok is false and b is unchanged.
func Float32(b []byte, f float32) (out []byte, ok bool) {
	return appendFloat(b, float64(f), 32)
}

// Float64 is Float32 for a float64 field.
func Float64(b []byte, f float64) (out []byte, ok bool) {
	return appendFloat(b, f, 64)
}

// MaxPlaces is the most decimal places Float64Places takes.
const MaxPlaces = 6

// pow10f are the powers of ten Float64Places scales by (exact).
var pow10f = [MaxPlaces + 1]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6}

// Float64Places is Float64, faster for a value rounded to at most places
// decimal places (0..MaxPlaces) as math.Round(x*10^places)/10^places
// rounds it: shares, rates and durations. The bytes are always Float64's.
//
// Such an f is k/10^places correctly rounded, for a whole k, and it checks
// that (k/10^places == f in float64, whose division is correctly rounded);
// then, for 0 < k < 10^15, encoding/json writes the digits of k with the
// point places from the right (trailing zeros of the fraction dropped):
// f is at least 1e-6, so in 'f' form, and k/10^places, of at most 15
// significant digits, is its shortest decimal, since no other decimal of
// 15 digits or fewer reads back as the same float64. Anything else (a
// negative value, more places, NaN) takes Float64's path.
func Float64Places(b []byte, f float64, places int) (out []byte, ok bool) {
	if out, ok = appendPlaces(b, f, places); ok {
		return out, true
	}
	return Float64(b, f)
}

// appendPlaces is Float64Places' own path; ok is false (and b unchanged)
// when f is not one it takes.
func appendPlaces(b []byte, f float64, places int) (out []byte, ok bool) {
	if math.Float64bits(f) == 0 { // +0; -0 is "-0"
		return append(b, '0'), true
	}
	if places < 0 || places > MaxPlaces || !(f > 0) {
		return b, false
	}
	p := pow10f[places]
	k := math.Round(f * p)
	if !(k < 1e15) || k/p != f {
		return b, false
	}
	u := uint64(k)
	for places > 0 && u/10*10 == u { // the fraction's trailing zeros
		u /= 10
		places--
	}
	// The digits from the right: the fraction's places, the point, then
	// the whole part (at least "0"). k < 1e15: 15 digits, a point and a
	// zero at most.
	var buf [24]byte
	i := len(buf)
	for range places {
		q := u / 10
		i--
		buf[i] = byte('0' + u - q*10)
		u = q
	}
	if places > 0 {
		i--
		buf[i] = '.'
	}
	for {
		q := u / 10
		i--
		buf[i] = byte('0' + u - q*10)
		if u = q; u == 0 {
			break
		}
	}
	return append(b, buf[i:]...), true
}

func appendFloat(b []byte, f float64, bits int) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, false
	}
	// The cut-offs are compared in the value's own precision: a float32
	// just under 1e21 may be float64(1e21) or more.
	abs := math.Abs(f)
	exp := false
	if abs != 0 {
		if bits == 32 {
			exp = float32(abs) < 1e-6 || float32(abs) >= 1e21
		} else {
			exp = abs < 1e-6 || abs >= 1e21
		}
	}
	if !exp {
		return strconv.AppendFloat(b, f, 'f', -1, bits), true
	}
	b = strconv.AppendFloat(b, f, 'e', -1, bits)
	// strconv pads the exponent to two digits; encoding/json does not.
	if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b, true
}

const hexUpper = "0123456789ABCDEF"

// Hex appends data as one quoted upper-case hex string ("00FF").
func Hex(b []byte, data []byte) []byte {
	b = append(b, '"')
	for _, c := range data {
		b = append(b, hexUpper[c>>4], hexUpper[c&0xF])
	}
	return append(b, '"')
}

// Hex32 appends v as 0x and eight upper-case hex digits, unquoted.
func Hex32(b []byte, v uint32) []byte {
	return append(b, '0', 'x',
		hexUpper[v>>28], hexUpper[v>>24&0xF], hexUpper[v>>20&0xF], hexUpper[v>>16&0xF],
		hexUpper[v>>12&0xF], hexUpper[v>>8&0xF], hexUpper[v>>4&0xF], hexUpper[v&0xF])
}
