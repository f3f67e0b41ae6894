package measure

import (
	"time"

	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/internal/wallclock"
)

// A laneSet is one ship's StateUpdates one way on one client's flow
// (Builder.ships holds the laneSets, by shipKey): a lane per family, by
// slotOf: every update's and the 0x20-bearing ones' first, in the cache
// line of the common families' (0x0x-0x5x).
type laneSet [18]*Lane

// Indexes in a laneSet: every update's lane, the 0x20-bearing ones', and
// family f's (slotOf).
const (
	slotAll        = 0
	slotSubsystems = 1
)

func slotOf(f Family) int { return int(f) + 2 }

// Pseudo families: every update of the lane, and the updates carrying
// subsystems (0x20 set: 0x2x, 0x3x, 0x6x, ...), the stream the published
// downstream cadence is of.
const (
	familyAll        = 16
	familySubsystems = 17
)

// Names of the pseudo families.
const (
	FamilyAll        = "all"
	FamilySubsystems = "0x20-bearing"
)

// shipSlot is an object's entry in clientState.ships: player ships' ids
// differ in their owner's slot, from bit 18 on.
func shipSlot(obj game.ObjectID) int { return int(obj>>18^obj) & 7 }

// shipSet is a ship's lane set, with the object it is of, and its
// family lane f when its last update was of family fam and each of its
// lanes counted it (f, every update's and, when fam carries subsystems,
// the 0x20-bearing one: lanes returns them): an update of the same
// family next has one interval for all of them, counted in f's shared
// window (f nil: no such lanes). What such an update changes is kept
// here, in the flow's cache lines, until sync gives it to the lanes:
// the n updates since, the last one's time, the sum of their intervals
// and, in win (f.sh.win, from lo), their buckets. (64 bytes, in the
// order the updates read them. n counts as far as the window's buckets
// do, 2^32.)
type shipSet struct {
	obj  game.ObjectID
	n    uint32
	lo   uint32
	fam  Family
	f    *Lane
	last wallclock.Time
	win  *[winSize]uint32
	sum  time.Duration
	set  *laneSet
}

// lanes is the every-update and, when fam carries subsystems, the
// 0x20-bearing lane (else nil) of the ship, which count f's updates.
func (r *shipSet) lanes() (a, s *Lane) {
	if r.fam<<4&Family(game.StateSubsystems) != 0 {
		s = r.set[slotSubsystems]
	}
	return r.set[slotAll], s
}

// sync gives the ship's lanes the updates counted here: their count and
// last time, and to f's shared window their count and sum.
func (r *shipSet) sync() {
	if r.f == nil || r.n == 0 {
		return
	}
	n, f := int(r.n), r.f
	f.updates += n
	f.last = r.last
	f.sh.cnt += n
	f.sh.sum += r.sum
	a, s := r.lanes()
	a.updates += n
	a.last = r.last
	if s != nil {
		s.updates += n
		s.last = r.last
	}
	r.n, r.sum = 0, 0
}

// far counts an update of the ship's fast path (Add) whose interval iv
// its window does not take: f's shared window starts there when it has
// none, else each lane counts the interval apart.
func (r *shipSet) far(iv time.Duration, now wallclock.Time) {
	r.sync()
	f := r.f
	a, s := r.lanes()
	f.updates++
	a.updates++
	f.last, a.last, r.last = now, now, now
	if s != nil {
		s.updates++
		s.last = now
	}
	if f.sh.place(iv) {
		f.sh.addNear(iv)
		r.win, r.lo = f.sh.win, f.sh.lo
		return
	}
	f.iv.add(iv)
	a.iv.add(iv)
	if s != nil {
		s.iv.add(iv)
	}
}

// shipKey is a ship's laneSet's key in Builder.ships: the flow, the object
// and the direction index, mixed (a one-to-one mixing: keys stay
// distinct) so that the table's low bits spread.
func shipKey(cs *clientState, obj game.ObjectID, dir int) uint64 {
	k := (uint64(cs.id)<<32|uint64(obj))<<1 | uint64(dir)
	k *= 0x9E3779B97F4A7C15
	return k ^ k>>32
}

