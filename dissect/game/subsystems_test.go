package game

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// The condition texts from the tables are what the formulas give.
func TestConditionTextTables(t *testing.T) {
	for c := range 256 {
		if got, want := pct(uint8(c)), strconv.Itoa(c*100/255)+"%"; got != want {
			t.Fatalf("pct(%d) = %q, want %q", c, got, want)
		}
		want := strconv.FormatFloat(math.Round(float64(c)/255*1000)/1000, 'f', -1, 64)
		if got := string(appendConditionFraction([]byte("x"), uint8(c))); got != "x"+want {
			t.Fatalf("fraction(%d) = %q, want %q", c, got, want)
		}
	}
}

// A state decoded with a class entry writes its JSON (and its text's
// name) from the entry's forms; the bytes are those of the long way, for every entry of every
// stock class, whatever the values, and a state whose name, index or
// child names were changed after decoding writes the long way.
func TestSubsystemFormsMatchLongForm(t *testing.T) {
	if got := `,"facings":` + string(appendByteList(nil, []uint8{255, 255, 255, 255, 255, 255})); got != fullFacingsJSON {
		t.Fatalf("full facings %s, constant %s", got, fullFacingsJSON)
	}
	long := func(s SubsystemState) string {
		s.forms = nil
		return string(s.AppendJSON(nil))
	}
	for _, spec := range stockShips {
		c := newShipClass(spec)
		for i := range c.entries {
			s := c.entries[i].state
			if s.forms == nil {
				t.Fatalf("%s entry %d: no forms", spec.Name, i)
			}
			for v := range 8 {
				s.Condition = uint8(v * 51)
				s.Children = make([]uint8, len(s.ChildNames))
				for k := range s.Children {
					s.Children[k] = uint8(v*37 + k)
					if v >= 6 { // full health (v 7: but the last child)
						s.Children[k] = 255
						if v == 7 && k == len(s.Children)-1 {
							s.Children[k] = 254
						}
					}
				}
				s.HasPower, s.Power, s.MainBattery = v%2 == 0, uint8(v*20), uint8(v)
				if s.Format == SubsystemShield {
					s.Facings = []uint8{1, 2, 3, 4, 5, uint8(v)}
					if v >= 6 {
						s.Facings = []uint8{255, 255, 255, 255, 255, uint8(255 - v%2)}
					}
				}
				if got, want := string(s.AppendJSON(nil)), long(s); got != want {
					t.Fatalf("%s entry %d:\n%s\nlong form\n%s", spec.Name, i, got, want)
				}
				plain := s
				plain.forms = nil
				if got, want := string(s.appendString(nil)), string(plain.appendString(nil)); got != want {
					t.Fatalf("%s entry %d text: %s, long form %s", spec.Name, i, got, want)
				}
			}
			changed := s
			changed.Name += "x"
			changed.Index++
			if len(changed.ChildNames) > 0 {
				changed.ChildNames = append([]string{"other"}, changed.ChildNames[1:]...)
			}
			if got, want := string(changed.AppendJSON(nil)), long(changed); got != want {
				t.Fatalf("%s entry %d changed:\n%s\nlong form\n%s", spec.Name, i, got, want)
			}
		}
	}
}

