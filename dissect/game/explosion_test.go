package game

import (
	"testing"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/internal/fixture"
)

// No source quotes Explosion bytes: these tests are synthetic. The CF16
// codes are the ones OpenBC's explosion-wire-format.md tabulates
// (15.0 -> 0x50E3 -> 14.989, 25.0 -> 0x52AA -> 24.989, 273.0 -> 0x6313).

func TestExplosionSynthetic(t *testing.T) {
	b := fixture.Unhex(t, "29 FF FF 03 40 00 7F 00 E3 50 E3 50 AA 52")
	res := NewDecoder().Decode(b, ServerToClient)
	if res.Err != nil || len(res.Unparsed) > 0 {
		t.Fatalf("%v % X", res.Err, res.Unparsed)
	}
	m := evAs[*Explosion](t, res.Msg)
	evWant(t, "object", m.Object, PlayerObjectID(1))
	evWant(t, "impact direction", m.Impact.Dir, dissect.Dir3{0, 127, 0})
	evNear(t, "impact y", float64(m.Impact.Vec().Y), 14.989, 0.001)
	evWant(t, "radius code (first)", m.Radius, dissect.CF16(0x50E3))
	evWant(t, "damage code (second)", m.Damage, dissect.CF16(0x52AA))
	evNear(t, "radius", float64(m.Radius.Float()), 14.989, 0.001)
	evNear(t, "damage", float64(m.Damage.Float()), 24.989, 0.001)

	evRoundTrip(t, &Explosion{Object: PlayerObjectID(0), Impact: dissect.EncodeCV4(dissect.Vec3{X: 10, Y: -20, Z: 5}),
		Radius: dissect.EncodeCF16(2063), Damage: dissect.EncodeCF16(273)})
	if got := (&Explosion{Damage: dissect.EncodeCF16(273)}).Damage; got != 0x6313 {
		t.Fatalf("CF16(273) = %#04x, want 0x6313", uint16(got))
	}
	if n := len((&Explosion{}).Append(nil)); n != 14 {
		t.Fatalf("explosion is %d bytes, want 14", n)
	}
}

func TestExplosionTruncated(t *testing.T) {
	if res := NewDecoder().Decode(fixture.Unhex(t, "29 FF FF 03 40 00 7F 00 E3 50 E3 50 AA"), ServerToClient); res.Err == nil {
		t.Fatal("13-byte explosion decoded")
	}
}

func FuzzExplosion(f *testing.F) {
	f.Add(uint8(0), fixture.Unhex(f, "FF FF 03 40 00 7F 00 E3 50 E3 50 AA 52"))
	evFuzz(f, []Opcode{OpExplosion})
}
