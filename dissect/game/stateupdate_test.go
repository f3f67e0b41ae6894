package game

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/internal/fixture"
)

// The stock client StateUpdate of OpenBC's example 1: Akira 0x3FFFFFFF just
// spawned at (88, -66, -73), the position ObjCreateTeam example 1 gives it.
const stateUpdateClientHex = "1C FF FF FF 3F 00 80 E1 41 9D 00 00 B0 42 00 00 84 C2 00 00 92 C2 21 37 FB 0B 68 46 30 BB 5E 00 00 01 CC 02 CC 04 CC"

var _ = addReal(realCase{
	name:   "StateUpdate client 0x9D position+hash+orientation+speed+weapons",
	source: "OpenBC docs/wire-formats/stateupdate-wire-format/14-decoded-packet-examples.md, Example 1",
	dir:    ClientToServer,
	hex:    stateUpdateClientHex,
	check: func(t *testing.T, m Message) {
		u := lcAs[*StateUpdate](t, m)
		lcWant(t, "object", u.Object, PlayerObjectID(0))
		lcNear(t, "game time", float64(u.GameTime), 28.19, 0.005)
		lcWant(t, "flags", u.Flags, StatePosition|StateForward|StateUp|StateSpeed|StateWeapons)
		lcWant(t, "position", u.Position, dissect.Vec3{X: 88, Y: -66, Z: -73})
		lcWant(t, "has hash", u.HasHash, true)
		lcWant(t, "hash", u.Hash, uint16(0xFB37))
		fwd, up := u.Forward.Vec(), u.Up.Vec()
		lcNear(t, "forward x", float64(fwd.X), 0.09, 0.005)
		lcNear(t, "forward y", float64(fwd.Y), 0.82, 0.005)
		lcNear(t, "forward z", float64(fwd.Z), 0.55, 0.005)
		lcNear(t, "up x", float64(up.X), 0.38, 0.005)
		lcNear(t, "up y", float64(up.Y), -0.54, 0.005)
		lcNear(t, "up z", float64(up.Z), 0.74, 0.005)
		lcWant(t, "speed", u.Speed.Float(), 0)
		want := []WeaponHealth{{1, 0xCC}, {2, 0xCC}, {4, 0xCC}}
		if !reflect.DeepEqual(u.Weapons, want) {
			t.Errorf("weapons %v, want %v", u.Weapons, want)
		}
		lcWant(t, "warning", u.warning(), "")
	},
})

// OpenBC's example 2 quotes 25 bytes (and a 30-byte transport frame, which
// fits 25) but calls the message a "20-byte game payload"; its own field
// list has 13 health bytes, the hex 14. The bytes decide for 25: they are
// exactly one stock round-robin batch of an Akira (the class ObjCreateTeam
// example 1 gives 0x3FFFFFFF, at the position StateUpdate example 1 has) as
// its own player gets it, from list entry 8: Engineering, Tractors (two
// children), Bridge, Hull, and the Shield Generator in its stock form
// (condition, power bit, six facing bytes), the three power bits (all
// clear: no power bytes) sharing the group byte 0x60, written where the
// first of them is. The batch passes the 10-byte budget only with the
// shield's state, as a stock batch must. The first 20 bytes fit an Akira
// only in OpenBC's form (shield generator as a lone condition byte, then
// the Sensor Array): TestStateUpdateRealSubsystemsByName decodes both. The
// doc's reading of 0x60 as "subsystem 9 at 38%" is wrong: it is the bit
// group byte.
const stateUpdateServerHex = "1C FF FF FF 3F 00 A0 1B 42 20 08 FF 60 FF FF FF FF FF FF FF FF FF FF FF FF"

