package game

import (
	"github.com/bcwire/bcwire/internal/fixture"
	"strings"
	"testing"
)

// Tests of the small object-lifecycle messages: HostMsg 0x13,
// DestroyObject 0x14, DeletePlayerUI 0x17, DeletePlayerAnim 0x18,
// ObjNotFound 0x1D, RequestObject 0x1E and EnterSet 0x1F. Published bytes
// exist only for 0x13 and 0x17; the others are synthetic.

var _ = addReal(realCase{
	name:   "HostMsg self-destruct",
	source: "OpenBC docs/game-systems/self-destruct-system.md §2, Decoded Example (the whole message is the opcode)",
	dir:    ClientToServer,
	hex:    "13",
	check: func(t *testing.T, m Message) {
		lcAs[*HostMsg](t, m)
	},
})

var _ = addReal(realCase{
	name:   "DeletePlayerUI join (player list add), target 0x64F",
	source: "OpenBC docs/wire-formats/delete-player-ui-wire-format.md, Hex Example (from stock packet capture)",
	dir:    ServerToClient,
	hex:    "17 66 08 00 00 F1 00 80 00 00 00 00 00 4F 06 00 00 02",
	check: func(t *testing.T, m Message) {
		u := lcAs[*DeletePlayerUI](t, m)
		lcWant(t, "class", u.Class, EventClassDeletePlayer)
		lcWant(t, "code", u.Code, ETNewPlayerInGame)
		lcWant(t, "code value", uint32(u.Code), 0x008000F1)
		lcWant(t, "source", u.Source, ObjectID(0))
		lcWant(t, "target", u.Target, ObjectID(0x0000064F))
		lcWant(t, "peer", u.Peer, uint8(2))
		lcWant(t, "warning", u.warning(), "")
	},
})

var _ = addReal(realCase{
	name:   "DeletePlayerUI join, packet #20, target 0x791",
	source: "OpenBC docs/network-flows/disconnect-flow.md §2.2, Hex Dump: DeletePlayerUI at Join Time (Packet #20)",
	dir:    ServerToClient,
	hex:    "17 66 08 00 00 F1 00 80 00 00 00 00 00 91 07 00 00 02",
	check: func(t *testing.T, m Message) {
		u := lcAs[*DeletePlayerUI](t, m)
		lcWant(t, "class", u.Class, EventClass(0x866))
		lcWant(t, "code", u.Code, ETNewPlayerInGame)
		lcWant(t, "source", u.Source, ObjectID(0))
		lcWant(t, "target", u.Target, ObjectID(0x00000791))
		lcWant(t, "peer", u.Peer, uint8(2))
	},
})

// lcRoundTrip encodes m, decodes the bytes cleanly and re-encodes them.
func lcRoundTrip(t *testing.T, m Message, dir Direction) Message {
	t.Helper()
	b := m.Append(nil)
	if Opcode(b[0]) != m.Opcode() {
		t.Fatalf("opcode byte %#02x, want %v", b[0], m.Opcode())
	}
	return lcDecodeClean(t, NewDecoder(), b, dir).Msg
}

