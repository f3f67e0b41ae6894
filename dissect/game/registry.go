package game

import "github.com/bcwire/bcwire/internal/jsonenc"

// ShipRegistry remembers the ship class of each object id seen in an
// ObjCreate/ObjCreateTeam, so StateUpdate subsystem bytes can be decoded by
// name. It holds at most maxShips entries; the oldest is forgotten first, so
// hostile input cannot grow it without bound.
type ShipRegistry struct {
	byID  map[ObjectID]*shipClass
	order []ObjectID // insertion ring, for eviction
	next  int
	// players mirrors byID for the players' ships (each slot's first
	// object id), the objects nearly every StateUpdate is about, so that
	// looking them up is an array read rather than a map access.
	players [maxPlayerSlots]*shipClass
	// classes holds one shipClass per spec, shared by its ships.
	classes map[*ShipSpec]*shipClass
}

// shipClass is a ship class with what StateUpdate decoding needs of it
// worked out once, when a ship of the class is first added.
type shipClass struct {
	spec *ShipSpec
	// entries follow spec.Subsystems.
	entries []classEntry
}

// classEntry is one entry of a class's subsystem list, ready for
// statesByClass.
type classEntry struct {
	// state is the entry's SubsystemState with what the class gives set
	// (Index, Name, Format, ChildNames) and the rest zero, so that the
	// decoder copies it in one go and adds what the bytes say.
	state SubsystemState
	// next is the entry after this one, the first after the last: the
	// decoder follows the round-robin without an index to wrap.
	next *classEntry
}

func newShipClass(spec *ShipSpec) *shipClass {
	n := len(spec.Subsystems)
	c := &shipClass{spec: spec, entries: make([]classEntry, n)}
	classMember := string(jsonenc.String([]byte(`,"class":`), spec.Name)) + `,"subsystems":[`
	for i := range spec.Subsystems {
		sp := &spec.Subsystems[i]
		forms := newSubsystemForms(i, sp)
		forms.class, forms.className, forms.classMember = spec, spec.Name, classMember
		c.entries[i] = classEntry{
			state: SubsystemState{Index: i, Name: sp.Name, Format: sp.Format, ChildNames: sp.Children, forms: forms},
			next:  &c.entries[(i+1)%n],
		}
	}
	return c
}

const maxShips = 4096

func (s *ShipRegistry) init() {
	s.byID = make(map[ObjectID]*shipClass)
	s.classes = make(map[*ShipSpec]*shipClass)
}

// Lookup returns the ship class of id, or nil when unknown.
func (s *ShipRegistry) Lookup(id ObjectID) *ShipSpec {
	if c := s.lookupClass(id); c != nil {
		return c.spec
	}
	return nil
}

// lookupClass is Lookup with the class's precomputed states. It is small
// enough to be inlined: players' ships, the usual case, take no call.
func (s *ShipRegistry) lookupClass(id ObjectID) *shipClass {
	if s == nil {
		return nil
	}
	// playerShipSlot, unsigned: ids below the first player's wrap round
	// to a slot past the last.
	if k := uint32(id) - firstPlayerID; k%idsPerPlayer == 0 && k/idsPerPlayer < maxPlayerSlots {
		return s.players[k/idsPerPlayer]
	}
	return s.lookupOther(id)
}

// lookupOther is lookupClass for an id that is not a player's ship.
func (s *ShipRegistry) lookupOther(id ObjectID) *shipClass { return s.byID[id] }

// playerShipSlot reports whether id is the first object id of a player
// slot (that player's ship), and which slot.
func playerShipSlot(id ObjectID) (int, bool) {
	slot := id.Slot()
	return slot, slot >= 0 && id == PlayerObjectID(slot)
}

// Add records that id is a ship of class spec. The registry works out
// what decoding needs of spec the first time it sees it, so spec must not
// change afterwards.
func (s *ShipRegistry) Add(id ObjectID, spec *ShipSpec) {
	if s.byID == nil {
		s.init()
	}
	c := s.classes[spec]
	if c == nil && spec != nil { // a nil spec records the id as unknown
		if len(s.classes) >= maxShips {
			// Only a cache: ships keep their own pointers. Stock
			// decoding has a few dozen specs; this bounds other callers.
			clear(s.classes)
		}
		c = newShipClass(spec)
		s.classes[spec] = c
	}
	if _, ok := s.byID[id]; !ok {
		if len(s.order) < maxShips {
			s.order = append(s.order, id)
		} else {
			old := s.order[s.next]
			delete(s.byID, old)
			if slot, ok := playerShipSlot(old); ok {
				s.players[slot] = nil
			}
			s.order[s.next] = id
			s.next = (s.next + 1) % maxShips
		}
	}
	s.byID[id] = c
	if slot, ok := playerShipSlot(id); ok {
		s.players[slot] = c
	}
}

// shipCreator is implemented by messages that create a ship.
type shipCreator interface {
	createdShip() (ObjectID, *ShipSpec)
}

func (s *ShipRegistry) learn(m Message) {
	if c, ok := m.(shipCreator); ok {
		if id, spec := c.createdShip(); spec != nil {
			s.Add(id, spec)
		}
	}
}
