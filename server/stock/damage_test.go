package stock

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect/game"
)

// scripted is a Rand that returns its values in order and records the
// calls, so a test states exactly what the policy draws.
type scripted struct {
	t     *testing.T
	vals  []int64
	calls []string
}

func (r *scripted) next(call string) int64 {
	r.calls = append(r.calls, call)
	if len(r.vals) == 0 {
		r.t.Fatalf("unexpected draw %s", call)
	}
	v := r.vals[0]
	r.vals = r.vals[1:]
	return v
}

func (r *scripted) Intn(n int) int {
	v := r.next("Intn")
	if v < 0 || v >= int64(n) {
		r.t.Fatalf("scripted Intn(%d) value %d out of range", n, v)
	}
	return int(v)
}

func (r *scripted) Int63n(n int64) int64 {
	v := r.next("Int63n")
	if v < 0 || v >= n {
		r.t.Fatalf("scripted Int63n(%d) value %d out of range", n, v)
	}
	return v
}

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Stock client messages from ../shared/vectors/stock-payloads.json.
const (
	// BeamFire with target 0x40080068.
	stockBeamFire = "1A 77 00 00 40 02 75 0E D2 03 68 00 08 40"
	// TorpedoFire, flags 0x01 (target follows): target 0x4003FFFF.
	stockTorpedoFire = "19 0D 00 00 40 02 01 DF 87 11 FF FF 03 40 00 88 D8 5C"
	// CollisionEffect, Sovereign vs asteroid: target 0x3FFFFFFF.
	stockCollision = "15 24 81 00 00 50 00 80 00 00 00 00 00 FF FF FF 3F 01 0D 7E 00 D9 BB 20 A0 44"
	// A host StateUpdate: no hit.
	stockStateUpdate = "1C FF FF FF 3F 80 EC 04 42 20 00 FF FF 20 FF FF FF FF FF FF"
)

func TestHostDamageHit(t *testing.T) {
	known := map[game.ObjectID]bool{0x40080068: true, 0x4003FFFF: true, 0x3FFFFFFF: true}
	tests := []struct {
		name    string
		payload string
		known   bool // the target is a ship the host knows
		draws   []int64
		want    Hit
		hit     bool
		calls   string
	}{
		{"beam hits at once", stockBeamFire, true, nil, Hit{Ship: 0x40080068}, true, ""},
		{"beam at an unknown ship", stockBeamFire, false, nil, Hit{}, false, ""},
		{"torpedo misses", stockTorpedoFire, true, []int64{0}, Hit{}, false, "Intn"},
		// The flight is 1.5 s give or take half: 750 ms plus the draw.
		{"torpedo hits after its flight", stockTorpedoFire, true, []int64{1, 0}, Hit{Ship: 0x4003FFFF, After: 750 * time.Millisecond}, true, "Intn Int63n"},
		{"torpedo hits late", stockTorpedoFire, true, []int64{1, int64(1500 * time.Millisecond)}, Hit{Ship: 0x4003FFFF, After: 2250 * time.Millisecond}, true, "Intn Int63n"},
		{"torpedo at an unknown ship", stockTorpedoFire, false, []int64{1, 5}, Hit{}, false, "Intn Int63n"},
		{"collision damages its target", stockCollision, true, nil, Hit{Ship: 0x3FFFFFFF}, true, ""},
		{"state update", stockStateUpdate, true, nil, Hit{}, false, ""},
		{"truncated beam", stockBeamFire[:20], true, nil, Hit{}, false, ""},
		{"empty", "", true, nil, Hit{}, false, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rng := &scripted{t: t, vals: tc.draws}
			h := NewHostDamage(rng)
			got, ok := h.Hit(unhex(t, tc.payload), func(id game.ObjectID) bool { return tc.known && known[id] })
			if ok != tc.hit || got != tc.want {
				t.Errorf("Hit = %+v, %v; want %+v, %v", got, ok, tc.want, tc.hit)
			}
			if calls := strings.Join(rng.calls, " "); calls != tc.calls {
				t.Errorf("draws %q, want %q", calls, tc.calls)
			}
		})
	}
}

func TestHostDamageRepairList(t *testing.T) {
	const ship = game.ObjectID(0x40000018)
	// Subsystem index 2, again 2 (a duplicate), 3, then a repair time at
	// the low end; after the repair, 2 again.
	rng := &scripted{t: t, vals: []int64{2, 2, 3, 0, 2, int64(2 * time.Second)}}
	h := NewHostDamage(rng)

	r, ok := h.Damage(ship)
	if !ok || r.Ship != ship || r.Subsystem != ship+0x32 {
		t.Fatalf("Damage = %+v, %v", r, ok)
	}
	if _, ok := h.Damage(ship); ok {
		t.Fatal("a subsystem already on the repair list was added again")
	}
	if r3, ok := h.Damage(ship); !ok || r3.Subsystem != ship+0x33 {
		t.Fatalf("another subsystem: %+v, %v", r3, ok)
	}
	if d := h.RepairTime(); d != 4*time.Second {
		t.Errorf("RepairTime = %v, want 4s", d)
	}
	h.Repaired(r)
	if _, ok := h.Damage(ship); !ok {
		t.Error("a repaired subsystem could not go on the list again")
	}
	if d := h.RepairTime(); d != 6*time.Second {
		t.Errorf("RepairTime = %v, want 6s", d)
	}
	h.Forget(ship)
	if len(h.lists) != 0 {
		t.Errorf("lists after Forget: %v", h.lists)
	}
}

// The events' bytes: the stock ADD_TO_REPAIR_LIST of
// ../shared/vectors/stock-payloads.json (subsystem 0x40000002 of ship
// 0x40000018), and REPAIR_COMPLETED in the same layout with its event
// code 0x00800074 (OpenBC docs/wire-formats/pythonevent-wire-format/
// 05-three-producers.md names both events of the host handler).
func TestHostDamageEventBytes(t *testing.T) {
	r := Repair{Ship: 0x40000018, Subsystem: 0x40000002}
	for _, tc := range []struct {
		name string
		msg  *game.PythonEvent
		want string
	}{
		{"ADD_TO_REPAIR_LIST", r.Added(), "06 01 01 00 00 DF 00 80 00 02 00 00 40 18 00 00 40"},
		{"REPAIR_COMPLETED", r.Completed(), "06 01 01 00 00 74 00 80 00 02 00 00 40 18 00 00 40"},
	} {
		got := tc.msg.Append(nil)
		if want := unhex(t, tc.want); !bytes.Equal(got, want) {
			t.Errorf("%s = % X, want % X", tc.name, got, want)
		}
		res := game.NewDecoder().Decode(got, game.ServerToClient)
		if pe, ok := res.Msg.(*game.PythonEvent); res.Err != nil || !ok || !reflect.DeepEqual(pe.Event, tc.msg.Event) {
			t.Errorf("%s does not decode back: %+v, %v", tc.name, res.Msg, res.Err)
		}
	}
	// Repaired returns REPAIR_COMPLETED for the repair.
	h := NewHostDamage(&scripted{t: t})
	if got := h.Repaired(r).Append(nil); !bytes.Equal(got, r.Completed().Append(nil)) {
		t.Errorf("Repaired = % X", got)
	}
}