var _ = addReal(realCase{
	name:   "StateUpdate server 0x20 subsystem round-robin (class unknown)",
	source: "OpenBC docs/wire-formats/stateupdate-wire-format/14-decoded-packet-examples.md, Example 2 (its quoted 25 bytes)",
	dir:    ServerToClient,
	hex:    stateUpdateServerHex,
	check: func(t *testing.T, m Message) {
		u := lcAs[*StateUpdate](t, m)
		lcWant(t, "object", u.Object, PlayerObjectID(0))
		lcNear(t, "game time", float64(u.GameTime), 38.91, 0.005)
		lcWant(t, "flags", u.Flags, StateSubsystems)
		lcWant(t, "start index", u.SubsystemStart, uint8(8))
		// No ObjCreate in this decoder: the states stay bytes, marked.
		lcWant(t, "undecoded", u.SubsystemsUndecoded, true)
		lcWant(t, "data", string(u.SubsystemData), string(fixture.Unhex(t, "FF 60 FF FF FF FF FF FF FF FF FF FF FF FF")))
		lcWant(t, "lead bits", len(u.SubsystemLeadBits), 0)
		if !strings.Contains(u.String(), "undecoded") {
			t.Errorf("String() does not mark the undecoded states: %s", u)
		}
		lcWant(t, "warning", u.warning(), "")
	},
})

// vectors/cipher.json's datagram 03 01 32 16 00 1C…: client 0x03 (wire slot
// 3) sends an unreliable StateUpdate for 0x4003FFFF. (An independent
// implementation's bytes, not a stock trace.)
var _ = addReal(realCase{
	name:   "StateUpdate client 0x5C orientation+speed+cloak",
	source: `vectors/cipher.json, plain "03013216001CFFFF0340…"`,
	dir:    ClientToServer,
	hex:    "1C FF FF 03 40 00 00 00 00 5C 3D 4B 51 02 02 7E F9 44 20",
	check: func(t *testing.T, m Message) {
		u := lcAs[*StateUpdate](t, m)
		lcWant(t, "object", u.Object, PlayerObjectID(1))
		lcWant(t, "game time", u.GameTime, 0)
		lcWant(t, "flags", u.Flags, StateForward|StateUp|StateSpeed|StateCloak)
		lcWant(t, "forward", u.Forward, dissect.Dir3{0x3D, 0x4B, 0x51})
		lcWant(t, "up", u.Up, dissect.Dir3{2, 2, 0x7E})
		lcWant(t, "speed code", u.Speed, dissect.CF16(0x44F9))
		lcNear(t, "speed", float64(u.Speed.Float()), 1+9*1273.0/4095, 1e-4)
		lcWant(t, "cloaked", u.Cloaked, false)
	},
})

