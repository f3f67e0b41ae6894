package dissect

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

func checkFixed(t *testing.T, f float32, prec int) {
	t.Helper()
	want := strconv.AppendFloat(nil, float64(f), 'f', prec, 32)
	if got := AppendFixed(nil, f, prec); string(got) != string(want) {
		t.Fatalf("AppendFixed(%g (%#08x), %d) = %q, strconv %q", f, math.Float32bits(f), prec, got, want)
	}
}

// AppendFixed agrees with strconv on the values where rounding is
// delicate (exact halves: odd multiples of 1/8 and 1/16, and their
// neighbours), on special values, and on a million random bit patterns.
func TestAppendFixedMatchesStrconv(t *testing.T) {
	special := []float32{0, float32(math.Copysign(0, -1)), 1e-9, -1e-9, 0.004, -0.004, 0.005, -0.005, 0.0005, -0.0005,
		0.125, 0.375, -0.625, 2.5, 1e7, -1e7, 1 << 24, 9.007199e15, 1e16, -3e20, math.MaxFloat32, -math.MaxFloat32,
		math.SmallestNonzeroFloat32, float32(math.Inf(1)), float32(math.Inf(-1)), float32(math.NaN())}
	for prec := range 4 {
		for _, f := range special {
			checkFixed(t, f, prec)
		}
		for j := -40000; j <= 40000; j++ {
			for _, den := range []float32{8, 16, 1000} {
				f := float32(j) / den
				checkFixed(t, f, prec)
				checkFixed(t, math.Nextafter32(f, float32(math.Inf(1))), prec)
				checkFixed(t, math.Nextafter32(f, float32(math.Inf(-1))), prec)
			}
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1_000_000 {
		checkFixed(t, math.Float32frombits(rng.Uint32()), rng.IntN(4))
	}
}

func FuzzAppendFixedMatchesStrconv(f *testing.F) {
	f.Add(uint32(0x3E000000), uint8(2)) // 0.125
	f.Add(uint32(0xBF200000), uint8(3)) // -0.625
	f.Fuzz(func(t *testing.T, bits uint32, prec uint8) {
		checkFixed(t, math.Float32frombits(bits), int(prec%4))
	})
}

func BenchmarkAppendFixed(b *testing.B) {
	buf := make([]byte, 0, 64)
	for i := 0; b.Loop(); i++ {
		buf = AppendFixed(buf[:0], float32(i%100000)/7.3, 2)
	}
}

// Every direction byte's text from the table is what the float form gives.
func TestDir3TextMatchesVec(t *testing.T) {
	for i := range 256 {
		d := Dir3{int8(i), int8(255 - i), 0}
		if got, want := string(d.AppendString(nil)), d.Vec().String(); got != want {
			t.Fatalf("%v: %q, Vec %q", d, got, want)
		}
	}
}
