package native

import (
	"fmt"
	"math/rand"
	"time"

	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/server/stock"
)

// The host's damage announcements: stock.HostDamage, the policy the capture
// generator follows too. A client's BeamFire, TorpedoFire or
// CollisionEffect that hits a ship the host knows puts a subsystem of that
// ship on its repair list, and the host sends PythonEvent
// ADD_TO_REPAIR_LIST reliably to every client in the game, REPAIR_COMPLETED
// some seconds later (OpenBC
// docs/wire-formats/pythonevent-wire-format/05-three-producers.md). The
// server still simulates no health: its StateUpdates report every
// subsystem at full condition.

// damageSeed seeds the policy's randomness: which subsystem a hit damages,
// which torpedoes hit, repair times. Fixed, so the core stays free of
// clocks and a run is reproducible; nothing depends on it being secret.
const damageSeed = 0x0BC11

// maxTimers caps the pending timers: torpedo flights and repairs. A
// client that floods torpedoes past it gets no more damage announced until
// some land.
const maxTimers = 4096

// timer is host work due at a time, run by Tick.
type timer struct {
	at time.Time
	fn func(now time.Time)
}

// after runs fn at the first Tick at or after now+d.
func (s *Server) after(now time.Time, d time.Duration, fn func(now time.Time)) {
	s.timers = append(s.timers, timer{at: now.Add(d), fn: fn})
}

// runTimers runs the timers due at now, in the order they were set.
func (s *Server) runTimers(now time.Time) {
	due := s.timers[:0:0]
	keep := s.timers[:0]
	for _, t := range s.timers {
		if now.Before(t.at) {
			keep = append(keep, t)
		} else {
			due = append(due, t)
		}
	}
	s.timers = keep
	for _, t := range due {
		t.fn(now)
	}
}

// hit is the host learning of a hit from p's game message as it arrives.
func (s *Server) hit(now time.Time, payload []byte) {
	if !s.match.CollisionDamage && len(payload) > 0 && game.Opcode(payload[0]) == game.OpCollisionEffect {
		return // collisions do no damage in this match, so nothing goes on a repair list
	}
	h, ok := s.damages.Hit(payload, func(id game.ObjectID) bool { return s.ships[id] != nil })
	if !ok {
		return
	}
	if h.After == 0 {
		s.damage(now, h.Ship)
		return
	}
	if len(s.timers) >= maxTimers {
		return
	}
	s.after(now, h.After, func(now time.Time) { s.damage(now, h.Ship) })
}

// damage applies a hit that lands on ship: ADD_TO_REPAIR_LIST to every
// client in the game now, REPAIR_COMPLETED when the repair is done, if
// the ship is still in play.
func (s *Server) damage(now time.Time, ship game.ObjectID) {
	sh := s.ships[ship]
	if sh == nil {
		return // gone since the hit
	}
	r, ok := s.damages.Damage(ship)
	if !ok {
		return
	}
	n := s.broadcast(r.Added())
	s.log.Debug("subsystem damaged", "object", fmt.Sprintf("0x%08X", uint32(ship)), "subsystem", fmt.Sprintf("0x%08X", uint32(r.Subsystem)), "players", n)
	s.after(now, s.damages.RepairTime(), func(time.Time) {
		done := s.damages.Repaired(r)
		if s.ships[ship] == sh { // not destroyed, nor replaced under its id
			s.broadcast(done)
		}
	})
}

func newDamages() *stock.HostDamage {
	return stock.NewHostDamage(rand.New(rand.NewSource(damageSeed)))
}