func TestStateUpdateRealSubsystemsByName(t *testing.T) {
	akira := ShipByName("Akira")
	d := NewDecoder()
	d.Ships.Add(PlayerObjectID(0), akira)
	res := lcDecodeClean(t, d, fixture.Unhex(t, stateUpdateServerHex), ServerToClient)
	u := lcAs[*StateUpdate](t, res.Msg)
	if u.SubsystemsUndecoded || u.Class != akira {
		t.Fatalf("not decoded by class: %s", u)
	}
	type st struct {
		idx      int
		name     string
		format   SubsystemFormat
		children int
	}
	want := []st{{8, "Engineering", SubsystemPowered, 0}, {9, "Tractors", SubsystemPowered, 2},
		{10, "Bridge", SubsystemBase, 0}, {0, "Hull", SubsystemBase, 0}, {1, "Shield Generator", SubsystemShield, 0}}
	if len(u.Subsystems) != len(want) {
		t.Fatalf("%d states, want %d: %s", len(u.Subsystems), len(want), u)
	}
	for i, w := range want {
		s := u.Subsystems[i]
		lcWant(t, "index", s.Index, w.idx)
		lcWant(t, "name", s.Name, w.name)
		lcWant(t, w.name+" format", s.Format, w.format)
		lcWant(t, w.name+" condition", s.Condition, uint8(0xFF))
		lcWant(t, w.name+" children", len(s.Children), w.children)
		for _, c := range s.Children {
			lcWant(t, w.name+" child condition", c, uint8(0xFF))
		}
		lcWant(t, w.name+" power bit", s.HasPower, false)
	}
	lcWant(t, "facings", string(u.Subsystems[4].Facings), string(fixture.Unhex(t, "FF FF FF FF FF FF")))
	lcWant(t, "tractor child name", u.Subsystems[1].ChildNames[1], "Aft Tractor")
	j, _ := json.Marshal(u)
	if !strings.Contains(string(j), `"name":"Aft Tractor","condition":255`) || !strings.Contains(string(j), `"class":"Akira"`) ||
		!strings.Contains(string(j), `"format":"shield","condition":255,"fraction":1,"has_power":false,"facings":[255,255,255,255,255,255]`) {
		t.Errorf("json %s", j)
	}

	// The same batch is what the encoder produces for an Akira at full
	// health sent to its own player from entry 8; the shield's state takes
	// the batch past the budget, and the next one starts at the Sensor
	// Array (2).
	b, next := akira.AppendSubsystemStates(nil, 8, nil, true)
	lcWant(t, "encoded batch", string(b), string(fixture.Unhex(t, "08 FF 60 FF FF FF FF FF FF FF FF FF FF FF FF")))
	lcWant(t, "next start", next, 2)

	// The first 20 bytes, the doc's stated length, fit only OpenBC's form:
	// decoded by name, with the deviation named.
	short := fixture.Unhex(t, stateUpdateServerHex)[:20]
	res = lcCheck(t, d, short, ServerToClient)
	u = lcAs[*StateUpdate](t, res.Msg)
	if res.Err != nil || u.SubsystemsUndecoded || res.Warning != warnOpenBCShield || len(u.Subsystems) != 6 ||
		u.Subsystems[4].Format != SubsystemBase || u.Subsystems[5].Name != "Sensor Array" {
		t.Fatalf("20-byte form: err=%v warning=%q %s", res.Err, res.Warning, u)
	}
	if got := u.Append(nil); !bytes.Equal(got, short) {
		t.Errorf("20-byte form re-encoded % X", got)
	}
	// Nor do the 25 bytes fit a Sovereign (a tractor child where the
	// Tractors' power bit group byte would be), in either form.
	d.Ships.Add(PlayerObjectID(0), ShipByName("Sovereign"))
	res = lcCheck(t, d, fixture.Unhex(t, stateUpdateServerHex), ServerToClient)
	if u := lcAs[*StateUpdate](t, res.Msg); !u.SubsystemsUndecoded || !strings.Contains(res.Warning, "Sovereign") {
		t.Fatalf("fits a Sovereign: %s", u)
	}
}

// The Decoder learns a ship's class from its ObjCreateTeam and decodes that
// ship's later StateUpdates by name.
func TestStateUpdateClassFromObjCreate(t *testing.T) {
	d := NewDecoder()
	create := &ObjCreate{HasTeam: true, Owner: 0, Team: 2, Class: ClassShip, Object: PlayerObjectID(0),
		Species: 1, Position: dissect.Vec3{X: 88, Y: -66, Z: -73}, Orientation: Quaternion{W: 1},
		PlayerName: "Cady2", SetName: "Multi1"}
	lcDecodeClean(t, d, create.Append(nil), ClientToServer)
	if d.Ships.Lookup(PlayerObjectID(0)) != ShipByName("Akira") {
		t.Fatal("class not learnt")
	}
	res := lcDecodeClean(t, d, fixture.Unhex(t, stateUpdateServerHex), ServerToClient)
	if u := lcAs[*StateUpdate](t, res.Msg); u.SubsystemsUndecoded || len(u.Subsystems) != 5 {
		t.Fatalf("not decoded: %s", u)
	}
	// A torpedo ObjCreate does not register a class.
	lcCheck(t, d, (&ObjCreate{Class: ClassTorpedo, Object: 0x40000010, TorpedoType: 2}).Append(nil), ServerToClient)
	if d.Ships.Lookup(0x40000010) != nil {
		t.Fatal("torpedo registered as a ship")
	}
}

