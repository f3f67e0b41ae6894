package dissect

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// cf16FloatLoop is CF16.Float as it was before the decade table: the
// decade found by multiplying up from the base, for every value.
func cf16FloatLoop(c CF16) float32 {
	mant := float32(c & 0xFFF)
	scale := int(c>>12) & 7
	lo, hi := float32(0), cf16Base
	for i := 0; i < scale; i++ {
		lo = hi
		hi = lo * cf16Mult
	}
	v := (hi-lo)*mant*cf16DecInv + lo
	if c&0x8000 != 0 {
		v = -v
	}
	return v
}

// Every CF16 decodes to the same float32, bit for bit, from the decade
// table as from the loop.
func TestCF16FloatMatchesLoopEveryValue(t *testing.T) {
	for i := range 1 << 16 {
		c := CF16(i)
		if got, want := c.Float(), cf16FloatLoop(c); math.Float32bits(got) != math.Float32bits(want) {
			t.Fatalf("CF16(%#04x).Float() = %v, loop %v", i, got, want)
		}
	}
}

// Every direction byte's component from the table is the division's.
func TestDirComponentMatchesDivision(t *testing.T) {
	for i := range 256 {
		d := Dir3{int8(i), int8(255 - i), int8(i ^ 0x55)}
		want := Vec3{float32(d[0]) / 127, float32(d[1]) / 127, float32(d[2]) / 127}
		if got := d.Vec(); got != want {
			t.Fatalf("%v.Vec() = %v, want %v", d, got, want)
		}
	}
}

// Every component a CompressedVector4 can decode to (each direction byte
// times each CF16 magnitude: every delta of a StateUpdate and impact point
// of an Explosion) has the four-decimal form of the reference, alone and
// in a vector. Short mode takes every 16th magnitude.
func TestAppendJSONFloatEveryCV4Component(t *testing.T) {
	step := 1
	if testing.Short() {
		step = 16
	}
	var got []byte
	for m := 0; m < 1<<16; m += step {
		mag := CF16(m).Float()
		for i := range 256 {
			f := dirComponent[i] * mag
			got = appendJSONFloat(got[:0], f)
			if want := oldJSONFloat(f); string(got) != string(want) {
				t.Fatalf("appendJSONFloat(%v [%#08x]) = %s, want %s", f, math.Float32bits(f), got, want)
			}
		}
		cv := CV4{Dir: Dir3{int8(m), int8(m >> 8), int8(m * 7)}, Mag: CF16(m)}
		if got, want := string(cv.AppendJSON(nil)), oldVec3JSON(cv.Vec()); got != want {
			t.Fatalf("%v: AppendJSON = %s, want %s", cv, got, want)
		}
	}
}

// Vectors whose components take different paths (NaN, the infinities,
// values past putJSONFloat's limit beside plain ones) are written as
// three appendJSONFloat would write them, after bytes already in the
// buffer, at every capacity the growth can start from.
func TestVec3AppendJSONMixedPaths(t *testing.T) {
	odd := []float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)), 1e10, -1e10, 2e10, 1e30,
		0, float32(math.Copysign(0, -1)), -0.00004, 0.00005, 123.45678, -9999.99995}
	for _, x := range odd {
		for _, y := range odd {
			for _, z := range odd {
				v := Vec3{x, y, z}
				for c := range 60 {
					buf := append(make([]byte, 0, 3+c), "ab,"...)
					if got, want := string(v.AppendJSON(buf)), "ab,"+oldVec3JSON(v); got != want {
						t.Fatalf("%v (cap %d): AppendJSON = %s, want %s", v, cap(buf), got, want)
					}
				}
			}
		}
	}
}

func FuzzAppendJSONFloatMatchesOldForm(f *testing.F) {
	f.Add(uint32(0x42A443A4), uint32(0xBF155555), uint32(0x80000000)) // 82.13282, -0.5833, -0
	f.Add(uint32(0x501502F9), uint32(0x7FC00000), uint32(0x00000001)) // 1e10, NaN, the smallest
	f.Fuzz(func(t *testing.T, xb, yb, zb uint32) {
		v := Vec3{math.Float32frombits(xb), math.Float32frombits(yb), math.Float32frombits(zb)}
		if got, want := string(appendJSONFloat([]byte("x"), v.X)), "x"+string(oldJSONFloat(v.X)); got != want {
			t.Fatalf("appendJSONFloat(%#08x) = %s, want %s", xb, got, want)
		}
		if got, want := string(v.AppendJSON(nil)), oldVec3JSON(v); got != want {
			t.Fatalf("%v: AppendJSON = %s, want %s", v, got, want)
		}
	})
}

