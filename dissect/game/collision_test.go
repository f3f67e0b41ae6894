package game

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/internal/fixture"
)

func evCheckCollision(t *testing.T, m Message, target ObjectID, contacts []dissect.Contact, force, tol float64) {
	t.Helper()
	c := evAs[*CollisionEffect](t, m)
	evWant(t, "class", c.Class, EventClassCollision)
	evWant(t, "code", c.Code, ETCollisionEffect)
	evWant(t, "source (environment)", c.Source, ObjectID(0))
	evWant(t, "target", c.Target, target)
	evWant(t, "contact count", len(c.Contacts), len(contacts))
	for i := range contacts {
		if i < len(c.Contacts) {
			evWant(t, "contact", c.Contacts[i], contacts[i])
		}
	}
	evNear(t, "force", float64(c.Force), force, tol)
}

var _ = addReal(realCase{
	name:   "CollisionEffect one contact (seeds/001)",
	source: "seeds/001, 0x15 CollisionEffect, Example decode (P1, 26 bytes); same bytes in OpenBC collision-effect-wire-format.md Example 1",
	dir:    ClientToServer,
	hex:    "15 24 81 00 00 50 00 80 00 00 00 00 00 FF FF FF 3F 01 0D 7E 00 D9 BB 20 A0 44",
	check: func(t *testing.T, m Message) {
		evCheckCollision(t, m, PlayerObjectID(0),
			[]dissect.Contact{{Dir: dissect.Dir3{13, 126, 0}, Mag: 217}}, 1281.02, 0.01)
	},
})

var _ = addReal(realCase{
	name:   "CollisionEffect two contacts",
	source: "OpenBC docs/wire-formats/collision-effect-wire-format.md, Example 2",
	dir:    ClientToServer,
	hex:    "15 24 81 00 00 50 00 80 00 00 00 00 00 FF FF FF 3F 02 0F 7E 00 DA 00 7E FF D8 51 C3 67 44",
	check: func(t *testing.T, m Message) {
		evCheckCollision(t, m, PlayerObjectID(0), []dissect.Contact{
			{Dir: dissect.Dir3{15, 126, 0}, Mag: 218},
			{Dir: dissect.Dir3{0, 126, -1}, Mag: 216},
		}, 927.05, 0.01)
	},
})

// The doc decodes FF FF 03 40 as "0x400003FF (Player 0 range, offset
// +1024)"; little-endian it is 0x4003FFFF, player 1's ship.
var _ = addReal(realCase{
	name:   "CollisionEffect player 1",
	source: "OpenBC docs/wire-formats/collision-effect-wire-format.md, Example 3",
	dir:    ClientToServer,
	hex:    "15 24 81 00 00 50 00 80 00 00 00 00 00 FF FF 03 40 01 27 77 11 B8 9D 47 25 44",
	check: func(t *testing.T, m Message) {
		evCheckCollision(t, m, PlayerObjectID(1),
			[]dissect.Contact{{Dir: dissect.Dir3{39, 119, 17}, Mag: 184}}, 661.12, 0.01)
	},
})

// A stock client's report as received by OpenBC. The report writes the
// contact as (+251,+126,+0,+216); the direction bytes are signed, so FB is
// -5. Force "1142.70 (approx)".
var _ = addReal(realCase{
	name:   "CollisionEffect asteroid 1",
	source: "OpenBC docs/bugs/bug-reports/20260220-shield-flicker-and-collision-damage.md, Collision 1",
	dir:    ClientToServer,
	hex:    "15 24 81 00 00 50 00 80 00 00 00 00 00 FF FF FF 3F 01 FB 7E 00 D8 4D D6 8E 44",
	check: func(t *testing.T, m Message) {
		evCheckCollision(t, m, PlayerObjectID(0),
			[]dissect.Contact{{Dir: dissect.Dir3{-5, 126, 0}, Mag: 216}}, 1142.70, 0.01)
	},
})