// stateRoundTrip encodes m, decodes it with a decoder that knows id's
// class (when spec is not nil), and compares the wire fields.
func stateRoundTrip(t *testing.T, m *StateUpdate, spec *ShipSpec, dir Direction) *StateUpdate {
	t.Helper()
	b := m.Append(nil)
	d := NewDecoder()
	if spec != nil {
		d.Ships.Add(m.Object, spec)
	}
	res := lcDecodeClean(t, d, b, dir)
	got := lcAs[*StateUpdate](t, res.Msg)
	lcWant(t, "object", got.Object, m.Object)
	lcWant(t, "flags", got.Flags, m.Flags)
	if math.Float32bits(got.GameTime) != math.Float32bits(m.GameTime) {
		t.Errorf("game time %v, want %v", got.GameTime, m.GameTime)
	}
	f := m.Flags
	if f&StatePosition != 0 {
		lcWant(t, "position", got.Position, m.Position)
		lcWant(t, "has hash", got.HasHash, m.HasHash)
		if m.HasHash {
			lcWant(t, "hash", got.Hash, m.Hash)
		}
	}
	if f&StateDelta != 0 {
		lcWant(t, "delta", got.Delta, m.Delta)
	}
	if f&StateForward != 0 {
		lcWant(t, "forward", got.Forward, m.Forward)
	}
	if f&StateUp != 0 {
		lcWant(t, "up", got.Up, m.Up)
	}
	if f&StateSpeed != 0 {
		lcWant(t, "speed", got.Speed, m.Speed)
	}
	if f&StateCloak != 0 {
		lcWant(t, "cloaked", got.Cloaked, m.Cloaked)
	}
	if f&StateSubsystems != 0 && spec != nil {
		lcWant(t, "start", got.SubsystemStart, m.SubsystemStart)
		if len(got.Subsystems) != len(m.Subsystems) {
			t.Fatalf("%d states, want %d", len(got.Subsystems), len(m.Subsystems))
		}
		for i := range m.Subsystems {
			g, w := got.Subsystems[i], m.Subsystems[i]
			if g.Index != w.Index || g.Name != w.Name || g.Format != w.Format || g.Condition != w.Condition ||
				!bytes.Equal(g.Children, w.Children) || g.HasPower != w.HasPower ||
				(w.HasPower && g.Power != w.Power) || g.MainBattery != w.MainBattery || g.BackupBattery != w.BackupBattery {
				t.Errorf("state %d: got %+v, want %+v", i, g, w)
			}
		}
	}
	if f&StateWeapons != 0 && !reflect.DeepEqual(got.Weapons, m.Weapons) && len(m.Weapons)+len(got.Weapons) > 0 {
		t.Errorf("weapons %v, want %v", got.Weapons, m.Weapons)
	}
	return got
}