// BenchmarkVec3AppendJSON writes the vectors of StateUpdate deltas (a
// direction times a CF16 magnitude), through the short path (new) and
// component by component through strconv's shortest form (reference).
func BenchmarkVec3AppendJSON(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 9))
	vs := make([]Vec3, 1024)
	for i := range vs {
		vs[i] = CV4{Dir: Dir3{int8(r.Uint32()), int8(r.Uint32()), int8(r.Uint32())}, Mag: CF16(r.Uint32() & 0x3FFF)}.Vec()
	}
	buf := make([]byte, 0, 64)
	b.Run("impl=new", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			buf = vs[i%len(vs)].AppendJSON(buf[:0])
		}
	})
	b.Run("impl=percomponent", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			v := vs[i%len(vs)]
			buf = appendJSONFloatPrev(append(buf[:0], '['), v.X)
			buf = appendJSONFloatPrev(append(buf, ','), v.Y)
			buf = appendJSONFloatPrev(append(buf, ','), v.Z)
			buf = append(buf, ']')
		}
	})
	b.Run("impl=strconv", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			v := vs[i%len(vs)]
			buf = append(buf[:0], '[')
			buf = strconv.AppendFloat(buf, math.Round(float64(v.X)*1e4)/1e4, 'f', -1, 64)
			buf = append(buf, ',')
			buf = strconv.AppendFloat(buf, math.Round(float64(v.Y)*1e4)/1e4, 'f', -1, 64)
			buf = append(buf, ',')
			buf = strconv.AppendFloat(buf, math.Round(float64(v.Z)*1e4)/1e4, 'f', -1, 64)
			buf = append(buf, ']')
		}
	})
}

func BenchmarkCF16Float(b *testing.B) {
	var sink float32
	b.Run("impl=table", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			sink += CF16(i).Float()
		}
	})
	b.Run("impl=loop", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			sink += cf16FloatLoop(CF16(i))
		}
	})
	_ = sink
}

// appendJSONFloatPrev is appendJSONFloat as it was before putJSONFloat
// (each component grown and divided digit by digit), for the benchmark.
func appendJSONFloatPrev(b []byte, f float32) []byte {
	if f != f || math.IsInf(float64(f), 0) {
		return append(b, "null"...)
	}
	r := math.Round(float64(f) * 1e4)
	if math.Abs(r) >= 1e14 {
		return strconv.AppendFloat(b, r/1e4, 'f', -1, 64)
	}
	if math.Signbit(r) {
		b = append(b, '-')
		r = -r
	}
	n := uint64(r)
	b = strconv.AppendUint(b, n/1e4, 10)
	if frac := n % 1e4; frac != 0 {
		digits := [5]byte{'.', byte('0' + frac/1000), byte('0' + frac/100%10), byte('0' + frac/10%10), byte('0' + frac%10)}
		end := len(digits)
		for digits[end-1] == '0' {
			end--
		}
		b = append(b, digits[:end]...)
	}
	return b
}

// Every direction byte, at each of the three places, is written from the
// tables as the float forms write it (JSON and text), after bytes already
// in the buffer.
func TestDir3AppendJSONEveryByte(t *testing.T) {
	for i := range 256 {
		for _, d := range []Dir3{{int8(i), 0, 0}, {1, int8(i), -1}, {-128, 127, int8(i)}, {int8(i), int8(i), int8(i)}} {
			if got, want := string(d.AppendJSON([]byte("ab"))), "ab"+oldVec3JSON(d.Vec()); got != want {
				t.Fatalf("%v: AppendJSON = %s, want %s", d, got, want)
			}
			v := d.Vec()
			want := "ab(" + string(AppendFixed(nil, v.X, 2)) + ", " + string(AppendFixed(nil, v.Y, 2)) + ", " + string(AppendFixed(nil, v.Z, 2)) + ")"
			if got := string(d.AppendString([]byte("ab"))); got != want {
				t.Fatalf("%v: AppendString = %s, want %s", d, got, want)
			}
		}
	}
}
