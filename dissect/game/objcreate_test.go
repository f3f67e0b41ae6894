package game

import (
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/internal/fixture"
)

// No source quotes a whole stock ObjCreate or ObjCreateTeam: OpenBC's two
// decoded stock packets (objcreate-wire-format/10-decoded-packet-examples.md)
// stop after the position with "...". TestObjCreateStockPrefixes checks the
// fields they give; the rest of the tests are synthetic.

// objCreatePrefixes are the quoted stock bytes, up to the "...".
var objCreatePrefixes = []struct {
	name    string
	hex     string
	species Species
	pos     dissect.Vec3
}{
	{"Example 1: Akira", "03 00 02 08 80 00 00 FF FF FF 3F 01 00 00 B0 42 00 00 84 C2 00 00 92 C2", 1, dissect.Vec3{X: 88, Y: -66, Z: -73}},
	{"Example 2: Sovereign", "03 00 02 08 80 00 00 FF FF FF 3F 05 00 00 18 42 00 00 44 C2 00 00 0C C2", 5, dissect.Vec3{X: 38, Y: -49, Z: -35}},
}

func TestObjCreateStockPrefixes(t *testing.T) {
	for _, c := range objCreatePrefixes {
		t.Run(c.name, func(t *testing.T) {
			b := fixture.Unhex(t, c.hex)
			lcWant(t, "opcode", Opcode(b[0]), OpObjCreateTeam)
			m := New(OpObjCreateTeam).(*ObjCreate)
			r := dissect.NewReader(b[1:])
			m.decode(r, &Context{Dir: ServerToClient})
			// The quote stops inside the orientation: the decoder reads
			// every field the bytes hold, then runs short.
			if r.Err() == nil || !strings.Contains(r.Err().Error(), "orientation w") {
				t.Fatalf("error %v, want a short read at the orientation", r.Err())
			}
			lcWant(t, "owner", m.Owner, uint8(0))
			lcWant(t, "team", m.Team, uint8(2))
			lcWant(t, "class", m.Class, ClassShip)
			lcWant(t, "object", m.Object, PlayerObjectID(0))
			lcWant(t, "species", m.Species, c.species)
			lcWant(t, "position", m.Position, c.pos)
			if ShipBySpecies(m.Species) == nil {
				t.Fatal("no stock class for the species")
			}
		})
	}
}

// vectors/cipher.json has two ObjCreateTeam datagrams (…32 B5 80 06 00 03 00
// 00 FF FF FF 3F 0C …) from an independent implementation. Their bodies
// start with the object id: there is no class id, which both stock
// examples above have (08 80 00 00), and what follows (a quaternion, a
// vector, runs of float32 hit points) is not the documented ship body.
// Stock bytes decide: the decoder reads the first four body bytes as the
// class, finds none it knows and leaves the rest undecoded, with a warning.
func TestObjCreateIndependentVectorIsNotStockLayout(t *testing.T) {
	b := fixture.Unhex(t, "03 00 00 FF FF FF 3F 0C D0 CC D4 41 C4 F5 A4 C1 40 0A 2D 42 00 00 80 3F")
	res := lcCheck(t, NewDecoder(), b, ServerToClient)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	m := lcAs[*ObjCreate](t, res.Msg)
	lcWant(t, "class", m.Class, ObjectClass(0x3FFFFFFF))
	if !strings.Contains(res.Warning, "neither ship") || len(res.Unparsed) == 0 {
		t.Fatalf("warning %q unparsed % X", res.Warning, res.Unparsed)
	}
}

func objCreateRoundTrip(t *testing.T, in *ObjCreate) *ObjCreate {
	t.Helper()
	b := in.Append(nil)
	lcWant(t, "opcode", Opcode(b[0]), in.Opcode())
	res := lcDecodeClean(t, NewDecoder(), b, ServerToClient)
	got := lcAs[*ObjCreate](t, res.Msg)
	lcWant(t, "has team", got.HasTeam, in.HasTeam)
	lcWant(t, "owner", got.Owner, in.Owner)
	if in.HasTeam {
		lcWant(t, "team", got.Team, in.Team)
	}
	lcWant(t, "class", got.Class, in.Class)
	lcWant(t, "object", got.Object, in.Object)
	switch in.Class {
	case ClassShip:
		lcWant(t, "species", got.Species, in.Species)
		lcWant(t, "position", got.Position, in.Position)
		lcWant(t, "orientation", got.Orientation, in.Orientation)
		lcWant(t, "speed", got.Speed, in.Speed)
		lcWant(t, "direction", got.Direction, in.Direction)
		lcWant(t, "player name", got.PlayerName, in.PlayerName)
		lcWant(t, "set name", got.SetName, in.SetName)
		lcWant(t, "subsystem data", string(got.SubsystemData), string(in.SubsystemData))
	case ClassTorpedo:
		lcWant(t, "torpedo type", got.TorpedoType, in.TorpedoType)
	}
	return got
}

