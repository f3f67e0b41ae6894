package game

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/internal/fixture"
)

// The stock TorpedoFire. The source decodes it as obj=0x4000000D subsys=2
// flags=0x01 vel=(-0.26,-0.95,0.13) target=0x4003FFFF and four trailing
// bytes 00 88 D8 5C of "impact/arc data". Flags 0x01 followed by a target
// shows that bit 2 (clear) is what announces the target, not bit 1
// (seeds/001's has_target, also clear here), and the four trailing bytes
// are the 4-byte point form (unit direction 0,-120,-40 and magnitude 0x5C),
// not a 5-byte CompressedVector4.
var _ = addReal(realCase{
	name:   "TorpedoFire photon with target",
	source: `vectors/stock-datagrams.json, "TorpedoFire 0x19 datagram (VDAY_REFS, line 12322)"`,
	dir:    ClientToServer,
	hex:    "19 0D 00 00 40 02 01 DF 87 11 FF FF 03 40 00 88 D8 5C",
	check: func(t *testing.T, m Message) {
		f := evAs[*TorpedoFire](t, m)
		evWant(t, "object", f.Object, ObjectID(0x4000000D))
		evWant(t, "torpedo type", f.Type, TorpedoTypeIndex(2))
		evWant(t, "torpedo type name", f.Type.String(), "PHOTON")
		evWant(t, "flags", f.Flags, TorpedoFlags(0x01))
		evWant(t, "has target", f.Flags.HasTarget(), true)
		evWant(t, "velocity bytes", f.Velocity, dissect.Dir3{-33, -121, 17})
		v := f.Velocity.Vec()
		evNear(t, "velocity x", float64(v.X), -0.26, 0.005)
		evNear(t, "velocity y", float64(v.Y), -0.95, 0.005)
		evNear(t, "velocity z", float64(v.Z), 0.13, 0.005)
		evWant(t, "target", f.Target, ObjectID(0x4003FFFF))
		evWant(t, "target point", f.TargetPoint, dissect.Contact{Dir: dissect.Dir3{0, -120, -40}, Mag: 0x5C})
	},
})

// No source quotes an unguided TorpedoFire; synthetic, shaped as seeds/001
// reports photon launches without a lock (flags 0x05: bit 2 set).
func TestTorpedoFireSynthetic(t *testing.T) {
	evRoundTrip(t, &TorpedoFire{Object: 0x3FFFFFF5, Type: 2, Flags: 0x05, Velocity: dissect.Dir3{0, 127, 0}})
	evRoundTrip(t, &TorpedoFire{Object: 0x40040010, Type: 3, Flags: 0x03, Velocity: dissect.Dir3{-90, 0, 90},
		Target: PlayerObjectID(0), TargetPoint: dissect.Contact{Dir: dissect.Dir3{127, 0, 0}, Mag: 255}})
	// Type beyond the stock table (mods).
	evRoundTrip(t, &TorpedoFire{Object: 0x40040011, Type: 40, Flags: 0x04, Velocity: dissect.Dir3{1, 2, 3}})

	b := (&TorpedoFire{Object: 1, Type: 2, Flags: TorpedoNoTarget, Target: 99}).Append(nil)
	if len(b) != 10 {
		t.Fatalf("unguided torpedo encodes to %d bytes, want 10 (target not written)", len(b))
	}
	res := NewDecoder().Decode(b, ClientToServer)
	j, _ := json.Marshal(res.Msg)
	if strings.Contains(string(j), `"target":`) || !strings.Contains(string(j), `"has_target":false`) {
		t.Fatalf("json %s", j)
	}
}

func TestTorpedoFireTruncated(t *testing.T) {
	for _, h := range []string{"19 0D 00 00 40 02 01 DF 87", "19 0D 00 00 40 02 01 DF 87 11 FF FF 03 40 00 88 D8"} {
		if res := NewDecoder().Decode(fixture.Unhex(t, h), ClientToServer); res.Err == nil {
			t.Errorf("%s: no error", h)
		}
	}
}

func FuzzTorpedoFire(f *testing.F) {
	evFuzz(f, []Opcode{OpTorpedoFire})
}
