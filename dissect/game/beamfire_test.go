package game

import (
	"strings"
	"testing"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/internal/fixture"
)

// No source quotes BeamFire bytes: these tests are synthetic.

func TestBeamFireSynthetic(t *testing.T) {
	// With a target (flags 0x02 as seeds/001 observes for every beam).
	evRoundTrip(t, &BeamFire{Object: 0x40000010, Flags: 0x02, Direction: dissect.Dir3{-33, -121, 17},
		MoreFlags: BeamHasTarget, Target: PlayerObjectID(1)})
	// Without.
	evRoundTrip(t, &BeamFire{Object: 0x40000011, Flags: 0x02, Direction: dissect.Dir3{0, 127, 0}})
	b := (&BeamFire{Object: 1, Flags: 2, Target: 5}).Append(nil)
	if len(b) != 10 {
		t.Fatalf("beam without target encodes to %d bytes, want 10", len(b))
	}
	b = (&BeamFire{Object: 1, Flags: 2, MoreFlags: BeamHasTarget, Target: 5}).Append(nil)
	if len(b) != 14 {
		t.Fatalf("beam with target encodes to %d bytes, want 14", len(b))
	}
}

func TestBeamFireFields(t *testing.T) {
	res := NewDecoder().Decode(fixture.Unhex(t, "1A 10 00 00 40 02 DF 87 11 01 FF FF 03 40"), ClientToServer)
	if res.Err != nil || len(res.Unparsed) > 0 {
		t.Fatalf("%v % X", res.Err, res.Unparsed)
	}
	m := evAs[*BeamFire](t, res.Msg)
	evWant(t, "object", m.Object, ObjectID(0x40000010))
	evWant(t, "flags", m.Flags, uint8(2))
	evWant(t, "direction", m.Direction, dissect.Dir3{-33, -121, 17})
	evWant(t, "more flags", m.MoreFlags, BeamFlags(1))
	evWant(t, "target", m.Target, PlayerObjectID(1))
}

// The OpenBC reading of the second flags byte (bit 1 = has target) is not
// followed; such a message keeps its target bytes unparsed with a warning
// that says why, and the opposite case fails with the reason.
func TestBeamFireSourcesDisagree(t *testing.T) {
	res := NewDecoder().Decode(fixture.Unhex(t, "1A 10 00 00 40 02 DF 87 11 02 FF FF 03 40"), ClientToServer)
	if res.Err != nil || len(res.Unparsed) != 4 || !strings.Contains(res.Warning, "OpenBC") {
		t.Fatalf("bit-1 form: %v unparsed % X warning %q", res.Err, res.Unparsed, res.Warning)
	}
	res = NewDecoder().Decode(fixture.Unhex(t, "1A 10 00 00 40 02 DF 87 11 01"), ClientToServer)
	if res.Err == nil || !strings.Contains(res.Err.Error(), "shield-effect") {
		t.Fatalf("bit-0 without target: %v", res.Err)
	}
}

func FuzzBeamFire(f *testing.F) {
	f.Add(uint8(0), fixture.Unhex(f, "10 00 00 40 02 DF 87 11 01 FF FF 03 40"))
	f.Add(uint8(0), fixture.Unhex(f, "10 00 00 40 02 DF 87 11 00"))
	evFuzz(f, []Opcode{OpBeamFire})
}
