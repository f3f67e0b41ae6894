package stock

import (
	"time"

	"github.com/bcwire/bcwire/dissect/game"
)

// The stock host announces damage itself: when a subsystem of a ship is
// damaged it goes on the ship's repair list, and the host sends PythonEvent
// (0x06) ADD_TO_REPAIR_LIST reliably to every client, later REPAIR_COMPLETED
// (OpenBC docs/wire-formats/pythonevent-wire-format/05-three-producers.md,
// "Host Event Handler": host-generated, sent to every peer but the host,
// duplicates on the repair list rejected). Clients never send PythonEvent
// 0x06 (../shared/PROTOCOL.md: 251 server to client, none from clients).
// The event is a TGSubsystemEvent (factory 0x0101), as in the stock bytes
// 06 01 01 00 00 DF 00 80 00 02 00 00 40 18 00 00 40 of
// ../shared/vectors/stock-payloads.json.
//
// HostDamage is that policy, shared by the capture generator (server/synth)
// and the native server (server/native). Neither simulates weapons, so a
// hit is what a client's message says: a BeamFire hits its target at once,
// a TorpedoFire half the time after its flight, a CollisionEffect damages
// its target. Randomness comes from the caller and time is returned as
// delays, so the generator stays deterministic for a seed and the native
// server drives it from its own clock.

// Rand is the randomness HostDamage draws from; *math/rand.Rand has it.
type Rand interface {
	Intn(n int) int
	Int63n(n int64) int64
}

const (
	// torpedoFlight is a torpedo's time to its target. No source gives it;
	// it only sets how long after the TorpedoFire the damage shows.
	torpedoFlight = 1500 * time.Millisecond
	// repairBase and repairSpread: a subsystem is repaired 4 to 6 seconds
	// after it went on the list. No source gives stock repair times (they
	// depend on the damage and the ship's repair crew); this is a guess
	// that only sets how soon REPAIR_COMPLETED follows.
	repairBase   = 3 * time.Second
	repairSpread = 2 * time.Second
	// repairSubsystems is how many subsystems a hit may damage: the first
	// six of a ship, whose object ids follow the generator's layout
	// (subsystemBase + index above the ship's id), since neither program
	// models a ship's real subsystem objects.
	repairSubsystems = 6
	subsystemBase    = 0x30
)

// HostDamage keeps every ship's repair list. The zero value is not usable:
// call NewHostDamage.
type HostDamage struct {
	rng   Rand
	dec   *game.Decoder
	lists map[game.ObjectID]uint8 // by ship: the subsystem indexes on its repair list, as bits
}

// NewHostDamage returns the policy drawing from rng.
func NewHostDamage(rng Rand) *HostDamage {
	return &HostDamage{rng: rng, dec: game.NewDecoder(), lists: map[game.ObjectID]uint8{}}
}

// Hit is a client's weapon or collision hitting a ship: Ship is damaged
// After from the message's arrival (zero: at once).
type Hit struct {
	Ship  game.ObjectID
	After time.Duration
}

// Hit says whether the game message payload that a client sent the host
// hits a ship the host knows (known), and when. Call it as the message
// arrives, for every game message; most are no hit. It draws from the
// randomness for every TorpedoFire, hit or not.
func (h *HostDamage) Hit(payload []byte, known func(game.ObjectID) bool) (Hit, bool) {
	if len(payload) == 0 {
		return Hit{}, false
	}
	switch game.Opcode(payload[0]) {
	case game.OpBeamFire, game.OpTorpedoFire, game.OpCollisionEffect:
	default:
		return Hit{}, false
	}
	r := h.dec.Decode(payload, game.ClientToServer)
	if r.Err != nil {
		return Hit{}, false
	}
	var hit Hit
	switch m := r.Msg.(type) {
	case *game.BeamFire:
		hit.Ship = m.Target
	case *game.TorpedoFire:
		if h.rng.Intn(2) == 0 {
			return Hit{}, false // a miss
		}
		hit.Ship, hit.After = m.Target, h.jitter(torpedoFlight)
	case *game.CollisionEffect:
		hit.Ship = m.Target
	default:
		return Hit{}, false
	}
	if hit.Ship == 0 || !known(hit.Ship) {
		return Hit{}, false
	}
	return hit, true
}

// Repair is one subsystem on a ship's repair list.
type Repair struct {
	Ship, Subsystem game.ObjectID
	index           uint8
}

// Added is the host's announcement that r went on the list.
func (r Repair) Added() *game.PythonEvent {
	return &game.PythonEvent{Op: game.OpPythonEvent, Event: game.Event{Class: game.EventClassSubsystem,
		Code: game.ETAddToRepairList, Source: r.Subsystem, Dest: r.Ship}}
}

// Completed is the host's announcement that r is repaired.
func (r Repair) Completed() *game.PythonEvent {
	return &game.PythonEvent{Op: game.OpPythonEvent, Event: game.Event{Class: game.EventClassSubsystem,
		Code: game.ETRepairCompleted, Source: r.Subsystem, Dest: r.Ship}}
}

// Damage applies a hit to ship when it lands: one of its subsystems, drawn
// at random, goes on its repair list. False when that subsystem is on the
// list already: the stock repair list rejects duplicates and nothing is
// announced. Otherwise broadcast r.Added() now, and r.Completed() after
// RepairTime, calling Repaired then.
func (h *HostDamage) Damage(ship game.ObjectID) (Repair, bool) {
	idx := uint8(h.rng.Intn(repairSubsystems))
	if h.lists[ship]&(1<<idx) != 0 {
		return Repair{}, false
	}
	h.lists[ship] |= 1 << idx
	return Repair{Ship: ship, Subsystem: ship + game.ObjectID(subsystemBase+idx), index: idx}, true
}

// RepairTime draws how long after Damage the subsystem is repaired (see
// repairBase: not from any source). It is a call of its own so a caller
// can draw it after broadcasting Added, as the generator always has.
func (h *HostDamage) RepairTime() time.Duration {
	return repairBase + h.jitter(repairSpread)
}

// Repaired takes r off its ship's repair list and returns the
// REPAIR_COMPLETED event to broadcast (when the ship is still in play).
func (h *HostDamage) Repaired(r Repair) *game.PythonEvent {
	if l, ok := h.lists[r.Ship]; ok {
		if l &^= 1 << r.index; l == 0 {
			delete(h.lists, r.Ship)
		} else {
			h.lists[r.Ship] = l
		}
	}
	return r.Completed()
}

// Forget drops the repair list of a ship that left play.
func (h *HostDamage) Forget(ship game.ObjectID) { delete(h.lists, ship) }

// jitter is d give or take half of d.
func (h *HostDamage) jitter(d time.Duration) time.Duration {
	return d/2 + time.Duration(h.rng.Int63n(int64(d)+1))
}
