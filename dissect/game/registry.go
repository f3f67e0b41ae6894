package game

// ShipRegistry remembers the ship class of each object id seen in an
// ObjCreate/ObjCreateTeam, so StateUpdate subsystem bytes can be decoded by
// name. It holds at most maxShips entries; the oldest is forgotten first, so
// hostile input cannot grow it without bound.
type ShipRegistry struct {
	byID  map[ObjectID]*ShipSpec
	order []ObjectID // insertion ring, for eviction
	next  int
	// players mirrors byID for the players' ships (each slot's first
	// object id), the objects nearly every StateUpdate is about, so that
	// looking them up is an array read rather than a map access.
	players [maxPlayerSlots]*ShipSpec
}

const maxShips = 4096

func (s *ShipRegistry) init() {
	s.byID = make(map[ObjectID]*ShipSpec)
}

// Lookup returns the ship class of id, or nil when unknown.
func (s *ShipRegistry) Lookup(id ObjectID) *ShipSpec {
	if s == nil || s.byID == nil {
		return nil
	}
	if slot, ok := playerShipSlot(id); ok {
		return s.players[slot]
	}
	return s.byID[id]
}

// playerShipSlot reports whether id is the first object id of a player
// slot (that player's ship), and which slot.
func playerShipSlot(id ObjectID) (int, bool) {
	slot := id.Slot()
	return slot, slot >= 0 && id == PlayerObjectID(slot)
}

// Add records that id is a ship of class spec.
func (s *ShipRegistry) Add(id ObjectID, spec *ShipSpec) {
	if s.byID == nil {
		s.init()
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
	s.byID[id] = spec
	if slot, ok := playerShipSlot(id); ok {
		s.players[slot] = spec
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
