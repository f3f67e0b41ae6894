package game

import (
	"bytes"
	"encoding/json"
	"github.com/bcwire/bcwire/internal/fixture"
	"strings"
	"testing"
)

// stockSovereignCreateHex is the collision test's stock Sovereign
// ObjCreateTeam (../shared/vectors/stock-payloads.json, first entry), copied
// so that the tests run without ../shared.
const stockSovereignCreateHex = "03 00 02 08 80 00 00 FF FF FF 3F 05 00 00 18 42 00 00 44 C2 00 00 0C C2 52 93 45 3F " +
	"BB C9 22 BF E2 58 10 B3 25 8D 6C B2 00 00 00 00 00 00 00 05 43 61 64 79 32 06 4D 75 6C 74 69 31 " +
	"FF FF 64 FF FF FF FF FF FF FF 64 FF FF FF FF FF FF 64 FF FF FF FF FF FF FF 64 60 00 FF 64 FF FF FF " +
	"FF FF FF FF FF FF 64 01 FF FF FF FF FF 64 01 FF FF FF 64 FF"

// stockSovereignStatesHex is its 53 bytes after the set name.
const stockSovereignStatesHex = "FF FF 64 FF FF FF FF FF FF FF 64 FF FF FF FF FF FF 64 FF FF FF FF FF FF FF 64 60 00 " +
	"FF 64 FF FF FF FF FF FF FF FF FF 64 01 FF FF FF FF FF 64 01 FF FF FF 64 FF"

// The stock ObjCreateTeam's subsystem states decode as the Sovereign's
// eleven entries in list order, every byte accounted for, with no warning.
func TestObjCreateStockSovereignStates(t *testing.T) {
	msg := fixture.Unhex(t, stockSovereignCreateHex)
	res := lcDecodeClean(t, NewDecoder(), msg, ClientToServer)
	m := lcAs[*ObjCreate](t, res.Msg)
	if m.SubsystemData != nil || m.SubsystemsNote != "" || len(m.Subsystems) != 11 {
		t.Fatalf("not decoded: %s", m)
	}
	type want struct {
		name     string
		format   SubsystemFormat
		children int
		power    int    // -1: none
		extra    string // hex
	}
	wants := []want{
		{"Hull", SubsystemBase, 0, -1, ""},
		{"Shield Generator", SubsystemShield, 0, 100, ""},
		{"Sensor Array", SubsystemPowered, 0, 100, ""},
		{"Warp Core", SubsystemPower, 0, -1, ""},
		{"Impulse Engines", SubsystemPowered, 2, 100, ""},
		{"Torpedoes", SubsystemPowered, 6, 100, "60 00"},
		{"Repair", SubsystemPowered, 0, 100, ""},
		{"Phasers", SubsystemPowered, 8, 100, "01"},
		{"Tractors", SubsystemPowered, 4, 100, "01"},
		{"Warp Engines", SubsystemPowered, 2, 100, ""},
		{"Bridge", SubsystemBase, 0, -1, ""},
	}
	for i, w := range wants {
		s := &m.Subsystems[i]
		lcWant(t, "index", s.Index, i)
		lcWant(t, "name", s.Name, w.name)
		lcWant(t, w.name+" format", s.Format, w.format)
		lcWant(t, w.name+" condition", s.Condition, uint8(0xFF))
		lcWant(t, w.name+" children", len(s.Children), w.children)
		for _, c := range s.Children {
			lcWant(t, w.name+" child", c, uint8(0xFF))
		}
		lcWant(t, w.name+" has power", s.HasPower, w.power >= 0)
		if w.power >= 0 {
			lcWant(t, w.name+" power", int(s.Power), w.power)
			lcWant(t, w.name+" off", s.Off, false)
		}
		lcWant(t, w.name+" extra", string(s.Extra), string(fixture.Unhex(t, w.extra)))
	}
	lcWant(t, "facings", string(m.Subsystems[1].Facings), string(fixture.Unhex(t, "FF FF FF FF FF FF")))
	lcWant(t, "main battery", m.Subsystems[3].MainBattery, uint8(0xFF))
	lcWant(t, "backup battery", m.Subsystems[3].BackupBattery, uint8(0xFF))
	lcWant(t, "child name", m.Subsystems[7].ChildNames[0], "Ventral Phaser 3")
	lcWant(t, "summary", m.SubsystemSummary(), "11 subsystems, all full")

	if got := m.Append(nil); !bytes.Equal(got, msg) {
		t.Errorf("re-encoded\n% X\nwant\n% X", got, msg)
	}
	text := m.String()
	for _, want := range []string{`"Shield Generator"=255 power=100 facings=255/255/255/255/255/255`,
		`"Torpedoes"=255(255,255,255,255,255,255) power=100 extra=60 00`, `"Warp Core"=255 battery=255/255`} {
		if !strings.Contains(text, want) {
			t.Errorf("text lacks %s: %s", want, text)
		}
	}
	j, _ := json.Marshal(m)
	for _, want := range []string{`"subsystems":[{"index":0,"name":"Hull","format":"base","condition":255,"fraction":1}`,
		`"format":"shield","condition":255,"fraction":1,"has_power":true,"power":100,"facings":[255,255,255,255,255,255]`,
		`{"name":"Aft Torpedo 2","condition":255}],"has_power":true,"power":100,"extra":"6000"}`} {
		if !strings.Contains(string(j), want) {
			t.Errorf("json lacks %s: %s", want, j)
		}
	}
	if strings.Contains(string(j), "subsystem_data") {
		t.Errorf("json keeps the bytes too: %s", j)
	}

	// A stock Sovereign at spawn is what the encoder writes for full health.
	b, ok := ShipByName("Sovereign").AppendCreateStates(nil, nil)
	if !ok || !bytes.Equal(b, fixture.Unhex(t, stockSovereignStatesHex)) {
		t.Errorf("AppendCreateStates = % X, %v", b, ok)
	}
}

