package game

import "testing"

func TestParseOpcode(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Opcode
		ok   bool
	}{
		{"StateUpdate", OpStateUpdate, true},
		{"stateupdate", OpStateUpdate, true},
		{"CHAT", OpChat, true},
		{"chat", OpChat, true},
		{"0x1C", OpStateUpdate, true},
		{"28", OpStateUpdate, true},
		{"0x2C", OpChat, true},
		{"255", 255, true},
		{"256", 0, false},
		{"NoSuchThing", 0, false},
		{"", 0, false},
	} {
		got, ok := ParseOpcode(c.in)
		if ok != c.ok || got != c.want {
			t.Errorf("ParseOpcode(%q) = %v, %v; want %v, %v", c.in, got, ok, c.want, c.ok)
		}
	}
	// Every named opcode reads back from its name.
	for o, name := range opcodeNames {
		if got, ok := ParseOpcode(name); !ok || got != o {
			t.Errorf("%s: got %v %v", name, got, ok)
		}
	}
}
