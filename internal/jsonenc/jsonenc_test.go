package jsonenc

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

func marshal(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("json.Marshal(%#v): %v", v, err)
	}
	return string(b)
}

// marshalNoHTML is marshal through an Encoder with SetEscapeHTML(false).
func marshalNoHTML(t testing.TB, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatalf("Encode(%#v): %v", v, err)
	}
	return string(bytes.TrimSuffix(buf.Bytes(), []byte("\n")))
}

var stringCases = []string{
	"", "plain", `quote " and backslash \`, "<script>&amp;</script>", "\x00\x01\x1f\x7f",
	"\b\f\n\r\t", "é ü 日本 🚀", "\u2028\u2029", "bad \xff utf8 \xc3", "\xe2\x80", "\xed\xa0\x80 surrogate",
	"\xf4\x90\x80\x80 too big", "trailing \xe2\x80\xa8", "mixed <\u2028\xff\"\\\x05>",
}

func TestStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range stringCases {
		if got, want := string(String(nil, s)), marshal(t, s); got != want {
			t.Errorf("String(%q) = %s, want %s", s, got, want)
		}
		if got, want := string(String([]byte("x"), []byte(s))), "x"+marshal(t, s); got != want {
			t.Errorf("String([]byte(%q)) = %s, want %s", s, got, want)
		}
	}
	// Every single byte and every pair of bytes.
	for i := range 256 {
		for j := range 257 {
			s := string([]byte{byte(i)})
			if j < 256 {
				s += string([]byte{byte(j)})
			}
			if got, want := string(String(nil, s)), marshal(t, s); got != want {
				t.Fatalf("String(%q) = %s, want %s", s, got, want)
			}
			if got, want := string(StringNoHTML(nil, s)), marshalNoHTML(t, s); got != want {
				t.Fatalf("StringNoHTML(%q) = %s, want %s", s, got, want)
			}
		}
	}
}

// Strings are read eight bytes at a time: every byte value at every place
// of a 24-byte string of plain text, and each two-byte and multi-byte
// sequence across every word boundary, must come out as encoding/json has
// it.
func TestStringEveryByteAtEveryPlace(t *testing.T) {
	plain := []byte("abcdefghijklmnopqrstuvwx")
	for at := range plain {
		for c := range 256 {
			s := bytes.Clone(plain)
			s[at] = byte(c)
			for _, n := range []int{at + 1, len(s)} { // ends with it, or goes on
				if got, want := string(String(nil, s[:n])), marshal(t, string(s[:n])); got != want {
					t.Fatalf("String(%q) = %s, want %s", s[:n], got, want)
				}
				if got, want := string(StringNoHTML(nil, string(s[:n]))), marshalNoHTML(t, string(s[:n])); got != want {
					t.Fatalf("StringNoHTML(%q) = %s, want %s", s[:n], got, want)
				}
			}
		}
	}
	for _, seq := range []string{"é", "日", "🚀", "\u2028", "\u2029", "\xe2\x80", "\xff\xfe", "\"\\", "<&>", "\x00\x1f"} {
		for at := range 17 {
			s := string(plain[:at]) + seq + string(plain[at:])
			if got, want := string(String(nil, s)), marshal(t, s); got != want {
				t.Fatalf("String(%q) = %s, want %s", s, got, want)
			}
			if got, want := string(StringNoHTML(nil, s)), marshalNoHTML(t, s); got != want {
				t.Fatalf("StringNoHTML(%q) = %s, want %s", s, got, want)
			}
		}
	}
}

func TestStringNoHTMLKeepsHTMLCharacters(t *testing.T) {
	for _, s := range stringCases {
		if got, want := string(StringNoHTML([]byte("x"), s)), "x"+marshalNoHTML(t, s); got != want {
			t.Errorf("StringNoHTML(%q) = %s, want %s", s, got, want)
		}
	}
	if got := string(StringNoHTML(nil, "C->S & <b>")); got != `"C->S & <b>"` {
		t.Errorf("StringNoHTML escaped HTML characters: %s", got)
	}
}

func FuzzString(f *testing.F) {
	for _, s := range stringCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := string(String(nil, s)), marshal(t, s); got != want {
			t.Fatalf("String(%q) = %s, want %s", s, got, want)
		}
		if got, want := string(StringNoHTML(nil, s)), marshalNoHTML(t, s); got != want {
			t.Fatalf("StringNoHTML(%q) = %s, want %s", s, got, want)
		}
	})
}

// floatCases covers every decade a float32 and a float64 can hold, the
// cut-offs between the 'f' and 'e' forms on both sides, signed zeros,
// subnormals and the extremes.
func floatCases() []float64 {
	vs := []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e-6, 9.999999e-7, 1e-7, 1e20, 1e21, 9.99999e20,
		999999999999999999999, 1e21 - 65536, 123456789, 0.000001, 0.0000011, 1.5e-45, 1.17549435e-38,
		math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, math.MaxFloat64,
		math.SmallestNonzeroFloat64, 5e-324, 2.2250738585072014e-308, 1e308, 82.13282, 448.3789, 6.2813,
		float64(float32(1e-6)), float64(float32(1e21)), math.Nextafter(1e21, 0), math.Nextafter(1e-6, 0),
		float64(math.Nextafter32(1e21, 0)), float64(math.Nextafter32(1e-6, 0)), float64(math.Nextafter32(1e-6, 1))}
	for e := -330; e <= 310; e++ {
		p := math.Pow(10, float64(e))
		vs = append(vs, p, -p, p*1.5, p*9.87654321, math.Nextafter(p, 0), math.Nextafter(p, math.Inf(1)))
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		vs = append(vs, math.Float64frombits(r.Uint64()), float64(math.Float32frombits(r.Uint32())))
	}
	return vs
}

func TestFloatMatchesEncodingJSON(t *testing.T) {
	for _, v := range floatCases() {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		got, ok := Float64(nil, v)
		if want := marshal(t, v); !ok || string(got) != want {
			t.Errorf("Float64(%v) = %s %v, want %s", v, got, ok, want)
		}
		f := float32(v)
		if math.IsInf(float64(f), 0) {
			continue
		}
		got, ok = Float32(nil, f)
		if want := marshal(t, f); !ok || string(got) != want {
			t.Errorf("Float32(%v) = %s %v, want %s", f, got, ok, want)
		}
	}
}

// NaN and infinities: encoding/json refuses them, and so do Float32 and
// Float64, appending nothing.
func TestFloatRefusesNaNAndInfinities(t *testing.T) {
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := json.Marshal(v); err == nil {
			t.Fatalf("encoding/json accepts %v", v)
		}
		if _, err := json.Marshal(float32(v)); err == nil {
			t.Fatalf("encoding/json accepts float32 %v", v)
		}
		if b, ok := Float64([]byte("x"), v); ok || string(b) != "x" {
			t.Errorf("Float64(%v) = %q %v, want x false", v, b, ok)
		}
		if b, ok := Float32([]byte("x"), float32(v)); ok || string(b) != "x" {
			t.Errorf("Float32(%v) = %q %v, want x false", v, b, ok)
		}
	}
}

func TestIntegers(t *testing.T) {
	vs := []int64{0, 1, 9, 10, 99, 100, 999, 1000, 65535, math.MaxInt64, math.MinInt64, math.MinInt64 + 1}
	for v := int64(-2000); v <= 2000; v++ {
		vs = append(vs, v)
	}
	for _, v := range vs {
		if got, want := string(Int(nil, v)), marshal(t, v); got != want {
			t.Errorf("Int(%d) = %s, want %s", v, got, want)
		}
		if v >= 0 {
			if got, want := string(Uint(nil, uint64(v))), marshal(t, uint64(v)); got != want {
				t.Errorf("Uint(%d) = %s, want %s", v, got, want)
			}
		}
	}
	if got := string(Uint(nil, math.MaxUint64)); got != "18446744073709551615" {
		t.Errorf("Uint(MaxUint64) = %s", got)
	}
}

// PutUint writes what strconv writes for every value below 100000 and for
// each power of ten and its neighbours up to the largest uint64, with the
// room it asks for (four bytes, or the digits) and nothing before the
// start touched; PutSmallUint the same below 1000, and Uint appends it
// at every capacity the growth can start from.
func TestPutUintMatchesStrconv(t *testing.T) {
	vs := []uint64{math.MaxUint64, math.MaxUint64 - 1}
	for v := range uint64(100000) {
		vs = append(vs, v)
	}
	for p := uint64(10); p < math.MaxUint64/10; p *= 10 {
		vs = append(vs, p-1, p, p+1, 10*p-1)
	}
	var buf [24]byte
	for _, v := range vs {
		want := strconv.FormatUint(v, 10)
		room := max(4, len(want))
		buf[0] = 'x'
		if n := PutUint(buf[1:1+room], v); string(buf[1:1+n]) != want || buf[0] != 'x' {
			t.Fatalf("PutUint(%d) = %q (%d), want %q", v, buf[1:1+n], n, want)
		}
		if v < 1000 {
			if n := PutSmallUint(buf[1:5], v); string(buf[1:1+n]) != want {
				t.Fatalf("PutSmallUint(%d) = %q, want %q", v, buf[1:1+n], want)
			}
		}
		if v < 2000 || v%997 == 0 {
			for c := range 6 {
				b := append(make([]byte, 0, 2+c), "ab"...)
				if got := string(Uint(b, v)); got != "ab"+want {
					t.Fatalf("Uint(%d) at capacity %d = %q", v, cap(b), got)
				}
			}
		}
	}
}

func TestHex(t *testing.T) {
	if got := string(Hex(nil, []byte{0x00, 0xAB, 0x3c, 0xFF})); got != `"00AB3CFF"` {
		t.Errorf("Hex = %s", got)
	}
	if got := string(Hex(nil, nil)); got != `""` {
		t.Errorf("Hex(nil) = %s", got)
	}
	if got := string(Hex32(nil, 0x3FFFFFFF)); got != "0x3FFFFFFF" {
		t.Errorf("Hex32 = %s", got)
	}
	if got := string(Hex32(nil, 0x00800050)); got != "0x00800050" {
		t.Errorf("Hex32 = %s", got)
	}
}

func TestAppendAllocatesNothing(t *testing.T) {
	buf := make([]byte, 0, 1024)
	s := "some text with <html> & \u2028 and bad \xff bytes"
	bs := []byte(s)
	n := testing.AllocsPerRun(100, func() {
		b := String(buf[:0], s)
		b = String(b, bs)
		b, _ = Float32(b, 82.13282)
		b, _ = Float64(b, 1e-9)
		b = Hex(b, bs)
		_ = Hex32(b, 0xDEADBEEF)
	})
	if n != 0 {
		t.Errorf("%v allocations per run, want 0", n)
	}
}

func TestSkipValue(t *testing.T) {
	obj := []byte(`{"a":"x\"y,}","b":[1,{"c":2}],"d":3}`)
	for _, c := range []struct{ start, end int }{
		{5, 13},  // "x\"y,}" (a quote and the brackets inside the string are skipped)
		{18, 29}, // [1,{"c":2}]
		{34, 35}, // 3, up to the closing brace
		{0, len(obj)},
	} {
		if got := SkipValue(obj, c.start); got != c.end {
			t.Errorf("SkipValue at %d = %d, want %d (%q)", c.start, got, c.end, obj[c.start:c.end])
		}
	}
}

// BenchmarkString: a registry text as `stats --json` writes one per
// non-stock row (long, plain, one multi-byte character), a name, and a
// direction ("C->S": shorter than a word).
func BenchmarkString(b *testing.B) {
	for _, c := range []struct{ name, s string }{
		{"registry-text", "stock-payloads.json: every SubsystemStatus (0x0A) a stock host sends is 18 bytes; OpenBC's client sends 9 or 10 … (networked battle, 2026-11-25)"},
		{"name", "ChecksumResponse"},
		{"dir", "C->S"},
	} {
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, 0, 1024)
			b.SetBytes(int64(len(c.s)))
			for b.Loop() {
				buf = StringNoHTML(buf[:0], c.s)
			}
		})
	}
}

// roundedCases are values as the statistics round them
// (math.Round(x*10^places)/10^places): shares of small counts, rates,
// durations, and the edges of Float64Places' range.
func roundedCases(places int) []float64 {
	p := math.Pow(10, float64(places))
	var xs []float64
	for a := 0; a <= 300; a++ {
		for _, d := range []int{1, 3, 7, 60, 97, 600, 1000, 4062, 65536} {
			xs = append(xs, float64(a)/float64(d), float64(a)*15/float64(d)*60, float64(a)*1e6/float64(d))
		}
	}
	r := rand.New(rand.NewPCG(3, uint64(places)))
	for range 5000 {
		xs = append(xs, r.Float64(), r.Float64()*1e4, r.ExpFloat64()*1e9, math.Ldexp(r.Float64(), r.IntN(120)-60))
	}
	xs = append(xs, 1e15/p, 1e15/p-1/p, 1e15/p+1/p, 1e21, 1e-7, 0.5/p, math.MaxFloat64)
	var vs []float64
	for _, x := range xs {
		vs = append(vs, math.Round(x*p)/p)
	}
	return vs
}

// Float64Places writes encoding/json's bytes for any value and number of
// places, and takes its own path for the rounded values it is meant for.
func TestFloat64PlacesMatchesEncodingJSON(t *testing.T) {
	for places := -1; places <= MaxPlaces+1; places++ {
		vs := floatCases()
		if places >= 0 {
			vs = append(vs, roundedCases(places)...)
		}
		own := 0
		for _, v := range vs {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			want := marshal(t, v)
			got, ok := Float64Places([]byte("x"), v, places)
			if !ok || string(got) != "x"+want {
				t.Fatalf("Float64Places(%v, %d) = %s %v, want x%s", v, places, got, ok, want)
			}
			if _, ok := appendPlaces(nil, v, places); ok {
				own++
			}
		}
		t.Logf("places %d: %d of %d values on the own path", places, own, len(vs))
		if places >= 0 && places <= MaxPlaces && own < len(vs)/3 {
			t.Errorf("places %d: only %d of %d values took the own path", places, own, len(vs))
		}
	}
	for _, v := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if b, ok := Float64Places([]byte("x"), v, 3); ok || string(b) != "x" {
			t.Errorf("Float64Places(%v) = %q %v, want x false", v, b, ok)
		}
	}
}

func FuzzFloat64Places(f *testing.F) {
	f.Add(0.0016, uint8(4), 1578.3214)
	f.Add(math.Copysign(0, -1), uint8(3), -2.5)
	f.Add(1e21, uint8(0), 1e-7)
	f.Fuzz(func(t *testing.T, v float64, places uint8, x float64) {
		pl := int(places%(MaxPlaces+3)) - 1 // -1 .. MaxPlaces+1
		p := math.Pow(10, float64(max(pl, 0)))
		for _, v := range []float64{v, math.Round(x*p) / p} {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			want := marshal(t, v)
			if got, ok := Float64Places(nil, v, pl); !ok || string(got) != want {
				t.Fatalf("Float64Places(%v, %d) = %s %v, want %s", v, pl, got, ok, want)
			}
		}
	})
}

// BenchmarkFloat64Places: a share and a rate per minute of a stats row,
// by Float64 and by Float64Places.
func BenchmarkFloat64Places(b *testing.B) {
	vs := []float64{0.0016, 0.9628, 1578.321, 23674.815, 39.458}
	for _, c := range []struct {
		name string
		f    func(b []byte, f float64) ([]byte, bool)
	}{
		{"Float64", Float64},
		{"Float64Places", func(b []byte, f float64) ([]byte, bool) { return Float64Places(b, f, 4) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			buf := make([]byte, 0, 64)
			for b.Loop() {
				buf = buf[:0]
				for _, v := range vs {
					buf, _ = c.f(buf, v)
				}
			}
		})
	}
}

// BenchmarkUint appends the numbers of the decoded messages: bytes (one to
// three digits) and frame numbers (four to six), through Uint (new) and
// digit by digit with divisions below 1000, strconv above (old).
func BenchmarkUint(b *testing.B) {
	r := rand.New(rand.NewPCG(3, 3))
	for _, values := range []string{"bytes", "frames"} {
		vs := make([]uint64, 1024)
		for i := range vs {
			vs[i] = r.Uint64N(256)
			if values == "frames" {
				vs[i] = 1000 + r.Uint64N(600000)
			}
		}
		buf := make([]byte, 0, 64)
		b.Run("values="+values+"/impl=new", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				buf = Uint(buf[:0], vs[i%len(vs)])
			}
		})
		b.Run("values="+values+"/impl=old", func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				buf = uintOld(buf[:0], vs[i%len(vs)])
			}
		})
	}
}

// uintOld is Uint as it was before its tables, for the benchmark.
func uintOld(b []byte, v uint64) []byte {
	switch {
	case v < 10:
		return append(b, byte('0'+v))
	case v < 100:
		return append(b, byte('0'+v/10), byte('0'+v%10))
	case v < 1000:
		return append(b, byte('0'+v/100), byte('0'+v/10%10), byte('0'+v%10))
	}
	return strconv.AppendUint(b, v, 10)
}