// The create form's power byte is signed: zero or negative is off, the
// magnitude the percentage wanted.
func TestObjCreateStatesPowerOff(t *testing.T) {
	sov := ShipByName("Sovereign")
	vals := sov.FullHealth()
	vals[2].Condition, vals[2].Power = 0x80, 50 // Sensor Array
	b, _ := sov.AppendCreateStates(nil, vals)
	b[len(fixture.Unhex(t, "FF FF 64 FF FF FF FF FF FF 80"))] = uint8(0x100 - 50) // -50: off, 50% wanted
	states, why := createStates(nil, b, sov)
	if states == nil {
		t.Fatal(why)
	}
	s := states[2]
	if s.Condition != 0x80 || !s.Off || s.Power != 50 || !strings.Contains(string(s.appendString(nil)), "power=off/50") {
		t.Errorf("sensor state %+v", s)
	}
	// The condition as a fraction of full health, in JSON.
	if j := string(s.AppendJSON(nil)); !strings.Contains(j, `"condition":128,"fraction":0.502,`) || !strings.Contains(j, `"power":50,"off":true`) {
		t.Errorf("sensor json %s", j)
	}
	m := &ObjCreate{HasTeam: true, Class: ClassShip, Species: 5, Subsystems: states}
	res := lcDecodeClean(t, NewDecoder(), m.Append(nil), ServerToClient)
	if got := lcAs[*ObjCreate](t, res.Msg); len(got.Subsystems) != 11 || !got.Subsystems[2].Off {
		t.Errorf("round trip: %s", got)
	}
	// Zero is off too.
	b[len(fixture.Unhex(t, "FF FF 64 FF FF FF FF FF FF 80"))] = 0
	if states, _ := createStates(nil, b, sov); !states[2].Off || states[2].Power != 0 {
		t.Errorf("zero power byte: %+v", states[2])
	}
}

