package game

import (
	"encoding/json"
	"strings"
	"testing"
)

// The per-ship facts OpenBC's per-ship-subsystem-wire-format/04-summary-table.md
// and ship-subsystems/06 state: top-level entries, children, and bytes of a
// full cycle for a remote ship (counting each power bit as a byte).
func TestStockShipTables(t *testing.T) {
	want := []struct {
		name            string
		species         Species
		top, kids, cyc  int
		cloak, tractors bool
	}{
		{"Akira", 1, 11, 20, 47, false, true},
		{"Ambassador", 2, 11, 18, 45, false, true},
		{"Galaxy", 3, 11, 23, 50, false, true},
		{"Nebula", 4, 11, 20, 47, false, true},
		{"Sovereign", 5, 11, 22, 49, false, true},
		{"BirdOfPrey", 6, 10, 6, 32, true, false},
		{"Vorcha", 7, 12, 12, 44, true, true},
		{"Warbird", 8, 13, 13, 46, true, true},
		{"Marauder", 9, 10, 9, 35, false, true},
		{"Galor", 10, 9, 8, 31, false, false},
		{"Keldon", 11, 10, 13, 39, false, true},
		{"CardHybrid", 12, 11, 18, 47, false, true},
		{"KessokHeavy", 13, 10, 14, 40, true, false},
		{"KessokLight", 14, 10, 13, 39, true, false},
		{"Shuttle", 15, 9, 6, 29, false, true},
		{"CardFreighter", 16, 8, 4, 24, false, true},
		{"Enterprise", 37, 11, 22, 49, false, true},
	}
	if got := len(StockShips()); got != len(want) {
		t.Fatalf("%d stock ships, want %d", got, len(want))
	}
	for _, w := range want {
		s := ShipBySpecies(w.species)
		if s == nil || s.Name != w.name || ShipByName(strings.ToLower(w.name)) != s {
			t.Fatalf("species %d: %v", w.species, s)
		}
		kids, poweredN, reactors, cloak, tractors := 0, 0, 0, false, false
		for _, e := range s.Subsystems {
			kids += len(e.Children)
			switch e.Format {
			case SubsystemPowered:
				poweredN++
			case SubsystemPower:
				reactors++
				if len(e.Children) > 0 {
					t.Errorf("%s: reactor with children", w.name)
				}
			}
			cloak = cloak || e.Name == "Cloaking Device"
			tractors = tractors || e.Name == "Tractors" || e.Name == "Tractor Beam"
		}
		lcWant(t, w.name+" top-level", len(s.Subsystems), w.top)
		lcWant(t, w.name+" children", kids, w.kids)
		// OpenBC's table counts the shield generator's condition alone;
		// stock adds its power byte and six facing bytes.
		lcWant(t, w.name+" cycle bytes", s.CycleLen()+poweredN, w.cyc+1+ShieldFacings)
		lcWant(t, w.name+" reactors", reactors, 1)
		lcWant(t, w.name+" cloak", cloak, w.cloak)
		lcWant(t, w.name+" tractors", tractors, w.tractors)
		lcWant(t, w.name+" hull first", s.Subsystems[0].Name, "Hull")
	}
	// Two of the lists differ from their neighbours in telling places.
	lcWant(t, "Ambassador 9", ShipByName("Ambassador").Subsystems[9].Name, "Bridge")
	lcWant(t, "Galaxy 1", ShipByName("Galaxy").Subsystems[1].Name, "Warp Core")
	lcWant(t, "Warbird reactor", ShipByName("Warbird").Subsystems[2].Name, "Power Plant")
	lcWant(t, "AppSpecies", ShipByName("Sovereign").AppSpecies, uint16(102))

	if ShipBySpecies(0) != nil || ShipBySpecies(31) != nil || ShipBySpecies(46) != nil || ShipByName("Borg") != nil {
		t.Fatal("a ship without a known subsystem list")
	}
	// StockShips returns a copy of the list.
	l := StockShips()
	l[0] = nil
	if StockShips()[0] == nil {
		t.Fatal("StockShips shares its slice")
	}
	lcWant(t, "species name", Species(45).String(), "BORGCUBE")
	lcWant(t, "mod species", Species(46).String(), "species(46)")
	j, err := json.Marshal(ShipByName("BirdOfPrey"))
	if err != nil || !strings.Contains(string(j), `"format":"powered","children":["Port Cannon","Star Cannon"]`) {
		t.Fatalf("json %s %v", j, err)
	}
}
