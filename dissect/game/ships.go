package game

import (
	"fmt"
	"strconv"
	"strings"
)

// Species is the ship type byte of a serialized ship (ObjCreate 0x02/0x03):
// an index into the multiplayer scripts' SpeciesToShip table. 1-15 are the
// player-selectable ships, 16-45 non-player ships, stations and asteroids;
// anything from 46 up is a mod's ship that stock scripts cannot load.
type Species uint8

// Stock SpeciesToShip constants, in table order (MAX_SHIPS = 46).
var speciesNames = [...]string{
	"UNKNOWN", "AKIRA", "AMBASSADOR", "GALAXY", "NEBULA", "SOVEREIGN", "BIRDOFPREY", "VORCHA",
	"WARBIRD", "MARAUDER", "GALOR", "KELDON", "CARDHYBRID", "KESSOKHEAVY", "KESSOKLIGHT",
	"SHUTTLE", "CARDFREIGHTER", "FREIGHTER", "TRANSPORT", "SPACEFACILITY", "COMMARRAY",
	"COMMLIGHT", "DRYDOCK", "PROBE", "DECOY", "SUNBUSTER", "CARDOUTPOST", "CARDSTARBASE",
	"CARDSTATION", "FEDOUTPOST", "FEDSTARBASE", "ASTEROID", "ASTEROID1", "ASTEROID2",
	"ASTEROID3", "AMAGON", "BIRANUSTATION", "ENTERPRISE", "GERONIMO", "PEREGRINE",
	"ASTEROIDH1", "ASTEROIDH2", "ASTEROIDH3", "ESCAPEPOD", "KESSOKMINE", "BORGCUBE",
}

// MaxFlyableSpecies is the stock MAX_FLYABLE_SHIPS: species 1 to 15 can be
// chosen by players.
const MaxFlyableSpecies Species = 16

// Name returns the SpeciesToShip constant name, or "" beyond the stock table.
func (s Species) Name() string {
	if int(s) < len(speciesNames) {
		return speciesNames[s]
	}
	return ""
}

func (s Species) String() string {
	if n := s.Name(); n != "" {
		return n
	}
	return "species(" + strconv.Itoa(int(s)) + ")"
}

// MarshalJSON is AppendJSON for encoding/json.
func (s Species) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil), nil }

// SubsystemFormat is how a top-level subsystem writes its state into the
// StateUpdate (0x1C) subsystem round-robin. Every format starts with the
// subsystem's condition byte followed by one condition byte per child
// (individual phaser banks, torpedo tubes, engines, tractor projectors,
// which never have children of their own). What was settled on which
// stock bytes is written down in docs/protocol-notes.md.
type SubsystemFormat uint8

const (
	// SubsystemBase (hull, bridge): condition and children only.
	SubsystemBase SubsystemFormat = iota
	// SubsystemPowered (sensors, engines, weapon systems, tractors, cloak,
	// repair): then a packed bit, and the power percentage wanted (one
	// byte, 0-100; stock accepts up to 125) when the bit is set. The sender
	// sets the bit for every receiver except the ship's own player.
	SubsystemPowered
	// SubsystemPower (the reactor: warp core or power plant): then the
	// main and backup battery levels (one byte each, 255 = full), always.
	SubsystemPower
	// SubsystemShield (the shield generator): the powered format, then
	// six facing bytes, as the stock bytes in docs/protocol-notes.md
	// ("Subsystem states") settle. OpenBC's documents and server write the
	// generator as a base subsystem (its condition alone); the decoder
	// names that form as a deviation (see warnOpenBCShield).
	SubsystemShield
)

var subsystemFormatNames = [...]string{"base", "powered", "power", "shield"}

func (f SubsystemFormat) String() string {
	if int(f) < len(subsystemFormatNames) {
		return subsystemFormatNames[f]
	}
	return "format(" + strconv.Itoa(int(f)) + ")"
}

// MarshalText makes the JSON form the name ("powered").
func (f SubsystemFormat) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// ShieldFacings is the number of facing bytes the shield generator writes
// after its power part.
const ShieldFacings = 6

// SubsystemKind is what a top-level subsystem is, where its kind changes
// its ObjCreate (0x02/0x03) state: the weapon systems write bytes after
// their power byte there (but not in StateUpdate).
type SubsystemKind uint8

