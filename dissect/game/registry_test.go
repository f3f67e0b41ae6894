package game

import "testing"

// TestShipRegistryEvictsPlayerShips checks the players' fast path against
// the map: lookups agree, a re-learnt class replaces the old one, and an
// evicted player ship is forgotten on both.
func TestShipRegistryEvictsPlayerShips(t *testing.T) {
	var s ShipRegistry
	akira, sov := ShipByName("Akira"), ShipByName("Sovereign")
	p3 := PlayerObjectID(3)
	s.Add(p3, akira)
	s.Add(p3+1, sov) // a later object of slot 3: not its ship
	s.Add(0x100, sov)
	for _, c := range []struct {
		id   ObjectID
		want *ShipSpec
	}{{p3, akira}, {p3 + 1, sov}, {0x100, sov}, {PlayerObjectID(4), nil}} {
		if got := s.Lookup(c.id); got != c.want {
			t.Errorf("Lookup(%v) = %v, want %v", c.id, got, c.want)
		}
	}
	s.Add(p3, sov)
	if got := s.Lookup(p3); got != sov {
		t.Fatalf("re-learnt player ship: %v", got)
	}
	for i := range maxShips {
		s.Add(ObjectID(0x1000+i), akira)
	}
	if got := s.Lookup(p3); got != nil {
		t.Fatalf("evicted player ship still found: %v", got)
	}
	if got := s.Lookup(ObjectID(0x1000 + maxShips - 1)); got != akira {
		t.Fatalf("newest entry: %v", got)
	}
}

// TestShipRegistryNilSpec: adding an id with a nil class makes it unknown,
// as it always did, rather than failing.
func TestShipRegistryNilSpec(t *testing.T) {
	var s ShipRegistry
	p1 := PlayerObjectID(1)
	s.Add(p1, ShipByName("Akira"))
	s.Add(p1, nil)
	s.Add(0x200, nil)
	if got := s.Lookup(p1); got != nil {
		t.Errorf("Lookup(player ship) = %v after adding nil", got)
	}
	if got := s.Lookup(0x200); got != nil {
		t.Errorf("Lookup(0x200) = %v", got)
	}
}