func TestLifecycleSynthetic(t *testing.T) {
	// No source quotes bytes of 0x14, 0x18, 0x1D, 0x1E or 0x1F.
	for _, c := range []struct {
		m   Message
		hex string
	}{
		{&DestroyObject{Object: PlayerObjectID(2)}, "14 FF FF 07 40"},
		{&ObjNotFound{Object: 0x4000000D}, "1D 0D 00 00 40"},
		{&RequestObject{Object: PlayerObjectID(0)}, "1E FF FF FF 3F"},
		{&DeletePlayerAnim{Name: "Cady2"}, "18 05 00 43 61 64 79 32"},
		{&EnterSet{Object: PlayerObjectID(1), SetName: "Multi2"}, "1F FF FF 03 40 06 00 00 00 4D 75 6C 74 69 32 00"},
		{&EnterSet{Object: 5, SetName: "Albirea", Unterminated: true}, "1F 05 00 00 00 07 00 00 00 41 6C 62 69 72 65 61"},
		{&HostMsg{}, "13"},
		{NewDeletePlayerUI(ETNetworkPlayerRemoved, 0x64F, 3), "17 66 08 00 00 05 00 06 00 00 00 00 00 4F 06 00 00 03"},
	} {
		if got := c.m.Append(nil); string(got) != string(fixture.Unhex(t, c.hex)) {
			t.Errorf("%v: % X, want %s", c.m.Opcode(), got, c.hex)
		}
		got := lcRoundTrip(t, c.m, ServerToClient)
		if got.String() != c.m.String() {
			t.Errorf("%v: decoded %q, want %q", c.m.Opcode(), got, c.m)
		}
	}
	if s := (&DestroyObject{Object: PlayerObjectID(2)}).String(); !strings.Contains(s, "slot 2") {
		t.Errorf("DestroyObject string %q", s)
	}

	d := NewDecoder()
	// EnterSet without its NUL: decodes, with a warning.
	res := lcDecodeClean(t, d, fixture.Unhex(t, "1F 05 00 00 00 02 00 00 00 41 42"), ServerToClient)
	if e := lcAs[*EnterSet](t, res.Msg); !e.Unterminated || e.SetName != "AB" || res.Warning == "" {
		t.Fatalf("unterminated EnterSet: %+v %q", e, res.Warning)
	}
	// DeletePlayerUI of another event class: header only, rest unparsed.
	res = d.Decode(fixture.Unhex(t, "17 02 00 00 00 05 00 06 00 00 00 00 00 4F 06 00 00 03"), ServerToClient)
	if res.Err != nil || len(res.Unparsed) != 1 || !strings.Contains(res.Warning, "not DeletePlayerEvent") {
		t.Fatalf("other class: %+v", res)
	}
	res = lcDecodeClean(t, d, fixture.Unhex(t, "17 66 08 00 00 01 00 80 00 00 00 00 00 4F 06 00 00 03"), ServerToClient)
	if !strings.Contains(res.Warning, "neither") {
		t.Fatalf("odd code: %q", res.Warning)
	}
	// HostMsg with a trailing byte: reported, not swallowed.
	if res := d.Decode([]byte{0x13, 0x01}, ClientToServer); res.Err != nil || len(res.Unparsed) != 1 {
		t.Fatalf("HostMsg + 1: %+v", res)
	}
}

func TestLifecycleTruncated(t *testing.T) {
	for _, h := range []string{
		"14 FF FF 07", "1D", "1E 01 02 03", "18 05 00 43 61", "18 05",
		"1F 05 00 00 00 06 00 00 00 4D 75", // name shorter than its length
		"1F 05 00 00 00 FF FF FF FF 00",    // negative length
		"17 66 08 00 00 F1 00 80 00 00 00 00 00 4F 06 00 00",
	} {
		if res := NewDecoder().Decode(fixture.Unhex(t, h), ServerToClient); res.Err == nil {
			t.Errorf("%s: decoded: %s", h, res.Msg)
		}
	}
}

func FuzzObjectLifecycle(f *testing.F) {
	for _, h := range []string{
		"13", "14 FF FF 07 40", "17 66 08 00 00 F1 00 80 00 00 00 00 00 4F 06 00 00 02",
		"17 66 08 00 00 F1 00 80 00 00 00 00 00 91 07 00 00 02", "18 05 00 43 61 64 79 32",
		"1D 0D 00 00 40", "1E FF FF FF 3F", "1F FF FF 03 40 06 00 00 00 4D 75 6C 74 69 32 00",
	} {
		b := fixture.Unhex(f, h)
		f.Add(b[0], b[1:])
	}
	ops := []Opcode{OpHostMsg, OpDestroyObject, OpDeletePlayerUI, OpDeletePlayerAnim, OpObjNotFound,
		OpRequestObject, OpEnterSet}
	f.Fuzz(func(t *testing.T, op uint8, body []byte) {
		o := ops[int(op)%len(ops)]
		for _, c := range ops {
			if Opcode(op) == c {
				o = c
			}
		}
		lcCheck(t, NewDecoder(), append([]byte{byte(o)}, body...), ServerToClient)
	})
}
