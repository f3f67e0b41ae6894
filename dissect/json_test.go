package dissect

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"net/netip"
	"strconv"
	"testing"
)

// oldJSONFloat is the four-decimal float form as it was before AppendJSON
// (each MarshalJSON built its bytes through it), kept as the reference.
func oldJSONFloat(f float32) []byte {
	if f != f || math.IsInf(float64(f), 0) {
		return []byte("null")
	}
	return strconv.AppendFloat(nil, math.Round(float64(f)*1e4)/1e4, 'f', -1, 64)
}

func oldVec3JSON(v Vec3) string {
	return "[" + string(oldJSONFloat(v.X)) + "," + string(oldJSONFloat(v.Y)) + "," + string(oldJSONFloat(v.Z)) + "]"
}

// jsonFloatCases: every decade a float32 holds, values just around
// four-decimal rounding boundaries, the zeros of either sign that rounding
// makes of tiny negative values, and values around 1e10, where
// appendJSONFloat leaves its integer path for strconv.
func jsonFloatCases() []float32 {
	vs := []float32{0, float32(math.Copysign(0, -1)), -0.00004, -0.00005, 0.00005, 0.00004999, 1.00005, -1.00005,
		0.12345, 82.13282, 448.3789, -0.5827, 0.8031, 1e9, 1e10, 1e11, 1e12, 1e15, 1e20, 1e30,
		math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, float32(math.NaN()),
		float32(math.Inf(1)), float32(math.Inf(-1))}
	for e := -45; e <= 38; e++ {
		p := float32(math.Pow(10, float64(e)))
		vs = append(vs, p, -p, p*1.5, -p*7.77777, math.Nextafter32(p, 0), math.Nextafter32(p, 2*p))
	}
	for k := -20000; k <= 20000; k++ {
		x := float64(k) * 0.00005 // the rounding boundaries of four decimals
		vs = append(vs, float32(x), math.Nextafter32(float32(x), 0), math.Nextafter32(float32(x), 1e9))
	}
	r := rand.New(rand.NewPCG(3, 4))
	for range 50000 {
		vs = append(vs, math.Float32frombits(r.Uint32()), float32(r.NormFloat64()*1000), float32(r.NormFloat64()),
			float32(r.Float64()*2e10), -float32(r.Float64()*2e10)) // around the integer path's limit
	}
	return vs
}

func TestAppendJSONFloatMatchesOldForm(t *testing.T) {
	for _, f := range jsonFloatCases() {
		if got, want := string(appendJSONFloat(nil, f)), string(oldJSONFloat(f)); got != want {
			t.Fatalf("appendJSONFloat(%v [%#08x]) = %s, want %s", f, math.Float32bits(f), got, want)
		}
	}
}

func TestCompressedAppendJSONMatchesOldForm(t *testing.T) {
	check := func(what, got, want string) {
		t.Helper()
		if got != want {
			t.Fatalf("%s: AppendJSON = %s, want %s", what, got, want)
		}
	}
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 1 << 16 {
		c := CF16(i)
		check("CF16", string(c.AppendJSON(nil)), string(oldJSONFloat(c.Float())))
		d := Dir3{int8(r.Uint32()), int8(r.Uint32()), int8(r.Uint32())}
		check("Dir3", string(d.AppendJSON(nil)), oldVec3JSON(d.Vec()))
		cv := CV4{Dir: d, Mag: c}
		check("CV4", string(cv.AppendJSON(nil)), oldVec3JSON(cv.Vec()))
		cf := CV4F{Dir: d, Mag: math.Float32frombits(r.Uint32())}
		check("CV4F", string(cf.AppendJSON(nil)), oldVec3JSON(cf.Vec()))
		ct := Contact{Dir: d, Mag: uint8(i)}
		check("Contact", string(ct.AppendJSON(nil)), `{"dir":`+oldVec3JSON(d.Vec())+`,"mag":`+strconv.Itoa(int(uint8(i)))+`}`)
		v := Vec3{math.Float32frombits(r.Uint32()), float32(r.NormFloat64() * 100), float32(i)}
		check("Vec3", string(v.AppendJSON(nil)), oldVec3JSON(v))
		if i%64 != 0 {
			continue
		}
		// And encoding/json, through MarshalJSON, sees the same bytes.
		j, err := json.Marshal(struct {
			V Vec3
			C CV4
		}{v, cv})
		if err != nil {
			t.Fatal(err)
		}
		check("json.Marshal", string(j), `{"V":`+oldVec3JSON(v)+`,"C":`+oldVec3JSON(cv.Vec())+`}`)
	}
}