func TestStateUpdateSynthetic(t *testing.T) {
	sov := ShipByName("Sovereign")
	// Client movement + weapons, the stock client's most common shape.
	stateRoundTrip(t, &StateUpdate{Object: PlayerObjectID(2), GameTime: 61.5,
		Flags: StateDelta | StateForward | StateUp | StateSpeed | StateWeapons,
		Delta: dissect.EncodeCV4(dissect.Vec3{X: 1.5, Y: -0.25, Z: 3}), Forward: dissect.Dir3{0, 127, 0},
		Up: dissect.Dir3{0, 0, 127}, Speed: dissect.EncodeCF16(-4.2),
		Weapons: []WeaponHealth{{0, 0xCC}, {3, 0x66}}}, nil, ClientToServer)
	// Heartbeat: no flags.
	stateRoundTrip(t, &StateUpdate{Object: 0x10, GameTime: 1}, nil, ServerToClient)
	// Position without hash.
	stateRoundTrip(t, &StateUpdate{Object: PlayerObjectID(1), Flags: StatePosition,
		Position: dissect.Vec3{X: -1e4, Y: 0.5, Z: 3}}, nil, ServerToClient)

	// Server subsystems for a remote Sovereign from entry 0: the start
	// index, Hull, then the Shield Generator in its stock form (condition,
	// its power bit opening a group byte, 0x21 = one bit, set; its power
	// byte; six facing bytes) take the batch past the 10-byte budget; the
	// next batch starts at the Sensor Array (2).
	vals := sov.FullHealth()
	vals[1].Power, vals[1].Facings = 80, []uint8{0xF0, 1, 2, 3, 4, 5}
	vals[4].Children = []uint8{0x80, 0x10}
	vals[4].Power = 75
	vals[3].MainBattery, vals[3].BackupBattery = 0x7F, 0x01
	m := &StateUpdate{Object: PlayerObjectID(0), GameTime: 12, Flags: StateDelta, Delta: dissect.CV4{Mag: 0}}
	next := m.FillSubsystems(sov, 0, vals, false)
	lcWant(t, "next", next, 2)
	lcWant(t, "flags", m.Flags, StateDelta|StateSubsystems)
	wire := m.Append(nil)
	wantTail := "00 FF FF 21 50 F0 01 02 03 04 05"
	if got := wire[len(wire)-11:]; !bytes.Equal(got, fixture.Unhex(t, wantTail)) {
		t.Fatalf("subsystem section % X, want %s", got, wantTail)
	}
	stateRoundTrip(t, m, sov, ServerToClient)
	// From entry 2: Sensor (its bit opens a group byte, then its power
	// byte), Warp Core (two battery bytes) make 7 bytes, under the budget,
	// so Impulse Engines follow (its bit joins the group: 0x43 = two bits,
	// both set) and end the batch at 11 bytes; the next batch starts at
	// Torpedoes (5).
	m = &StateUpdate{Object: PlayerObjectID(0), GameTime: 12, Flags: StateDelta, Delta: dissect.CV4{Mag: 0}}
	lcWant(t, "next", m.FillSubsystems(sov, 2, vals, false), 5)
	wire = m.Append(nil)
	wantTail = "02 FF 43 64 FF 7F 01 FF 80 10 4B"
	if got := wire[len(wire)-11:]; !bytes.Equal(got, fixture.Unhex(t, wantTail)) {
		t.Fatalf("subsystem section % X, want %s", got, wantTail)
	}
	stateRoundTrip(t, m, sov, ServerToClient)

	// Position with hash and cloak: the has-hash and cloak bits open the
	// group byte, and the power bits of the states join it (Warbird from
	// its Cloaking Device, own ship: no power bytes).
	wb := ShipByName("Warbird")
	m = &StateUpdate{Object: PlayerObjectID(3), GameTime: 100, Flags: StatePosition | StateCloak,
		Position: dissect.Vec3{X: 1, Y: 2, Z: 3}, HasHash: true, Hash: 0xBEEF, Cloaked: true}
	next = m.FillSubsystems(wb, 8, nil, true)
	wire = m.Append(nil)
	// Cloaking Device (8), Sensor Array (9) and Engineering (10) put their
	// power bits (clear: own ship) into the group the hash and cloak bits
	// opened, filling it (0xA3: five bits, the first two set); Bridge (11),
	// Tractors (12, whose bit opens a second group byte) and Hull (0)
	// bring the batch to the 10-byte budget.
	if wire[22] != 0xA3 {
		t.Fatalf("first group byte %#02x, want 0xA3 (5 bits: hash, cloak set): % X", wire[22], wire)
	}
	lcWant(t, "next", next, 1)
	got := stateRoundTrip(t, m, wb, ServerToClient)
	if len(got.Subsystems) != 6 || got.Subsystems[0].Name != "Cloaking Device" || got.Subsystems[5].Name != "Hull" {
		t.Fatalf("states %s", got)
	}

	// The same bytes without the class: undecoded, the power bits that sit
	// in the hash/cloak group kept as lead bits, and re-encoded exactly.
	d := NewDecoder()
	res := lcDecodeClean(t, d, wire, ServerToClient)
	u := lcAs[*StateUpdate](t, res.Msg)
	if !u.SubsystemsUndecoded || len(u.SubsystemLeadBits) != 3 {
		t.Fatalf("undecoded form: %s", u)
	}
}