func TestObjCreateSynthetic(t *testing.T) {
	// A player's Sovereign (0x03), the shape of the stock example 2 with
	// the documented remainder filled in.
	sov := &ObjCreate{HasTeam: true, Owner: 1, Team: 3, Class: ClassShip, Object: PlayerObjectID(1), Species: 5,
		Position: dissect.Vec3{X: 38, Y: -49, Z: -35}, Orientation: Quaternion{W: 0.7071, X: 0, Y: 0.7071, Z: 0},
		PlayerName: "Cady2", SetName: "Multi1", SubsystemData: []byte{0xFF, 0xFF, 0x64, 0xFF}}
	got := objCreateRoundTrip(t, sov)
	lcWant(t, "opcode", got.Opcode(), OpObjCreateTeam)
	b := sov.Append(nil)
	lcWant(t, "length", len(b), 3+8+1+12+16+4+3+1+5+1+6+4)
	// Four bytes are not a Sovereign's subsystem states: kept as bytes,
	// with the reason and a warning (TestObjCreateStockSovereignStates has
	// real ones).
	res := NewDecoder().Decode(b, ServerToClient)
	const why = "the bytes end inside the state of Shield Generator (entry 1 of the Sovereign list)"
	if !strings.Contains(res.Warning, why) || !strings.Contains(res.Msg.String(), "(undecoded: "+why+")") {
		t.Errorf("warning %q, text %s", res.Warning, res.Msg)
	}
	j, _ := json.Marshal(res.Msg)
	for _, want := range []string{`"team":3`, `"species":{"id":5,"name":"SOVEREIGN"}`, `"ship_class":"Sovereign"`,
		`"player_name":"Cady2"`, `"set_name":"Multi1"`, `"subsystem_data":"FFFF64FF"`, `"class":{"id":"0x00008008","name":"ship"}`,
		`"subsystems_undecoded":"` + why + `"`} {
		if !strings.Contains(string(j), want) {
			t.Errorf("json lacks %s: %s", want, j)
		}
	}

	// A non-team object (0x02): an asteroid owned by the host, no team byte.
	ast := &ObjCreate{Owner: 0, Class: ClassShip, Object: 0x0000001F, Species: 31, Orientation: Quaternion{W: 1},
		Position: dissect.Vec3{X: 500, Y: 12.5, Z: -3}, SetName: "Multi3"}
	got = objCreateRoundTrip(t, ast)
	lcWant(t, "opcode", got.Opcode(), OpObjCreate)
	lcWant(t, "species name", got.Species.String(), "ASTEROID")
	if b := ast.Append(nil); b[0] != 0x02 || len(b) != 2+8+1+12+16+4+3+1+1+6 {
		t.Fatalf("0x02 bytes % X", b)
	}

	// A torpedo: class 0x8009 and its type; nothing else is known.
	torp := &ObjCreate{Owner: 2, Class: ClassTorpedo, Object: 0x40080005, TorpedoType: 3}
	got = objCreateRoundTrip(t, torp)
	lcWant(t, "torpedo name", got.TorpedoType.String(), "QUANTUM")
	res = NewDecoder().Decode(append(torp.Append(nil), 1, 2, 3), ServerToClient)
	if res.Err != nil || len(res.Unparsed) != 3 || !strings.Contains(res.Warning, "torpedo") {
		t.Fatalf("torpedo body: %+v", res)
	}

	// Odd values survive: a mod species, a direction that is no unit
	// vector, NaN.
	odd := &ObjCreate{HasTeam: true, Class: ClassShip, Object: 7, Species: 200, Direction: dissect.Dir3{1, 2, 3},
		Speed: float32(math.Inf(1)), Orientation: Quaternion{W: float32(math.NaN())}}
	b = odd.Append(nil)
	res = lcDecodeClean(t, NewDecoder(), b, ClientToServer)
	if !strings.Contains(res.Warning, "mod") {
		t.Errorf("mod species warning %q", res.Warning)
	}
	odd.Species = 5
	res = lcDecodeClean(t, NewDecoder(), odd.Append(nil), ClientToServer)
	if !strings.Contains(res.Warning, "01 02 03") || !strings.Contains(res.Warning, "unit vector") {
		t.Errorf("direction warning %q", res.Warning)
	}

	// Long names are cut to their one-byte length.
	long := &ObjCreate{Class: ClassShip, PlayerName: strings.Repeat("x", 300)}
	got = lcAs[*ObjCreate](t, lcDecodeClean(t, NewDecoder(), long.Append(nil), ServerToClient).Msg)
	lcWant(t, "cut name", len(got.PlayerName), 255)
}

func TestObjCreateTruncated(t *testing.T) {
	full := (&ObjCreate{HasTeam: true, Class: ClassShip, Object: 1, Species: 1, PlayerName: "abc", SetName: "Multi1"}).Append(nil)
	// Every cut before the end of the set name is an error.
	for n := 1; n < len(full); n++ {
		res := NewDecoder().Decode(full[:n], ServerToClient)
		if res.Err == nil {
			t.Fatalf("%d of %d bytes decoded: %s", n, len(full), res.Msg)
		}
	}
}

func FuzzObjCreate(f *testing.F) {
	for _, c := range objCreatePrefixes {
		b := fixture.Unhex(f, c.hex)
		f.Add(b[0], b[1:])
	}
	for _, m := range []*ObjCreate{
		{HasTeam: true, Owner: 1, Team: 3, Class: ClassShip, Object: PlayerObjectID(1), Species: 5,
			Orientation: Quaternion{W: 1}, PlayerName: "Cady2", SetName: "Multi1", SubsystemData: []byte{0xFF}},
		{Class: ClassTorpedo, Object: 9, TorpedoType: 2},
	} {
		b := m.Append(nil)
		f.Add(b[0], b[1:])
	}
	f.Fuzz(func(t *testing.T, op uint8, body []byte) {
		o := OpObjCreate
		if op&1 != 0 {
			o = OpObjCreateTeam
		}
		d := NewDecoder()
		res := lcCheck(t, d, append([]byte{byte(o)}, body...), ServerToClient)
		// Whatever class the registry learnt, a StateUpdate for the same
		// object decodes safely with it.
		if m, ok := res.Msg.(*ObjCreate); ok && res.Err == nil {
			su := (&StateUpdate{Object: m.Object, Flags: StateSubsystems}).Append(nil)
			su = append(su[:len(su)-1], body[len(body)/2:]...)
			lcCheck(t, d, su, ServerToClient)
		}
	})
}