var _ = addReal(realCase{
	name:   "CollisionEffect asteroid 2",
	source: "OpenBC docs/bugs/bug-reports/20260220-shield-flicker-and-collision-damage.md, Collision 2",
	dir:    ClientToServer,
	hex:    "15 24 81 00 00 50 00 80 00 00 00 00 00 FF FF FF 3F 01 14 7D FE DA 89 C4 F2 43",
	check: func(t *testing.T, m Message) {
		evCheckCollision(t, m, PlayerObjectID(0),
			[]dissect.Contact{{Dir: dissect.Dir3{20, 125, -2}, Mag: 218}}, 485.5, 0.05)
	},
})

func TestCollisionEffectContactVector(t *testing.T) {
	res := NewDecoder().Decode(fixture.Unhex(t, "15 24 81 00 00 50 00 80 00 00 00 00 00 FF FF FF 3F 01 0D 7E 00 D9 BB 20 A0 44"), ClientToServer)
	c := evAs[*CollisionEffect](t, res.Msg)
	v := c.Contacts[0].Vec() // direction (13,126,0)/127 times 217/255 of the bounding radius
	evNear(t, "x", float64(v.X), 13.0/127*217/255, 1e-5)
	evNear(t, "y", float64(v.Y), 126.0/127*217/255, 1e-5)
	evNear(t, "z", float64(v.Z), 0, 1e-6)
	j, err := json.Marshal(res.Msg)
	if err != nil || !strings.Contains(string(j), `"contact_count":1`) || !strings.Contains(string(j), `"mag":217`) {
		t.Fatalf("json %s %v", j, err)
	}
}

func TestCollisionEffectSynthetic(t *testing.T) {
	// Ship against ship (no capture of this case is published).
	evRoundTrip(t, &CollisionEffect{Class: EventClassCollision, Code: ETCollisionEffect,
		Source: PlayerObjectID(2), Target: PlayerObjectID(1),
		Contacts: []dissect.Contact{{Dir: dissect.Dir3{-127, 0, 0}, Mag: 255}, {Dir: dissect.Dir3{0, 0, 127}, Mag: 1}, {Mag: 0}},
		Force:    0.07})
	// A literal without Class still encodes as a collision event.
	m := &CollisionEffect{Code: ETCollisionEffect, Target: PlayerObjectID(0), Force: 1}
	res := NewDecoder().Decode(m.Append(nil), ClientToServer)
	if res.Err != nil || evAs[*CollisionEffect](t, res.Msg).Class != EventClassCollision {
		t.Fatalf("zero class: %v", res.Err)
	}
}

func TestCollisionEffectOddForms(t *testing.T) {
	// Another event class: shown raw with an error.
	res := NewDecoder().Decode(fixture.Unhex(t, "15 01 01 00 00 50 00 80 00 00 00 00 00 FF FF FF 3F 00 00 00 00 00"), ClientToServer)
	if res.Err == nil || !strings.Contains(res.Err.Error(), "0x00000101") {
		t.Fatalf("foreign class: %v", res.Err)
	}
	// Another event code: decoded, with a warning.
	res = NewDecoder().Decode(fixture.Unhex(t, "15 24 81 00 00 FC 00 80 00 00 00 00 00 FF FF FF 3F 00 00 00 80 3F"), ClientToServer)
	if res.Err != nil || !strings.Contains(res.Warning, "ET_HOST_COLLISION_EFFECT") {
		t.Fatalf("host code: %v %q", res.Err, res.Warning)
	}
	// A count larger than the contacts present: truncated.
	res = NewDecoder().Decode(fixture.Unhex(t, "15 24 81 00 00 50 00 80 00 00 00 00 00 FF FF FF 3F FF 0D 7E 00 D9 BB 20 A0 44"), ClientToServer)
	if res.Err == nil {
		t.Fatal("count 255 with one contact decoded")
	}
}

func FuzzCollisionEffect(f *testing.F) {
	evFuzz(f, []Opcode{OpCollisionEffect})
}