func TestStateUpdateRoundRobinBudget(t *testing.T) {
	for _, spec := range StockShips() {
		for _, own := range []bool{false, true} {
			d := NewDecoder()
			d.Ships.Add(1, spec)
			seen := make([]bool, len(spec.Subsystems))
			start := 0
			for batch := 0; batch < 3*len(spec.Subsystems); batch++ {
				b, next := spec.AppendSubsystemStates(nil, start, nil, own)
				msg := (&StateUpdate{Object: 1, Flags: StateSubsystems}).Append(nil)
				msg = append(msg[:len(msg)-1], b...) // replace the empty section
				res := lcDecodeClean(t, d, msg, ServerToClient)
				u := lcAs[*StateUpdate](t, res.Msg)
				if u.SubsystemsUndecoded || int(u.SubsystemStart) != start {
					t.Fatalf("%s: batch from %d does not decode: %s", spec.Name, start, u)
				}
				// A batch stops at the budget or after a full cycle; the
				// state that crosses the budget is written whole.
				if len(b) < subsystemBudget && next != start {
					t.Fatalf("%s: batch from %d is %d bytes and stops at %d", spec.Name, start, len(b), next)
				}
				for _, s := range u.Subsystems {
					seen[s.Index] = true
				}
				if next != (start+len(u.Subsystems))%len(spec.Subsystems) {
					t.Fatalf("%s: batch from %d with %d states says next %d", spec.Name, start, len(u.Subsystems), next)
				}
				start = next
			}
			for i, ok := range seen {
				if !ok {
					t.Fatalf("%s own=%v: entry %d never sent", spec.Name, own, i)
				}
			}
		}
	}
}

func TestStateUpdateWarnings(t *testing.T) {
	d := NewDecoder()
	// Client sending subsystems (0x20), server sending weapons (0x80).
	c := (&StateUpdate{Object: 1, Flags: StateSubsystems, SubsystemsUndecoded: true, SubsystemData: []byte{0xFF}}).Append(nil)
	if res := lcDecodeClean(t, d, c, ClientToServer); !strings.Contains(res.Warning, "0x20") {
		t.Errorf("C->S 0x20: warning %q", res.Warning)
	}
	if res := lcDecodeClean(t, d, c, ServerToClient); res.Warning != "" {
		t.Errorf("S->C 0x20: warning %q", res.Warning)
	}
	s := (&StateUpdate{Object: 1, Flags: StateWeapons, Weapons: []WeaponHealth{{1, 2}}}).Append(nil)
	if res := lcDecodeClean(t, d, s, ServerToClient); !strings.Contains(res.Warning, "0x80") {
		t.Errorf("S->C 0x80: warning %q", res.Warning)
	}
	if res := lcDecodeClean(t, d, s, ClientToServer); res.Warning != "" {
		t.Errorf("C->S 0x80: warning %q", res.Warning)
	}
	if res := lcDecodeClean(t, d, s, DirUnknown); res.Warning != "" {
		t.Errorf("unknown direction: warning %q", res.Warning)
	}
	// An odd weapon byte is left over.
	if res := d.Decode(append(s, 7), ClientToServer); res.Err != nil || len(res.Unparsed) != 1 {
		t.Errorf("odd weapon byte: %+v", res)
	}
}

func TestStateUpdateBadInput(t *testing.T) {
	for _, h := range []string{
		"1C FF FF FF 3F 00 80 E1",          // short header
		"1C FF FF FF 3F 00 80 E1 41 01 00", // short position
		"1C FF FF FF 3F 00 80 E1 41 01 00 00 B0 42 00 00 84 C2 00 00 92 C2 21 37", // short hash
		"1C 01 00 00 00 00 00 00 00 40 00",                                        // cloak bit byte claims 0 bits
		"1C 01 00 00 00 00 00 00 00 40 41",                                        // group claims 2 bits, message has 1
		"1C 01 00 00 00 00 00 00 00 40 23",                                        // value bit above the count
		// has-hash group of 1 bit, then the cloak bit in a new group: the
		// stock writer would have shared the byte.
		"1C 01 00 00 00 00 00 00 00 41 00 00 00 00 00 00 00 00 00 00 00 00 20 20",
	} {
		if res := NewDecoder().Decode(fixture.Unhex(t, h), ServerToClient); res.Err == nil {
			t.Errorf("%s: decoded without error: %s", h, res.Msg)
		}
	}
	// The canonical form of the last one decodes.
	lcDecodeClean(t, NewDecoder(), fixture.Unhex(t, "1C 01 00 00 00 00 00 00 00 41 00 00 00 00 00 00 00 00 00 00 00 00 40"), ServerToClient)
}

