package game

// The shortest JSON form of the float32 fields: every StateUpdate's game
// time, and the few float fields of events, collisions and creations.

import (
	"math"
	"slices"
	"strconv"

	"github.com/bcwire/bcwire/internal/jsonenc"
)

// appendJSONF32 appends f in strconv's shortest 'g' form (82.13282, 1e+06),
// and NaN or infinities, which a hostile message can hold and JSON cannot,
// as null.
func appendJSONF32(b []byte, f float32) []byte {
	if f != f || math.IsInf(float64(f), 0) {
		return append(b, "null"...)
	}
	if out, ok := appendShortF32(b, f); ok {
		return out
	}
	return strconv.AppendFloat(b, float64(f), 'g', -1, 32)
}

// appendShortF32 appends f as strconv.AppendFloat(b, float64(f), 'g', -1,
// 32) does, for the values where that is the decimal form with the fewest
// decimals that reads back as f, and reports false (b unchanged) for the
// others. Every StateUpdate has a game time, and strconv's shortest-digit
// search was a tenth of decode --json's time.
//
// For 2e-4 <= |f| <= 999999, 'g' writes the shortest digits in the 'f'
// form, and the fewest digits are the fewest decimals. A decimal reads back
// as f when it is within half a unit in the last place (h) of f, strictly
// (at exactly h the rounding goes to the even neighbour: left to strconv).
// For k decimals, the k-decimal nearest f is n/10^k, n the integer
// nearest x = |f|*10^k; it reads back when |x-n| < h*10^k. f has 24
// significant bits and 10^k (k <= 11) at most 26 more, so x, x-n and
// h*10^k are exact in a float64, and the test is exact. Powers of two
// (whose interval is narrower below than above) and exact halves (two
// nearest decimals) are left to strconv.
//
// A k-decimal that reads back is a (k+1)-decimal that does, so the levels
// that read back are those from the fewest decimals up. The nearest
// decimal always reads back at the level k0 where h*10^k passes 1/2
// (shortStart); the search tries k0-1 (a hit more often than not), then
// k0-2, and past that halves the levels left: two levels for most of the
// battle's game times, four for OpenBC's of one decimal or none, against
// six or seven up from none. Only the level of the result and the one
// below it decide the bytes; a tie (two nearest decimals, or one exactly
// at h, which strconv may take) at any level tried is left to strconv.
// FuzzShortF32MatchesStrconv and TestShortF32MatchesStrconv hold the two
// together.
func appendShortF32(b []byte, f float32) ([]byte, bool) {
	a := float64(f)
	neg := a < 0
	if neg {
		a = -a
	}
	bits := math.Float32bits(float32(a))
	if !(a >= 2e-4 && a <= 999999) || bits&(1<<23-1) == 0 {
		return b, false
	}
	// h = half the spacing of float32s at f: 2^(exponent-23-1).
	h := math.Float64frombits(uint64(int(bits>>23)-127-24+1023) << 52)
	k0 := int(shortStart[bits>>23&0xFF])
	if k0 < 2 { // not in appendShortF32's range (where k0 >= 2)
		return b, false
	}
	found := k0 - 1
	n, r := shortLevel(a, h, found)
	if r == levelMiss {
		found = k0
		if n, r = shortLevel(a, h, found); r != levelHit {
			return b, false
		}
	} else if r == levelHit {
		var n2 float64
		if n2, r = shortLevel(a, h, k0-2); r == levelHit {
			lo, hi := -1, k0-2 // misses at lo and below, hits from hi
			for n = n2; hi-lo > 1 && r != levelTie; {
				mid := (lo + hi) / 2
				var nm float64
				if nm, r = shortLevel(a, h, mid); r == levelHit {
					hi, n = mid, nm
				} else {
					lo = mid
				}
			}
			found = hi
		} else if r == levelMiss {
			r = levelHit // k0-1 is the fewest
		}
	}
	if r == levelTie {
		return b, false
	}
	// At most a sign, six whole digits, the point and eleven decimals,
	// written in place.
	b = slices.Grow(b, 20)
	start := len(b)
	d := b[start : start+20]
	k := 0
	if neg {
		d[0], k = '-', 1
	}
	u := uint64(n)
	scale := shortPow10u[found]
	if w := u / scale; w < 1000 {
		k += jsonenc.PutSmallUint(d[k:], w)
	} else {
		k += jsonenc.PutUint(d[k:], w) // below 1e6
	}
	if found == 0 {
		return b[:start+k], true
	}
	d[k] = '.'
	// The decimals, two at a time from the right, the last at end; the
	// last is not 0 (a k-decimal ending in 0 is a (k-1)-decimal).
	frac := u % scale
	end := k + found
	i := end
	for ; i > k+1; i -= 2 {
		q := frac / 100
		r := 2 * (frac - q*100)
		d[i-1], d[i] = jsonenc.DigitPairs[r], jsonenc.DigitPairs[r+1]
		frac = q
	}
	if i == k+1 {
		d[i] = byte('0' + frac)
	}
	return b[:start+end+1], true
}

// The outcomes of shortLevel.
const (
	levelHit  = iota // the nearest k-decimal reads back
	levelMiss        // it does not
	levelTie         // two are nearest, or it is exactly at h: for strconv
)

// shortLevel returns the k-decimal nearest a, n/10^k, and whether it reads
// back as the float32 a with h half its spacing (see appendShortF32).
func shortLevel(a, h float64, k int) (n float64, outcome int) {
	p := shortPow10[k]
	x := a * p
	n = math.Floor(x)
	d := x - n
	switch {
	case d == 0.5:
		return n, levelTie
	case d > 0.5:
		n, d = n+1, n+1-x
	}
	switch hk := h * p; {
	case d == hk:
		return n, levelTie
	case d > hk:
		return n, levelMiss
	}
	return n, levelHit
}

// shortPow10 and shortPow10u are 10^k for the k appendShortF32 tries.
var (
	shortPow10  = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11}
	shortPow10u = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11}
)

// shortStart (tables_gen.go, made by TestGeneratedTables) is, for each
// biased float32 exponent, the first k for which h*10^k > 1/2 (h half the
// float32 spacing there), where appendShortF32's search is sure to read
// back; -1 past the exponents of its range, or where no k of shortPow10
// is enough.
