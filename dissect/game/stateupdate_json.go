package game

// StateUpdate's JSON form: the fields of the flags that are set, as its
// text form shows them.

import "github.com/bcwire/bcwire/internal/jsonenc"

// AppendJSON appends {"value":"0x9D","names":"POS|FWD|UP|SPEED|WEAPONS"}.
func (f StateFlags) AppendJSON(b []byte) []byte { return append(b, stateFlagsJSON[f]...) }

// appendJSONForm appends the JSON form, made from the names.
func (f StateFlags) appendJSONForm(b []byte) []byte {
	b = append(b, `{"value":"0x`...)
	b = append(b, hexDigits[f>>4], hexDigits[f&0xF])
	b = append(b, `","names":"`...)
	if f == 0 {
		b = append(b, "none"...)
	}
	sep := false
	for i, n := range stateFlagNames {
		if f&(1<<i) != 0 {
			if sep {
				b = append(b, '|')
			}
			b, sep = append(b, n...), true
		}
	}
	return append(b, `"}`...)
}

// AppendJSON appends the header (appendHeaderJSON) and the round-robins of
// the flags that are set.
func (m *StateUpdate) AppendJSON(b []byte) []byte {
	b = m.appendHeaderJSON(b)
	f := m.Flags
	if f&StateSubsystems != 0 {
		b = appendUint(append(b, `,"subsystem_start":`...), uint64(m.SubsystemStart))
		if m.SubsystemsUndecoded {
			b = jsonenc.String(append(b, `,"subsystems_undecoded":`...), m.subsystemNote())
			if len(m.SubsystemLeadBits) > 0 {
				b = append(b, `,"subsystem_lead_bits":[`...)
				for i, v := range m.SubsystemLeadBits {
					if i > 0 {
						b = append(b, ',')
					}
					b = jsonenc.Bool(b, v)
				}
				b = append(b, ']')
			}
			b = jsonenc.Hex(append(b, `,"subsystem_data":`...), m.SubsystemData)
		} else {
			switch f := m.classForms(); {
			case f != nil:
				b = append(b, f.classMember...)
			case m.Class != nil:
				b = jsonenc.String(append(b, `,"class":`...), m.Class.Name)
				b = append(b, `,"subsystems":[`...)
			default:
				b = append(b, `,"subsystems":[`...)
			}
			for i := range m.Subsystems {
				if i > 0 {
					b = append(b, ',')
				}
				b = m.Subsystems[i].AppendJSON(b)
			}
			b = append(b, ']')
		}
	}
	if f&StateWeapons != 0 {
		b = append(b, `,"weapons":[`...)
		for i, w := range m.Weapons {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendUint(append(b, `{"index":`...), uint64(w.Index))
			b = appendUint(append(b, `,"health":`...), uint64(w.Health))
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

// classForms returns the forms of the first state when they were made for
// m's class under its present name (their classMember is then m's), nil
// otherwise.
func (m *StateUpdate) classForms() *subsystemForms {
	if m.Class == nil || len(m.Subsystems) == 0 {
		return nil
	}
	if f := m.Subsystems[0].forms; f != nil && f.class == m.Class && sameString(f.className, m.Class.Name) {
		return f
	}
	return nil
}