func TestStateUpdateDecodeAllocs(t *testing.T) {
	d := NewDecoder()
	d.Ships.Add(PlayerObjectID(0), ShipByName("Akira"))
	msgs := [][]byte{fixture.Unhex(t, stateUpdateClientHex), fixture.Unhex(t, stateUpdateServerHex),
		fixture.Unhex(t, "1C FF FF 03 40 00 00 00 00 5C 3D 4B 51 02 02 7E F9 44 20")}
	for _, m := range msgs {
		d.Decode(m, ServerToClient)
	}
	allocs := testing.AllocsPerRun(200, func() {
		for _, m := range msgs {
			if res := d.Decode(m, DirUnknown); res.Err != nil {
				t.Fatal(res.Err)
			}
		}
	})
	if allocs != 0 {
		t.Fatalf("StateUpdate decode allocates %v times per run", allocs)
	}
}

func FuzzStateUpdate(f *testing.F) {
	for _, h := range []string{stateUpdateClientHex, stateUpdateServerHex,
		"1C FF FF 03 40 00 00 00 00 5C 3D 4B 51 02 02 7E F9 44 20"} {
		for _, sp := range []uint8{0, 1, 5, 8} {
			f.Add(sp, fixture.Unhex(f, h)[1:])
		}
	}
	wb := ShipByName("Warbird")
	m := &StateUpdate{Object: PlayerObjectID(3), Flags: StatePosition | StateCloak, HasHash: true, Cloaked: true}
	m.FillSubsystems(wb, 8, nil, false)
	f.Add(uint8(8), m.Append(nil)[1:])
	f.Fuzz(func(t *testing.T, species uint8, body []byte) {
		d, msg := stateUpdateFuzzInput(species, body)
		for _, dir := range []Direction{ClientToServer, ServerToClient} {
			lcCheck(t, d, msg, dir)
		}
	})
}

func BenchmarkStateUpdateDecode(b *testing.B) {
	cases := []struct {
		name string
		hex  string
		cls  bool
	}{
		{"client-9D", stateUpdateClientHex, false},
		{"server-20-by-class", stateUpdateServerHex, true},
		{"server-20-undecoded", stateUpdateServerHex, false},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			d := NewDecoder()
			if c.cls {
				d.Ships.Add(PlayerObjectID(0), ShipByName("Akira"))
			}
			msg := fixture.Unhex(b, c.hex)
			b.ReportAllocs()
			b.SetBytes(int64(len(msg)))
			for b.Loop() {
				if res := d.Decode(msg, ServerToClient); res.Err != nil {
					b.Fatal(res.Err)
				}
			}
		})
	}
}

func BenchmarkStateUpdateAppend(b *testing.B) {
	sov := ShipByName("Sovereign")
	m := &StateUpdate{Object: PlayerObjectID(0), Flags: StateDelta | StateForward | StateUp | StateSpeed}
	buf := make([]byte, 0, 64)
	next := 0
	b.ReportAllocs()
	for b.Loop() {
		next = m.FillSubsystems(sov, next, nil, false)
		buf = m.Append(buf[:0])
	}
}

// TestStateUpdateResetClearsEveryField fills every field of a StateUpdate,
// unexported ones too, and checks that reset leaves each one zero but the
// reused buffers (empty, their storage kept) and leadBuf (shown only
// through SubsystemLeadBits): reset clears the fields one by one, and a
// field added to StateUpdate must not be forgotten there.
func TestStateUpdateResetClearsEveryField(t *testing.T) {
	var m StateUpdate
	v := reflect.ValueOf(&m).Elem()
	fixture.FillNonZero(t, v)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("field %s not filled", v.Type().Field(i).Name)
		}
	}
	m.reset()
	for i := range v.NumField() {
		name, f := v.Type().Field(i).Name, v.Field(i)
		switch name {
		case "leadBuf":
		case "Subsystems", "Weapons", "childBuf":
			if f.Len() != 0 || f.Cap() != 4 {
				t.Errorf("%s: len %d cap %d after reset, want 0 and its storage kept", name, f.Len(), f.Cap())
			}
		default:
			if !f.IsZero() {
				t.Errorf("%s is not zero after reset", name)
			}
		}
	}
}