// Bytes that do not fit stay bytes, with the reason; a class whose create
// form no stock bytes show is not guessed at.
func TestObjCreateStatesUndecoded(t *testing.T) {
	sov := ShipByName("Sovereign")
	full := fixture.Unhex(t, stockSovereignStatesHex)
	for _, c := range []struct {
		b    []byte
		spec *ShipSpec
		why  string
	}{
		{full[:52], sov, "the bytes end inside the state of Bridge (entry 10 of the Sovereign list)"},
		{append(full[:53:53], 0xFF), sov, "1 bytes follow the last entry of the Sovereign list"},
		{full, ShipByName("Marauder"), "no stock bytes show the ObjCreate state of Plasma Emitters (a pulse weapon system)"},
		{full, ShipByName("KessokLight"), "no stock bytes show the ObjCreate state of Cloaking Device (a cloaking device)"},
	} {
		if states, why := createStates(nil, c.b, c.spec); states != nil || why != c.why {
			t.Errorf("%s, %d bytes: %q, want %q", c.spec.Name, len(c.b), why, c.why)
		}
	}
	// In a message: the note, and a warning only where the class has a
	// known create form that the bytes miss.
	m := &ObjCreate{HasTeam: true, Class: ClassShip, Species: 9, SubsystemData: full}
	res := lcCheck(t, NewDecoder(), m.Append(nil), ServerToClient)
	if got := lcAs[*ObjCreate](t, res.Msg); res.Warning != "" || !strings.Contains(got.String(), "(undecoded: no stock bytes") {
		t.Errorf("Marauder: warning %q, %s", res.Warning, got)
	}
	m.Species = 5
	m.SubsystemData = full[:40]
	res = lcCheck(t, NewDecoder(), m.Append(nil), ServerToClient)
	if !strings.Contains(res.Warning, "do not fit the stock ObjCreate form of the Sovereign list") {
		t.Errorf("short Sovereign: warning %q", res.Warning)
	}
	// A station: no list known.
	m.Species = 30
	res = lcCheck(t, NewDecoder(), m.Append(nil), ServerToClient)
	if got := lcAs[*ObjCreate](t, res.Msg); res.Warning != "" || got.SubsystemsNote != "no subsystem list is known for species FEDSTARBASE" {
		t.Errorf("station: warning %q, note %q", res.Warning, got.SubsystemsNote)
	}
}

// Every class with a known create form round-trips its full-health states.
func TestAppendCreateStatesRoundTrip(t *testing.T) {
	for _, spec := range StockShips() {
		b, ok := spec.AppendCreateStates(nil, nil)
		_, known := createFormKnown(spec)
		if ok != known {
			t.Fatalf("%s: ok %v, known %v", spec.Name, ok, known)
		}
		if !ok {
			continue
		}
		states, why := createStates(nil, b, spec)
		if states == nil {
			t.Fatalf("%s: %s", spec.Name, why)
		}
		m := &ObjCreate{HasTeam: true, Class: ClassShip, Species: spec.Species, Subsystems: states}
		res := lcDecodeClean(t, NewDecoder(), m.Append(nil), ServerToClient)
		if got := lcAs[*ObjCreate](t, res.Msg); len(got.Subsystems) != len(spec.Subsystems) {
			t.Errorf("%s: %s", spec.Name, got)
		}
	}
}

// FuzzObjCreateStates: any bytes after the set name decode or stay bytes,
// never panic, and decoded states re-encode to exactly the input.
func FuzzObjCreateStates(f *testing.F) {
	f.Add(uint8(5), fixture.Unhex(f, stockSovereignStatesHex))
	f.Add(uint8(1), []byte{0xFF, 0xFF, 0x9C})
	f.Add(uint8(9), []byte{})
	f.Fuzz(func(t *testing.T, species uint8, b []byte) {
		spec := ShipBySpecies(Species(species))
		if spec == nil {
			return
		}
		states, why := createStates(nil, b, spec)
		if states == nil {
			if why == "" {
				t.Fatal("no states and no reason")
			}
			return
		}
		m := &ObjCreate{Class: ClassShip, Species: spec.Species, Subsystems: states}
		full := m.Append(nil)
		if !bytes.HasSuffix(full, b) {
			t.Fatalf("re-encoded % X, want suffix % X", full, b)
		}
	})
}

