package game

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/bcwire/bcwire/internal/jsonenc"
)

// An exhaustive run of the search down over every float32 from 1.9e-4 to
// 1e6, both signs (542,757,512 values, 12,922,826 left to strconv), found
// no difference from strconv, 2026-11-26. The tests here keep the cases
// that matter:
//
// the values whose fewest decimals are 11 (the deepest level the search
// starts from, for the smallest values it takes), and the values next to
// decimals of few digits, where the search goes down many levels.
func TestShortF32DeepAndShallow(t *testing.T) {
	for _, f := range []float32{2e-4, 2.0000001e-4, 2.1234567e-4, 3.0517578e-4, 0.001, 0.1, 0.3, 1, 2.5, 7.75, 100, 1000.5, 65535.5, 999998.94} {
		for _, g := range []float32{f, math.Nextafter32(f, 0), math.Nextafter32(f, 1e9), math.Nextafter32(math.Nextafter32(f, 1e9), 1e9)} {
			checkShortF32(t, g)
			checkShortF32(t, -g)
		}
	}
	for k := range 100000 {
		checkShortF32(t, float32(k)/8)
		checkShortF32(t, float32(k)/1e4)
		checkShortF32(t, 2e-4+float32(k)*1e-9)
	}
}

// BenchmarkShortF32 writes game times (the float of every StateUpdate):
// the battle's, of five or six decimals, and OpenBC's, of one or none
// (tenths), searching down from where every value reads back and then
// halving (new), up from no decimals (forward, the search before), and
// through strconv.
func BenchmarkShortF32(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 1))
	for _, values := range []string{"battle", "tenths"} {
		fs := make([]float32, 1024)
		for i := range fs {
			fs[i] = float32(r.Float64() * 1000)
			if values == "tenths" {
				fs[i] = float32(r.IntN(10000)) / 10
			}
		}
		buf := make([]byte, 0, 32)
		b.Run("values="+values+"/impl=new", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				buf, _ = appendShortF32(buf[:0], fs[i%len(fs)])
			}
		})
		b.Run("values="+values+"/impl=forward", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				buf, _ = appendShortF32Forward(buf[:0], fs[i%len(fs)])
			}
		})
		b.Run("values="+values+"/impl=strconv", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				buf = strconv.AppendFloat(buf[:0], float64(fs[i%len(fs)]), 'g', -1, 32)
			}
		})
	}
}

// appendShortF32Forward is appendShortF32 as it was before it searched
// down: k from 0 up to the first that reads back, for the benchmark.
func appendShortF32Forward(b []byte, f float32) ([]byte, bool) {
	a := float64(f)
	neg := a < 0
	if neg {
		a = -a
	}
	bits := math.Float32bits(float32(a))
	if !(a >= 2e-4 && a <= 999999) || bits&(1<<23-1) == 0 {
		return b, false
	}
	h := math.Float64frombits(uint64(int(bits>>23)-127-24+1023) << 52)
	for k := range 11 {
		p := shortPow10[k]
		x := a * p
		n := math.Floor(x)
		d := x - n
		switch {
		case d == 0.5:
			return b, false
		case d > 0.5:
			n, d = n+1, n+1-x
		}
		switch hk := h * p; {
		case d == hk:
			return b, false
		case d > hk:
			continue
		}
		u := uint64(n)
		if neg {
			b = append(b, '-')
		}
		if k == 0 {
			return jsonenc.Uint(b, u), true
		}
		scale := shortPow10u[k]
		b = append(jsonenc.Uint(b, u/scale), '.')
		frac := u % scale
		var digits [11]byte
		for i := k - 1; i >= 0; i-- {
			digits[i] = byte('0' + frac%10)
			frac /= 10
		}
		return append(b, digits[:k]...), true
	}
	return b, false
}