const (
	KindOther SubsystemKind = iota
	// KindBeams: a phaser-type beam system (Phasers, Compressors, Beams,
	// Positron Beams, Disruptor Beams).
	KindBeams
	KindTorpedoes
	KindTractors
	// KindPulse: a pulse weapon system (Disruptor Cannons, Plasma Emitters).
	KindPulse
	KindCloak
)

// createExtra is the number of bytes a subsystem of kind k writes after
// its power byte in an ObjCreate ship body, from the stock Sovereign
// ObjCreateTeam of the collision test: the phasers write 01, the tractors
// 01, the torpedoes 60 00 (their meaning is not known). No stock bytes show
// a pulse weapon system's or a cloaking device's ObjCreate state: known is
// false for them, and a class that has one is not decoded.
func (k SubsystemKind) createExtra() (n int, known bool) {
	switch k {
	case KindOther:
		return 0, true
	case KindBeams, KindTractors:
		return 1, true
	case KindTorpedoes:
		return 2, true
	}
	return 0, false
}

var subsystemKindNames = [...]string{"other", "beam weapon system", "torpedo system", "tractor system",
	"pulse weapon system", "cloaking device"}

func (k SubsystemKind) String() string {
	if int(k) < len(subsystemKindNames) {
		return subsystemKindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// SubsystemSpec is one entry of a ship class's top-level subsystem list.
type SubsystemSpec struct {
	Name   string          `json:"name"`
	Format SubsystemFormat `json:"format"`
	Kind   SubsystemKind   `json:"-"`
	// Children are the child subsystems' names in the order their
	// condition bytes follow the parent's.
	Children []string `json:"children,omitempty"`
}

// stateLen is the number of bytes the entry's state takes in a StateUpdate
// when the power bit needs no new group byte: condition, children, then the
// power byte (powered, when sent), the two battery bytes (power), or the
// power byte and the facings (shield).
func (s *SubsystemSpec) stateLen(withPower bool) int {
	n := 1 + len(s.Children)
	switch s.Format {
	case SubsystemPowered, SubsystemShield:
		if withPower {
			n++
		}
		if s.Format == SubsystemShield {
			n += ShieldFacings
		}
	case SubsystemPower:
		n += 2
	}
	return n
}

// ShipSpec is one stock ship class as the network code sees it.
type ShipSpec struct {
	// Name is the ship's script name ("Sovereign", "BirdOfPrey").
	Name string `json:"name"`
	// Species is the SpeciesToShip index that ObjCreate carries.
	Species Species `json:"species"`
	// AppSpecies is the species number the ship's hardpoint script gives
	// it (App.SPECIES_*: 1xx Federation, 2xx Cardassian, 3xx Romulan, 4xx
	// Klingon, 5xx Kessok, 6xx Ferengi). It does not travel on the wire.
	AppSpecies uint16 `json:"app_species"`
	Faction    string `json:"faction"`
	// Subsystems is the top-level serialization list in wire order: the
	// StateUpdate start index counts entries of this list. Children are not
	// entries; they travel inside their parent's state.
	Subsystems []SubsystemSpec `json:"subsystems"`
}

func (s *ShipSpec) String() string {
	if s == nil {
		return "unknown class"
	}
	return s.Name
}

// CycleLen is the number of bytes one full pass over the subsystem list
// takes, as sent to a player who does not own the ship (power bytes
// included, packed bit bytes not counted).
func (s *ShipSpec) CycleLen() int {
	n := 0
	for i := range s.Subsystems {
		n += s.Subsystems[i].stateLen(true)
	}
	return n
}

func ssBase(name string, children ...string) SubsystemSpec {
	return SubsystemSpec{Name: name, Format: SubsystemBase, Children: children}
}

func ssPowered(name string, children ...string) SubsystemSpec {
	return SubsystemSpec{Name: name, Format: SubsystemPowered, Children: children}
}

func ssPower(name string) SubsystemSpec {
	return SubsystemSpec{Name: name, Format: SubsystemPower}
}

func ssShield(name string) SubsystemSpec {
	return SubsystemSpec{Name: name, Format: SubsystemShield}
}

func ssKind(k SubsystemKind, name string, children []string) SubsystemSpec {
	return SubsystemSpec{Name: name, Format: SubsystemPowered, Kind: k, Children: children}
}

func ssBeams(name string, children ...string) SubsystemSpec { return ssKind(KindBeams, name, children) }
func ssTorpedoes(name string, children ...string) SubsystemSpec {
	return ssKind(KindTorpedoes, name, children)
}
func ssTractors(name string, children ...string) SubsystemSpec {
	return ssKind(KindTractors, name, children)
}
func ssPulse(name string, children ...string) SubsystemSpec { return ssKind(KindPulse, name, children) }
func ssCloak(name string) SubsystemSpec                     { return ssKind(KindCloak, name, nil) }

// The stock ships' top-level subsystem lists, as the vanilla 1.1 hardpoint
// scripts build them (facts from OpenBC's data/vanilla-1.1/ships/*/
// serialization.json and ship.json, re-expressed here). A list's order is
// the order the hardpoint script adds its systems; every ship has its own.
// Where stock bytes overrule those files: the shield generator is
// SubsystemShield, not base (see SubsystemShield); the weapon systems'
// kinds (ssBeams, ssTorpedoes, ssTractors, ssPulse, ssCloak) decide their
// ObjCreate bytes (createExtra). The stock Sovereign's ObjCreateTeam fits
// its list below entry for entry, which also confirms that list's order
// and child counts (docs/protocol-notes.md).
var sovereignSubsystems = []SubsystemSpec{
	ssBase("Hull"),
	ssShield("Shield Generator"),
	ssPowered("Sensor Array"),
	ssPower("Warp Core"),
	ssPowered("Impulse Engines", "Port Impulse", "Starboard Impulse"),
	ssTorpedoes("Torpedoes", "Forward Torpedo 1", "Forward Torpedo 2", "Forward Torpedo 3",
		"Forward Torpedo 4", "Aft Torpedo 1", "Aft Torpedo 2"),
	ssPowered("Repair"),
	ssBeams("Phasers", "Ventral Phaser 3", "Dorsal Phaser 2", "Dorsal Phaser 4", "Dorsal Phaser 1",
		"Dorsal Phaser 3", "Ventral Phaser 1", "Ventral Phaser 4", "Ventral Phaser 2"),
	ssTractors("Tractors", "Aft Tractor 1", "Aft Tractor 2", "Forward Tractor 1", "Forward Tractor 2"),
	ssPowered("Warp Engines", "Port Warp", "Starboard Warp"),
	ssBase("Bridge"),
}

var stockShips = []*ShipSpec{
	{Name: "Akira", Species: 1, AppSpecies: 103, Faction: "Federation", Subsystems: []SubsystemSpec{
		ssBase("Hull"),
		ssShield("Shield Generator"),
		ssPowered("Sensor Array"),
		ssPower("Warp Core"),
		ssPowered("Impulse Engines", "Port Impulse", "Starboard Impulse"),
		ssBeams("Phasers", "Ventral Phaser 1", "Ventral Phaser 2", "Ventral Phaser 3", "Ventral Phaser 4",
			"Dorsal Phaser 1", "Dorsal Phaser 2", "Dorsal Phaser 3", "Dorsal Phaser 4"),
		ssPowered("Warp Engines", "Port Warp", "Starboard Warp"),
		ssTorpedoes("Torpedoes", "Forward Torp 1", "Forward Torp 2", "Forward Torp 3", "Forward Torp 4",
			"Aft Torp 1", "Aft Torp 2"),
		ssPowered("Engineering"),
		ssTractors("Tractors", "Forward Tractor", "Aft Tractor"),
		ssBase("Bridge"),
	}},
	{Name: "Ambassador", Species: 2, AppSpecies: 104, Faction: "Federation", Subsystems: []SubsystemSpec{
		ssBase("Hull"),
		ssShield("Shield Generator"),
		ssPowered("Sensor Array"),
		ssPower("Warp Core"),
		ssPowered("Impulse Engines", "Port Impulse", "Starboard Impulse"),
		ssBeams("Phasers", "Ventral Phaser 1", "Ventral Phaser 2", "Ventral Phaser 3", "Dorsal Phaser 1",
			"Dorsal Phaser 2", "Dorsal Phaser 3", "Aft Phaser 1", "Aft Phaser 2"),
		ssPowered("Warp Engines", "Port Warp", "Starboard Warp"),
		ssTorpedoes("Torpedoes", "Forward Torpedo 1", "Forward Torpedo 2", "Aft Torpedo 1", "Aft Torpedo 2"),
		ssPowered("Engineering"),
		ssBase("Bridge"), // before Tractors, unlike the other Federation ships
		ssTractors("Tractors", "Forward Tractor", "Aft Tractor"),
	}},
	{Name: "Galaxy", Species: 3, AppSpecies: 101, Faction: "Federation", Subsystems: []SubsystemSpec{
		ssBase("Hull"),
		ssPower("Warp Core"),
		ssShield("Shield Generator"),
		ssPowered("Sensor Array"),
		ssTorpedoes("Torpedoes", "Forward Torpedo 1", "Forward Torpedo 2", "Forward Torpedo 3",
			"Forward Torpedo 4", "Aft Torpedo 1", "Aft Torpedo 2"),
		ssBeams("Phasers", "Ventral Phaser 3", "Dorsal Phaser 2", "Dorsal Phaser 4", "Dorsal Phaser 1",
			"Dorsal Phaser 3", "Ventral Phaser 1", "Ventral Phaser 4", "Ventral Phaser 2"),
		ssPowered("Impulse Engines", "Port Impulse", "Starboard Impulse", "Center Impulse"),
		ssPowered("Warp Engines", "Port Warp", "Starboard Warp"),
		ssTractors("Tractors", "Aft Tractor 1", "Aft Tractor 2", "Forward Tractor 1", "Forward Tractor 2"),
		ssBase("Bridge"),
		ssPowered("Engineering"),
	}},
	{Name: "Nebula", Species: 4, AppSpecies: 105, Faction: "Federation", Subsystems: []SubsystemSpec{
		ssBase("Hull"),
		ssShield("Shield Generator"),
		ssPowered("Sensor Array"),
		ssPower("Warp Core"),
		ssPowered("Impulse Engines", "Port Impulse", "Starboard Impulse"),
		ssBeams("Phasers", "Dorsal Phaser 1", "Dorsal Phaser 2", "Dorsal Phaser 3", "Dorsal Phaser 4",
			"Ventral Phaser 1", "Ventral Phaser 2", "Ventral Phaser 3", "Ventral Phaser 4"),
		ssPowered("Warp Engines", "Port Warp", "Starboard Warp"),
		ssTorpedoes("Torpedoes", "Forward Torp 1", "Forward Torp 2", "Forward Torp 3", "Forward Torp 4",
			"Aft Torp 1", "Aft Torp 2"),
		ssPowered("Repair"),
		ssTractors("Tractors", "Aft Tractor", "Forward Tractor"),
		ssBase("Bridge"),
	}},
	{Name: "Sovereign", Species: 5, AppSpecies: 102, Faction: "Federation", Subsystems: sovereignSubsystems},
	{Name: "BirdOfPrey", Species: 6, AppSpecies: 401, Faction: "Klingon", Subsystems: []SubsystemSpec{
		ssBase("Hull"),
		ssShield("Shield Generator"),
		ssPower("Warp Core"),
		ssPulse("Disruptor Cannons", "Port Cannon", "Star Cannon"),
		ssTorpedoes("Torpedoes", "Fwd Torpedo"),
		ssPowered("Impulse Engines", "Impulse Engine"),
		ssPowered("Warp Engines", "Port Warp", "Starboard Warp"),
		ssCloak("Cloaking Device"),
		ssPowered("Sensor Array"),
		ssPowered("Engineering"),
	}},
	{Name: "Vorcha", Species: 7, AppSpecies: 402, Faction: "Klingon", Subsystems: []SubsystemSpec{
		ssBase("Hull"),
		ssShield("Shield Generator"),
		ssPower("Warp Core"),
		ssBeams("Disruptor Beams", "Disruptor"),
		ssPulse("Disruptor Cannons", "Port Cannon", "Star Cannon"),
		ssTorpedoes("Torpedoes", "Fwd Torpedo 1", "Fwd Torpedo 2", "Aft Torpedo"),
		ssPowered("Impulse Engines", "Port Impulse", "Starboard Impulse"),
		ssPowered("Warp Engines", "Port Warp", "Starboard Warp"),
		ssCloak("Cloaking Device"),
		ssPowered("Sensor Array"),
		ssPowered("Repair System"),
		ssTractors("Tractors", "Aft Tractor", "Forward Tractor"),
	}},
	{Name: "Warbird", Species: 8, AppSpecies: 301, Faction: "Romulan", Subsystems: []SubsystemSpec{
		ssBase("Hull"),
		ssShield("Shield Generator"),
		ssPower("Power Plant"),
		ssBeams("Disruptor Beam", "Disruptor"),
		ssPulse("Disruptor Cannons", "Star Cannon 1", "Port Cannon 1", "Star Cannon 2", "Port Cannon 2"),
		ssTorpedoes("Torpedoes", "Forward Torpedo", "Aft Torpedo"),
		ssPowered("Impulse Engines", "Port Impulse", "Starboard Impulse"),
		ssPowered("Warp Engines", "Port Warp", "Starboard Warp"),
		ssCloak("Cloaking Device"),
		ssPowered("Sensor Array"),
		ssPowered("Engineering"),
		ssBase("Bridge"),
		ssTractors("Tractors", "Aft Tractor", "Forward Tractor"),
	}},
	{Name: "Marauder", Species: 9, AppSpecies: 601, Faction: "Ferengi", Subsystems: []SubsystemSpec{
		ssBase("Hull"),
		ssShield("Shield Generator"),
		ssPower("Warp Core"),
		ssBeams("Phasers", "Ventral Phaser"),
		ssPowered("Impulse Engines", "Port Impulse", "Starboard Impulse"),
		ssPowered("Warp Engines", "Star Warp", "Port Warp"),
		ssTractors("Tractors", "Forward Tractor", "Aft Tractor"),
		ssPowered("Sensor Array"),
		ssPowered("Repair Subsystem"),
		ssPulse("Plasma Emitters", "Port Emitter", "Star Emitter"),
	}},
	{Name: "Galor", Species: 10, AppSpecies: 201, Faction: "Cardassian", Subsystems: []SubsystemSpec{
		ssBase("Hull"),
		ssShield("Shield Generator"),
		ssPower("Warp Core"),
		ssBeams("Compressors", "Forward Beam", "Port Beam", "Star Beam", "Aft Beam"),
		ssTorpedoes("Torpedoes", "Forward Torpedo"),
		ssPowered("Impulse Engines", "Port Impulse", "Starboard Impulse"),
		ssPowered("Warp Engine", "Warp Engine 1"),
		ssPowered("Repair Subsystem"),
		ssPowered("Sensor Array"),
	}},
	{Name: "Keldon", Species: 11, AppSpecies: 202, Faction: "Cardassian", Subsystems: []SubsystemSpec{
		ssBase("Hull"),
		ssShield("Shield Generator"),
		ssPower("Warp Core"),
		ssBeams("Compressors", "Forward Beam", "Port Beam", "Star Beam", "Aft Beam"),
		ssTorpedoes("Torpedoes", "Forward Torpedo", "Aft Torpedo"),
		ssPowered("Impulse Engines", "Impulse 1", "Impulse 2", "Impulse 3", "Impulse 4"),
		ssPowered("Warp Engine", "Warp Engine 1"),
		ssPowered("Sensor Array"),
		ssPowered("Repair Subsystem"),
		ssTractors("Tractors", "Ventral Tractor", "Dorsal Tractor"),
	}},
	{Name: "CardHybrid", Species: 12, AppSpecies: 204, Faction: "Cardassian", Subsystems: []SubsystemSpec{
		ssBase("Hull"),
		ssPower("Warp Core"),
		ssTorpedoes("Torpedoes", "Torpedo 1", "Torpedo 2", "Aft Torpedo"),
		ssPowered("Repair System"),
		ssShield("Shield Generator"),
		ssPowered("Sensor Array"),
		ssPowered("Impulse Engines", "Port Impulse", "Starboard Impulse"),
		ssPowered("Warp Engines", "Port Warp", "Starboard Warp", "Center Warp"),
		ssBeams("Beams", "Forward Compressor", "Forward Beam 1", "Forward Beam 2", "Ventral Beam 1",
			"Ventral Beam 2", "Dorsal Beam 1", "Dorsal Beam 2"),
		ssPulse("Disruptor Cannons", "Cannon"),
		ssTractors("Tractors", "Forward Tractor", "Aft Tractor"),
	}},
	{Name: "KessokHeavy", Species: 13, AppSpecies: 501, Faction: "Kessok", Subsystems: []SubsystemSpec{
		ssBase("Hull"),
		ssPower("Warp Core"),
		ssPowered("Impulse Engines", "Port Impulse", "Starboard Impulse"),
		ssPowered("Warp Engines", "Port Warp", "Starboard Warp"),
		ssBeams("Positron Beams", "Forward Beam 1", "Forward Beam 2", "Ventral Beam 1", "Ventral Beam 2",
			"Dorsal Beam 1", "Dorsal Beam 2", "Forward Beam 3", "Forward Beam 4"),
		ssTorpedoes("Torpedoes", "Torpedo Tube 1", "Torpedo Tube 2"),
		ssPowered("Repair System"),
		ssShield("Shield Generator"),
		ssPowered("Sensor Array"),
		ssCloak("Cloaking Device"),
	}},
	{Name: "KessokLight", Species: 14, AppSpecies: 502, Faction: "Kessok", Subsystems: []SubsystemSpec{
		ssBase("Hull"),
		ssPower("Warp Core"),
		ssTorpedoes("Torpedoes", "Torpedo"),
		ssPowered("Repair System"),
		ssShield("Shield Generator"),
		ssPowered("Sensor Array"),
		ssPowered("Impulse Engines", "Port Impulse", "Starboard Impulse"),
		ssPowered("Warp Engines", "Port Warp", "Starboard Warp"),
		ssBeams("Beams", "Forward Beam 1", "Forward Beam 2", "Port Beam 1", "Port Beam 2",
			"Star Beam 1", "Star Beam 2", "Aft Beam 1", "Aft Beam 2"),
		ssCloak("Cloaking Device"),
	}},
	{Name: "Shuttle", Species: 15, AppSpecies: 106, Faction: "Federation", Subsystems: []SubsystemSpec{
		ssBase("Hull"),
		ssPowered("Impulse Engines", "Port Impulse", "Starboard Impulse"),
		ssPower("Warp Core"),
		ssPowered("Sensor Array"),
		ssShield("Shield Generator"),
		ssBeams("Phasers", "Phaser"),
		ssPowered("Repair"),
		ssPowered("Warp Engines", "Port Warp", "Starboard Warp"),
		ssTractors("Tractors", "Forward Tractor"),
	}},
	{Name: "CardFreighter", Species: 16, AppSpecies: 203, Faction: "Cardassian", Subsystems: []SubsystemSpec{
		ssBase("Hull"),
		ssPowered("Impulse Engines", "Port Impulse", "Starboard Impulse"),
		ssPowered("Warp Engines", "Warp Drive"),
		ssPowered("Engineering"),
		ssTractors("Tractors", "Tractor Beam"),
		ssPowered("Sensor Array"),
		ssShield("Shield Generator"),
		ssPower("Warp Core"),
	}},
	// The Enterprise is a Sovereign (kSpeciesTuple maps it to the
	// Sovereign's App species): same subsystem list, other capacities.
	{Name: "Enterprise", Species: 37, AppSpecies: 102, Faction: "Federation", Subsystems: sovereignSubsystems},
}

// shipsBySpecies indexes stockShips by Species.
var shipsBySpecies = func() (t [256]*ShipSpec) {
	for _, s := range stockShips {
		if t[s.Species] != nil {
			panic(fmt.Sprintf("game: species %d listed twice", s.Species))
		}
		t[s.Species] = s
	}
	return t
}()

// ShipBySpecies returns the stock ship class of species id, or nil when no
// stock ship with a known subsystem list has that species (stations,
// asteroids and mod ships).
func ShipBySpecies(id Species) *ShipSpec { return shipsBySpecies[id] }

// ShipByName returns the stock ship class whose script name is name
// (case-insensitive: "sovereign", "BirdOfPrey"), or nil.
func ShipByName(name string) *ShipSpec {
	for _, s := range stockShips {
		if strings.EqualFold(s.Name, name) {
			return s
		}
	}
	return nil
}

// StockShips lists every stock ship class this package knows, in species
// order. The specs are shared: callers must not modify them.
func StockShips() []*ShipSpec {
	return append([]*ShipSpec(nil), stockShips...)
}