var _ = addReal(realCase{
	name:   "ObjCreateTeam stock Sovereign spawn (collision test), subsystems by name",
	source: "../shared/vectors/stock-payloads.json (STBC-Dedicated-Server collision-trace-comparison.md)",
	dir:    ClientToServer,
	hex:    stockSovereignCreateHex,
	check: func(t *testing.T, m Message) {
		c := lcAs[*ObjCreate](t, m)
		lcWant(t, "subsystems", len(c.Subsystems), 11)
		lcWant(t, "summary", c.SubsystemSummary(), "11 subsystems, all full")
		lcWant(t, "warning", c.warning(), "")
	},
})

// OpenBC's server (a build of SandboxServers/OpenBC, its traffic captured on
// loopback while bcwire verify replayed duel.pcapng against it) writes a
// Nebula's states unlike stock in two ways: the shield generator as a lone
// condition byte, and a new bit group byte for a power bit after a group
// of fewer than five bits. Both decode by name, each deviation named, and
// re-encode to the same bytes. These bytes are evidence about OpenBC only.
func TestStateUpdateOpenBCForms(t *testing.T) {
	d := NewDecoder()
	d.Ships.Add(PlayerObjectID(0), ShipByName("Nebula"))
	for _, c := range []struct {
		start   uint8
		section string
		names   string
		groups  bool
	}{
		// To the ship's own player: Repair and Tractors share the group
		// 40; Bridge, Hull and the shield generator (one byte) come
		// between; the Sensor Array's bit opens the group 20.
		{8, "FF 40 FF FF FF FF FF FF FF 20", "Repair Tractors Bridge Hull Shield Generator Sensor Array", true},
		// To the other player: the Sensor Array's group 21 and power 64,
		// the Warp Core between, the Impulse Engines' own group 21.
		{0, "FF FF FF 21 64 FF FF FF FF FF FF 21 64", "Hull Shield Generator Sensor Array Warp Core Impulse Engines", true},
		// A batch whose only deviation is the shield generator's byte.
		{10, "FF FF FF", "Bridge Hull Shield Generator", false},
	} {
		msg := append(fixture.Unhex(t, "1C FF FF FF 3F 00 00 C8 41 20"), c.start)
		msg = append(msg, fixture.Unhex(t, c.section)...)
		res := lcCheck(t, d, msg, ServerToClient)
		u := lcAs[*StateUpdate](t, res.Msg)
		var names []string
		for _, s := range u.Subsystems {
			names = append(names, s.Name)
		}
		want := warnOpenBCShield
		if c.groups {
			want += "; " + warnOpenBCGroups
		}
		if res.Err != nil || u.SubsystemsUndecoded || strings.Join(names, " ") != c.names || res.Warning != want {
			t.Errorf("@%d: err %v, warning %q, %s", c.start, res.Err, res.Warning, u)
		}
		if got := u.Append(nil); !bytes.Equal(got, msg) {
			t.Errorf("@%d re-encoded % X, want % X", c.start, got, msg)
		}
	}
	// A stock batch is never read in OpenBC's form.
	d.Ships.Add(PlayerObjectID(0), ShipByName("Sovereign"))
	res := lcCheck(t, d, fixture.Unhex(t, "1C FF FF FF 3F 80 EC 04 42 20 00 FF FF 20 FF FF FF FF FF FF"), ServerToClient)
	if res.Warning != "" {
		t.Errorf("stock batch: warning %q", res.Warning)
	}
}