// A state at full health (condition and every child 255) writes its JSON
// and its text from the entry's healthy forms when it is in its format's usual form, and the
// long way otherwise: every combination of what the form assumes (power
// bit, off, extra bytes, a new bit group, facings, fewer children, the
// format) gives
// the long form's bytes, for every entry of every stock class; and names
// equal to the class's but in other storage, or a class's child name
// changed in place after the forms were made, are compared by content.
func TestSubsystemHealthyFormMatchesLongForm(t *testing.T) {
	long := func(s SubsystemState) string {
		s.forms = nil
		return string(s.AppendJSON(nil))
	}
	check := func(what string, s SubsystemState) {
		t.Helper()
		if got, want := string(s.AppendJSON([]byte("x"))), "x"+long(s); got != want {
			t.Fatalf("%s:\n%s\nlong form\n%s", what, got, want)
		}
		plain := s
		plain.forms = nil
		if got, want := string(s.appendString([]byte("x"))), "x"+string(plain.appendString(nil)); got != want {
			t.Fatalf("%s text:\n%s\nlong form\n%s", what, got, want)
		}
	}
	for _, spec := range stockShips {
		c := newShipClass(spec)
		for i := range c.entries {
			base := c.entries[i].state
			base.Condition = 255
			base.Children = make([]uint8, len(base.ChildNames))
			for k := range base.Children {
				base.Children[k] = 255
			}
			if base.Format == SubsystemShield {
				base.Facings = []uint8{255, 255, 255, 255, 255, 255}
			}
			for v := range 1 << 7 {
				s := base
				s.HasPower, s.Off, s.NewBitGroup = v&1 != 0, v&2 != 0, v&4 != 0
				if v&8 != 0 {
					s.Extra = []uint8{}
				}
				if v&16 != 0 && s.Facings != nil {
					s.Facings = []uint8{255, 255, 255, 255, 255, 254}
				}
				if v&32 != 0 && len(s.Children) > 0 {
					s.Children = s.Children[:len(s.Children)-1]
				}
				if v&64 != 0 {
					s.Facings = nil
				}
				s.Power, s.MainBattery, s.BackupBattery = uint8(v*2), uint8(255-v), uint8(v*3)
				check(spec.Name+" entry "+strconv.Itoa(i)+" variant "+strconv.Itoa(v), s)
			}
			for f := range len(subsystemFormatNames) + 1 { // another format (OpenBC's shield byte)
				s := base
				s.Format, s.HasPower, s.Power = SubsystemFormat(f), true, 100
				check(spec.Name+" entry "+strconv.Itoa(i)+" as format "+strconv.Itoa(f), s)
			}
			copied := base
			copied.Name = string([]byte(base.Name))
			copied.ChildNames = make([]string, len(base.ChildNames))
			for k, n := range base.ChildNames {
				copied.ChildNames[k] = string([]byte(n))
			}
			check(spec.Name+" names in other storage", copied)
			if len(base.ChildNames) > 0 {
				names := append([]string(nil), base.ChildNames...)
				moved := base
				moved.ChildNames = names
				names[len(names)-1] = "Renamed"
				check(spec.Name+" child renamed", moved)
			}
		}
	}
}

// A StateUpdate decoded with a class writes its class member from the
// class entries' forms; the bytes are those of the long way, and a
// StateUpdate whose Class is another spec (even of the same name), a
// renamed one or none writes the long way.
func TestStateUpdateClassMemberMatchesLongForm(t *testing.T) {
	long := func(m *StateUpdate) string {
		plain := *m
		plain.Subsystems = append([]SubsystemState(nil), m.Subsystems...)
		for i := range plain.Subsystems {
			plain.Subsystems[i].forms = nil
		}
		return string(plain.AppendJSON(nil))
	}
	check := func(what string, m *StateUpdate) {
		t.Helper()
		if got, want := string(m.AppendJSON(nil)), long(m); got != want {
			t.Fatalf("%s:\n%s\nlong form\n%s", what, got, want)
		}
	}
	for _, spec := range stockShips {
		c := newShipClass(spec)
		m := &StateUpdate{Object: PlayerObjectID(1), Flags: StateSubsystems, Class: spec, SubsystemStart: 1}
		for i := 1; i < min(4, len(c.entries)); i++ {
			m.Subsystems = append(m.Subsystems, c.entries[i].state)
		}
		check(spec.Name, m)
		if m.classForms() == nil && len(m.Subsystems) > 0 {
			t.Fatalf("%s: the class member is not taken from the forms", spec.Name)
		}
		same := *spec
		same.Name = string([]byte(spec.Name))
		m.Class = &same
		check(spec.Name+" as another spec", m)
		renamed := *spec
		renamed.Name = "Re<named>"
		m.Class = &renamed
		check(spec.Name+" renamed", m)
		if !strings.Contains(string(m.AppendJSON(nil)), `"class":"Re\u003cnamed\u003e"`) {
			t.Fatalf("%s renamed: %s", spec.Name, m.AppendJSON(nil))
		}
		m.Class = nil
		check(spec.Name+" without class", m)
	}
}