// stateUpdate counts a StateUpdate of direction d on flow cs in its
// ship's lanes (its family's, every update's and, when it carries
// subsystems, the 0x20-bearing one) when Add's fast path does not: the
// ship's last update was of another family, or is not at hand in recent.
// Each lane counts the update by its own last time, and recent notes the
// lanes for the next.
func (b *Builder) stateUpdate(recent *shipSet, cs *clientState, m *game.StateUpdate, d int, now wallclock.Time) {
	fam := FamilyOf(m.Flags)
	recent.sync()
	set := recent.set
	if set == nil || recent.obj != m.Object {
		if set = b.laneSet(cs, m, d); set == nil {
			b.famNoLane[d&1][fam&15]++
			return
		}
		*recent = shipSet{obj: m.Object, set: set}
	}
	b.eachLane(set, cs, m, d, now)
	f, a, s := set[slotOf(fam)], set[slotAll], (*Lane)(nil)
	if m.Flags&game.StateSubsystems != 0 {
		if s = set[slotSubsystems]; s == nil {
			f = nil // not kept: the next update's lanes are not all at hand
		}
	}
	if a == nil {
		f = nil
	}
	recent.fam, recent.f, recent.last = fam, f, now
	if f != nil {
		recent.win, recent.lo = f.sh.win, f.sh.lo
	}
}

// laneSet is the lane set of m's ship on flow cs in direction d, made on
// its first update (noting the object's id); nil, with the update's lanes
// counted as dropped, when maxLanes are kept.
func (b *Builder) laneSet(cs *clientState, m *game.StateUpdate, d int) *laneSet {
	k := shipKey(cs, m.Object, d)
	i := b.ships.find(k)
	set := b.ships.slots[i].v
	if set == nil && len(b.lanes) >= maxLanes {
		b.lanesDropped += 2 + int(m.Flags&game.StateSubsystems>>5)
		return nil
	}
	if set == nil {
		set = &laneSet{}
		b.ships.insert(i, k, set)
		b.id(m.Object)
	}
	return set
}

// eachLane counts an update in the lanes of its ship, each by its own
// last time, making those it has not yet.
func (b *Builder) eachLane(set *laneSet, cs *clientState, m *game.StateUpdate, d int, now wallclock.Time) {
	fam := FamilyOf(m.Flags)
	if l := set[slotOf(fam)]; l != nil {
		l.count(now)
	} else {
		b.newLane(&set[slotOf(fam)], cs, m.Object, d, int(fam), now)
		if set[slotOf(fam)] == nil {
			b.famNoLane[d&1][fam&15]++
		}
	}
	if l := set[slotAll]; l != nil {
		l.count(now)
	} else {
		b.newLane(&set[slotAll], cs, m.Object, d, familyAll, now)
	}
	if m.Flags&game.StateSubsystems == 0 {
		return
	}
	if l := set[slotSubsystems]; l != nil {
		l.count(now)
	} else {
		b.newLane(&set[slotSubsystems], cs, m.Object, d, familySubsystems, now)
	}
}

// count counts an update at t in the lane (not its first).
func (l *Lane) count(t wallclock.Time) {
	iv, ok := t.SubNear(l.last)
	if !ok {
		iv = t.Sub(l.last)
	}
	l.updates++
	l.last = t
	l.iv.count(iv)
}

// newLane makes the lane of *slot on its first update, or counts the
// update as dropped when maxLanes are kept.
func (b *Builder) newLane(slot **Lane, cs *clientState, obj game.ObjectID, d, fam int, t wallclock.Time) {
	if len(b.lanes) >= maxLanes {
		b.lanesDropped++
		return
	}
	name := Family(fam).String()
	switch fam {
	case familyAll:
		name = FamilyAll
	case familySubsystems:
		name = FamilySubsystems
	}
	l := &Lane{Object: obj, Dir: Dirs[d], Family: name, To: cs.key.client.String(), updates: 1, last: t, fam: uint8(fam), dir: uint8(d & 1)}
	*slot = l
	b.lanes = append(b.lanes, l)
}
