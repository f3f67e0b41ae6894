package dissect

import (
	"encoding/binary"
	"math"
	"math/bits"
	"slices"
	"strconv"

	"github.com/bcwire/bcwire/internal/jsonenc"
)

// The four-decimal JSON form of the decoded floats (positions, deltas,
// directions, speeds): every StateUpdate has two to four vectors, and
// writing them was a fifth of decode --json's formatting.

// appendJSONFloat appends f rounded to four decimals (the shortest decimal
// of the float64 nearest to that: 0.5827, 6.2813, -0), and NaN or
// infinities (which JSON cannot carry) as null.
func appendJSONFloat(b []byte, f float32) []byte {
	x := float64(f) * 1e4 // exact: 24 bits times 10^4 (14 bits)
	if !(math.Abs(x) < jsonFloatLimit) {
		return appendJSONFloatLong(b, f)
	}
	b = slices.Grow(b, jsonFloatMax)
	n := len(b)
	return b[:n+putJSONFloat(b[n:n+jsonFloatMax], x)]
}

// appendJSONFloatLong is appendJSONFloat for the values putJSONFloat does
// not take: NaN, the infinities and the very large.
func appendJSONFloatLong(b []byte, f float32) []byte {
	if f != f || math.IsInf(float64(f), 0) {
		return append(b, "null"...)
	}
	return strconv.AppendFloat(b, math.Round(float64(f)*1e4)/1e4, 'f', -1, 64)
}

const (
	// jsonFloatLimit bounds the ten-thousandths putJSONFloat takes. Below
	// it (values under 1e10) the float64 nearest r/1e4, for r the rounded
	// ten-thousandths, is closer to that four-decimal value than to any
	// other decimal of four decimals or fewer (its ulp is under 2e-6), so
	// its shortest form is the value's own digits, which integer
	// arithmetic writes without strconv's search. (No float32 times 1e4
	// lies within a half of the limit: the rounding cannot reach it.)
	jsonFloatLimit = 1e14
	// jsonFloatMax is the room putJSONFloat writes in: a sign, ten
	// digits, and the eight bytes it stores the point and four decimals
	// with.
	jsonFloatMax = 19
)

// putJSONFloat writes the four-decimal form of x/1e4 at the start of d
// (at least jsonFloatMax long; bytes past the form are scratch) and
// returns its length. x is f*1e4 for a float32 f, exact, and |x| <
// jsonFloatLimit. It rounds half away from zero, as math.Round does, and
// keeps the sign of a value rounding to zero (-0), as strconv writes
// math.Round's -0.
func putJSONFloat(d []byte, x float64) int {
	d = d[:jsonFloatMax]
	k := 0
	if math.Signbit(x) {
		d[0], k, x = '-', 1, -x
	}
	n := int64(x)            // truncated
	if x-float64(n) >= 0.5 { // exact: both are below 2^47
		n++
	}
	ip, frac := uint64(n)/1e4, uint64(n)%1e4
	if ip < 1000 { // nearly always: the whole part of a unit vector, a speed
		k += jsonenc.PutSmallUint(d[k:], ip)
	} else {
		k += jsonenc.PutUint(d[k:], ip) // at most ten digits: ip < 1e10
	}
	if frac == 0 {
		return k
	}
	// The point and the four decimals in one store, the trailing zeros
	// (the top bytes that are '0') then dropped.
	w := uint32(jsonenc.PairWords[frac/100]) | uint32(jsonenc.PairWords[frac%100])<<16
	binary.LittleEndian.PutUint64(d[k:], '.'|uint64(w)<<8)
	return k + 5 - bits.LeadingZeros32(w^0x30303030)/8
}

// appendVec3JSONShort appends v as Vec3.AppendJSON does, growing b once
// for the whole vector, when each component is one putJSONFloat takes;
// ok is false (and b unchanged) when one is not.
func appendVec3JSONShort(b []byte, v Vec3) (out []byte, ok bool) {
	x, y, z := float64(v.X)*1e4, float64(v.Y)*1e4, float64(v.Z)*1e4
	if !(math.Abs(x) < jsonFloatLimit && math.Abs(y) < jsonFloatLimit && math.Abs(z) < jsonFloatLimit) {
		return b, false
	}
	const room = 3*jsonFloatMax + 4 // [x,y,z]
	b = slices.Grow(b, room)
	n := len(b)
	d := b[n : n+room]
	d[0] = '['
	k := 1 + putJSONFloat(d[1:], x)
	d[k] = ','
	k++
	k += putJSONFloat(d[k:], y)
	d[k] = ','
	k++
	k += putJSONFloat(d[k:], z)
	d[k] = ']'
	return b[:n+k+1], true
}