func controlCases() []Control {
	slot := func(v uint8) *uint8 { return &slotValues[v] }
	return []Control{
		{}, {Kind: "peer-info"}, {Kind: "raw", Extra: []byte{1, 2}},
		{Kind: "peer-info", Slot: slot(2), Addr: netip.AddrFrom4([4]byte{10, 0, 1, 10}), Name: "Cady <&> \u2028 \xff"},
		{Kind: "slot-assignment", Slot: slot(0)},
		{Kind: "connect-request", Addr: netip.AddrFrom4([4]byte{0, 0, 0, 0}), Port: 50000, Reserved: []byte{1}},
		{Kind: "disconnect", Slot: slot(255), Addr: netip.MustParseAddr("::ffff:1.2.3.4")},
		{Kind: "x", Addr: netip.MustParseAddr("fe80::1%eth<0>\"")},
		{Kind: "x", Addr: netip.MustParseAddr("2001:db8::1")},
	}
}

func TestControlAppendJSONMatchesEncodingJSON(t *testing.T) {
	for _, c := range controlCases() {
		checkControlJSON(t, &c)
	}
}

func checkControlJSON(t *testing.T, c *Control) {
	t.Helper()
	want, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	if got := c.AppendJSON(nil); string(got) != string(want) {
		t.Fatalf("Control %+v: AppendJSON = %s, want %s", c, got, want)
	}
}

func checkGameSpyJSON(t *testing.T, g *GameSpy) {
	t.Helper()
	want, err := json.Marshal(g)
	if err != nil {
		t.Fatal(err)
	}
	if got := g.AppendJSON(nil); string(got) != string(want) {
		t.Fatalf("GameSpy %+v: AppendJSON = %s, want %s", g, got, want)
	}
}

func TestGameSpyAppendJSONMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{`\status\`, `\basic\\info\`, `\gamename\bcommander\final\\queryid\1.1`,
		`\hostname\<b>&"q"\` + "\x01\xff\u2029" + `\final\`, `\`, `\a\`, `\queryid\\`} {
		g, _ := ParseGameSpy([]byte(s))
		checkGameSpyJSON(t, &g)
	}
	checkGameSpyJSON(t, &GameSpy{})
}

// FuzzControlGameSpyJSON decodes random payloads as every control message
// type and as GameSpy, and holds AppendJSON to json.Marshal.
func FuzzControlGameSpyJSON(f *testing.F) {
	f.Add(uint8(TypePeerInfo), []byte("\x02\x0a\x00\x01\x0aC\x00a\x00\x00\x00"))
	f.Add(uint8(TypeConnect), []byte("\x0a\x00\x01\x0a\xc3\x50\x00\x00\x00\x00"))
	f.Add(uint8(TypeDisconnect), []byte("\x02\x0a\x00\x01\x0a"))
	f.Add(uint8(0), []byte(`\hostname\x\final\\queryid\1.1`))
	f.Fuzz(func(t *testing.T, typ uint8, p []byte) {
		c, _ := ParseControl(&Message{Type: TransportType(typ), Payload: p})
		checkControlJSON(t, &c)
		g, _ := ParseGameSpy(p)
		checkGameSpyJSON(t, &g)
	})
}

func TestControlGameSpyAppendJSONAllocatesNothing(t *testing.T) {
	c := controlCases()[3]
	g, _ := ParseGameSpy([]byte(`\gamename\bcommander\hostname\x\final\\queryid\1.1`))
	buf := make([]byte, 0, 4096)
	if n := testing.AllocsPerRun(100, func() {
		b := c.AppendJSON(buf[:0])
		_ = g.AppendJSON(b)
	}); n != 0 {
		t.Errorf("%v allocations per run, want 0", n)
	}
}
