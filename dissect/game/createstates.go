package game

// The subsystem states of an ObjCreate/ObjCreateTeam ship body: the whole
// top-level list once, in list order, in a form of its own (the "create
// form"): no start index and no packed bits; every powered subsystem (the
// shield generator too) writes its power byte always, a signed byte whose
// sign is the on/off switch (positive on; zero or negative off, the
// magnitude still the percentage wanted); the weapon systems write bytes
// after it whose meaning is not known (createExtra). No stock bytes show a
// pulse weapon system's or a cloaking device's create state: classes with
// one are kept as bytes. The stock bytes this rests on (the collision
// test's Sovereign, split entry by entry) and what is still open are in
// docs/protocol-notes.md ("Subsystem states").

import (
	"strconv"

	"github.com/bcwire/bcwire/dissect"
)

// createFormKnown reports whether every entry of spec has a create form
// that stock bytes show, and otherwise says which has none.
func createFormKnown(spec *ShipSpec) (string, bool) {
	if why, ok := stockCreateUnknown[spec]; ok {
		return why, why == "" // worked out once: no allocation per message
	}
	return createUnknown(spec)
}

func createUnknown(spec *ShipSpec) (string, bool) {
	for i := range spec.Subsystems {
		if _, ok := spec.Subsystems[i].Kind.createExtra(); !ok {
			return "no stock bytes show the ObjCreate state of " + spec.Subsystems[i].Name +
				" (a " + spec.Subsystems[i].Kind.String() + ")", false
		}
	}
	return "", true
}

// stockCreateUnknown is createUnknown's answer for each stock class.
var stockCreateUnknown = func() map[*ShipSpec]string {
	t := make(map[*ShipSpec]string, len(stockShips))
	for _, s := range stockShips {
		t[s], _ = createUnknown(s)
	}
	return t
}()

// createStates decodes b, the rest of a ship body after the set name, as
// the create-form states of spec's whole list, into dst's array when it
// has room. It returns the states (children, facings and extras alias b)
// or, when b does not fit, nil and the reason.
func createStates(dst []SubsystemState, b []byte, spec *ShipSpec) ([]SubsystemState, string) {
	if why, ok := createFormKnown(spec); !ok {
		return nil, why
	}
	states := dst[:0]
	if cap(states) < len(spec.Subsystems) {
		states = make([]SubsystemState, len(spec.Subsystems))
	}
	states = states[:len(spec.Subsystems)]
	p := 0
	short := func(i int) string {
		return "the bytes end inside the state of " + spec.Subsystems[i].Name + " (entry " + strconv.Itoa(i) +
			" of the " + spec.Name + " list)"
	}
	for i := range spec.Subsystems {
		sp := &spec.Subsystems[i]
		s := &states[i]
		*s = SubsystemState{Index: i, Name: sp.Name, Format: sp.Format, ChildNames: sp.Children}
		extra, _ := sp.Kind.createExtra()
		n := 1 + len(sp.Children)
		switch sp.Format {
		case SubsystemPowered:
			n++
		case SubsystemShield:
			n += 1 + ShieldFacings
		case SubsystemPower:
			n += 2
		}
		if p+n+extra > len(b) {
			return nil, short(i)
		}
		s.Condition = b[p]
		s.Children = b[p+1 : p+1+len(sp.Children) : p+1+len(sp.Children)]
		p += 1 + len(sp.Children)
		switch sp.Format {
		case SubsystemPowered, SubsystemShield:
			s.HasPower = true
			if v := int8(b[p]); v < 1 {
				s.Off, s.Power = true, uint8(-int(v))
			} else {
				s.Power = uint8(v)
			}
			p++
			if sp.Format == SubsystemShield {
				s.Facings = b[p : p+ShieldFacings : p+ShieldFacings]
				p += ShieldFacings
			}
		case SubsystemPower:
			s.MainBattery, s.BackupBattery = b[p], b[p+1]
			p += 2
		}
		if extra > 0 {
			s.Extra = b[p : p+extra : p+extra]
			p += extra
			// The weapon systems' extra bytes are the one constant part of
			// the form in every stock create that fits its list (the
			// Sovereign's, the Galaxy-class Dauntless's): other bytes there
			// mean the list is being walked out of step with the bytes
			// (Valentine's-day packet #56, species 1: phasers 60,
			// torpedoes 64 00), and the states are not taken.
			if want := spawnExtra[sp.Kind]; string(s.Extra) != string(want) {
				return nil, "the " + sp.Name + " bytes after its power are " + hexBytes(s.Extra) +
					" where every stock create that fits has " + hexBytes(want)
			}
		}
	}
	if p != len(b) {
		return nil, strconv.Itoa(len(b)-p) + " bytes follow the last entry of the " + spec.Name + " list"
	}
	return states, ""
}

// hexBytes is b as "60 00".
func hexBytes(b []byte) string {
	const digits = "0123456789ABCDEF"
	out := make([]byte, 0, 3*len(b))
	for i, c := range b {
		if i > 0 {
			out = append(out, ' ')
		}
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

// appendCreate writes s in the create form.
func (s *SubsystemState) appendCreate(w *dissect.Writer) {
	w.U8(s.Condition)
	w.Raw(s.Children)
	switch s.Format {
	case SubsystemPowered, SubsystemShield:
		if s.Off {
			w.U8(uint8(-int(s.Power)))
		} else {
			w.U8(s.Power)
		}
		if s.Format == SubsystemShield {
			appendFacings(w, s.Facings)
		}
	case SubsystemPower:
		w.U8(s.MainBattery)
		w.U8(s.BackupBattery)
	}
	w.Raw(s.Extra)
}

// spawnExtra are the bytes the weapon systems of the stock Sovereign wrote
// after their power bytes at spawn, which AppendCreateStates repeats.
var spawnExtra = [...][]byte{KindBeams: {0x01}, KindTorpedoes: {0x60, 0x00}, KindTractors: {0x01}}

// AppendCreateStates appends the create-form states of a ship of class s
// (an ObjCreate ship body's tail) with the values vals (indexed like
// s.Subsystems; nil or missing entries mean full health, 100% power, on).
// The weapon systems' extra bytes are those the stock Sovereign sent at
// spawn. It reports false, appending nothing, for a class with a subsystem
// whose create form no stock bytes show.
func (s *ShipSpec) AppendCreateStates(b []byte, vals []SubsystemValues) ([]byte, bool) {
	if _, ok := createFormKnown(s); !ok {
		return b, false
	}
	w := dissect.NewWriter(b)
	for i := range s.Subsystems {
		sp := &s.Subsystems[i]
		v := SubsystemValues{Condition: 0xFF, Power: 100, MainBattery: 0xFF, BackupBattery: 0xFF}
		if i < len(vals) {
			v = vals[i]
		}
		st := SubsystemState{Format: sp.Format, Condition: v.Condition, Power: v.Power,
			MainBattery: v.MainBattery, BackupBattery: v.BackupBattery, Facings: v.Facings}
		kids := make([]uint8, len(sp.Children))
		for c := range kids {
			kids[c] = 0xFF
			if c < len(v.Children) {
				kids[c] = v.Children[c]
			}
		}
		st.Children = kids
		if int(sp.Kind) < len(spawnExtra) {
			st.Extra = spawnExtra[sp.Kind]
		}
		st.appendCreate(w)
	}
	return w.Bytes(), true
}
