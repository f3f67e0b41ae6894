package wireshark

import (
	"bytes"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/dissect/game"
)

func layoutFor(t *testing.T, op game.Opcode) Layout {
	t.Helper()
	for _, l := range Layouts() {
		if l.Op == op {
			return l
		}
	}
	t.Fatalf("no layout for %v", op)
	return Layout{}
}

// TestLayouts checks layouts read from the Go types against the wire
// formats PROTOCOL.md states: Explosion is 14 bytes, object id, a 5-byte
// CompressedVector4, then radius and damage as CF16 (radius first); a
// StateUpdate opens with object id, game time (f32) and the flags byte, and
// what follows depends on the flags, so it is not a fixed layout.
func TestLayouts(t *testing.T) {
	for _, tc := range []struct {
		op    game.Opcode
		fixed bool
		want  []Field
	}{
		{game.OpExplosion, true, []Field{{"object", 1, ObjID}, {"impact", 5, CV4}, {"radius", 10, CF16}, {"damage", 12, CF16}}},
		{game.OpStateUpdate, false, []Field{{"object", 1, ObjID}, {"game_time", 5, F32}, {"flags", 9, U8}}},
		{game.OpDestroyObject, true, []Field{{"object", 1, ObjID}}},
		{game.OpRequestObject, true, []Field{{"object", 1, ObjID}}},
		// The chat text is a length-prefixed string: only the sender is typed.
		{game.OpChat, false, []Field{{"sender_id", 1, I32}}},
	} {
		l := layoutFor(t, tc.op)
		if l.Fixed != tc.fixed || len(l.Fields) != len(tc.want) {
			t.Errorf("%v: fixed=%v fields %v, want fixed=%v %v", tc.op, l.Fixed, l.Fields, tc.fixed, tc.want)
			continue
		}
		for i := range tc.want {
			if l.Fields[i] != tc.want[i] {
				t.Errorf("%v field %d: %+v, want %+v", tc.op, i, l.Fields[i], tc.want[i])
			}
		}
	}
}

// TestGenerate checks the Lua names every opcode and layout field and
// carries the cipher table whole.
func TestGenerate(t *testing.T) {
	var b bytes.Buffer
	if err := Generate(&b, "test"); err != nil {
		t.Fatal(err)
	}
	lua := b.String()
	for _, want := range []string{
		`[41] = "Explosion"`, `[28] = "StateUpdate"`, `"bcwire.explosion.radius"`, `"bcwire.stateupdate.flags"`,
		`[50] = "data"`, `["status"] = false`, `["secure"] = true`, "register_heuristic", "Pref.uint",
	} {
		if !strings.Contains(lua, want) {
			t.Errorf("the Lua lacks %s", want)
		}
	}
	if n := strings.Count(lua, "\n  {"); n < 256 {
		t.Errorf("%d cipher rows", n)
	}
	if strings.Contains(lua, "<no value>") {
		t.Error("a template field had no value")
	}
}
