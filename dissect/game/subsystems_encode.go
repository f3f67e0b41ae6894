package game

// The sender's side of the subsystem-state section: what a server knows of
// each subsystem and the round-robin batches stock writes of them (used by
// the native server and the traffic generator).

import "github.com/bcwire/bcwire/dissect"

// SubsystemValues is what a sender knows of one top-level subsystem, for
// the encoder helpers.
type SubsystemValues struct {
	Condition uint8
	// Children are the children's conditions in list order; missing
	// entries are sent as 0xFF (full).
	Children []uint8
	// Power is the power percentage wanted (sent for powered subsystems
	// to every player but the ship's owner).
	Power uint8
	// MainBattery and BackupBattery are the reactor's battery levels.
	MainBattery, BackupBattery uint8
	// Facings are the shield generator's facing bytes; missing entries
	// are sent as 0xFF.
	Facings []uint8
}

// FullHealth returns values for every entry of s's list with everything at
// full: conditions 0xFF, power 100%, batteries 0xFF.
func (s *ShipSpec) FullHealth() []SubsystemValues {
	vs := make([]SubsystemValues, len(s.Subsystems))
	for i := range vs {
		vs[i] = SubsystemValues{Condition: 0xFF, Power: 100, MainBattery: 0xFF, BackupBattery: 0xFF}
	}
	return vs
}

// subsystemBudget is the stock round-robin's byte budget per message,
// start index included.
const subsystemBudget = 10

// roundRobin builds one batch of the stock subsystem round-robin: states
// from list entry start on, wrapping after the last entry, until the batch
// (start index byte included) has reached the 10-byte budget or the cursor
// is back at start. The budget is checked after each whole state, so the
// last state may run past it. openBits is the number of packed bits already
// in the message's open bit group (0 when none is open); the power bits
// share that group, which changes how many bytes the batch takes. Children
// conditions are appended to buf. It returns the states, buf and the start
// index of the next batch.
func (s *ShipSpec) roundRobin(dst []SubsystemState, buf []uint8, start int, vals []SubsystemValues, ownShip bool, openBits int) ([]SubsystemState, []uint8, int) {
	n := len(s.Subsystems)
	if n == 0 {
		return dst, buf, 0
	}
	if start < 0 || start >= n {
		start = 0
	}
	first, firstBuf := len(dst), len(buf)
	written := 1 // the start index
	i := start
	for {
		sp := &s.Subsystems[i]
		st := SubsystemState{Index: i, Name: sp.Name, Format: sp.Format, ChildNames: sp.Children, Condition: 0xFF}
		v := SubsystemValues{Condition: 0xFF, Power: 100, MainBattery: 0xFF, BackupBattery: 0xFF}
		if i < len(vals) {
			v = vals[i]
			st.Condition = v.Condition
		}
		for c := range sp.Children {
			if c < len(v.Children) {
				buf = append(buf, v.Children[c])
			} else {
				buf = append(buf, 0xFF)
			}
		}
		written += 1 + len(sp.Children)
		switch sp.Format {
		case SubsystemPowered, SubsystemShield:
			if openBits == 0 || openBits == 5 {
				written++ // a new bit group byte
				openBits = 1
			} else {
				openBits++
			}
			if !ownShip {
				st.HasPower, st.Power = true, v.Power
				written++
			}
			if sp.Format == SubsystemShield {
				for f := range ShieldFacings {
					if f < len(v.Facings) {
						buf = append(buf, v.Facings[f])
					} else {
						buf = append(buf, 0xFF)
					}
				}
				written += ShieldFacings
			}
		case SubsystemPower:
			st.MainBattery, st.BackupBattery = v.MainBattery, v.BackupBattery
			written += 2
		}
		dst = append(dst, st)
		if i++; i == n {
			i = 0
		}
		if i == start || written >= subsystemBudget {
			break
		}
	}
	// Children and facing slices are cut only now: appends may have
	// moved buf.
	pos := firstBuf
	for k := first; k < len(dst); k++ {
		c := len(dst[k].ChildNames)
		dst[k].Children = buf[pos : pos+c : pos+c]
		pos += c
		if dst[k].Format == SubsystemShield {
			dst[k].Facings = buf[pos : pos+ShieldFacings : pos+ShieldFacings]
			pos += ShieldFacings
		}
	}
	return dst, buf, i
}

// FillSubsystems sets m's subsystem section (and flag 0x20) to the batch of
// the stock round-robin that starts at list entry start of spec, with the
// values vals (indexed like spec.Subsystems; nil or missing entries mean
// full health, 100% power). ownShip says the message goes to the ship's
// own player, who gets no power bytes. Set the header first: its packed
// bits (headerBits) share groups with the section's. It returns the start
// index of the next batch. A spec with no subsystems
// leaves m unchanged. The states' Children use a buffer inside m that the
// next call reuses, so a steady sender allocates nothing.
func (m *StateUpdate) FillSubsystems(spec *ShipSpec, start int, vals []SubsystemValues, ownShip bool) (next int) {
	if spec == nil || len(spec.Subsystems) == 0 {
		return 0
	}
	open := m.headerBits()
	m.Flags |= StateSubsystems
	m.SubsystemsUndecoded, m.SubsystemData, m.SubsystemLeadBits = false, nil, nil
	m.Class = spec
	m.Subsystems, m.childBuf, next = spec.roundRobin(m.Subsystems[:0], m.childBuf[:0], start, vals, ownShip, open)
	if start < 0 || start >= len(spec.Subsystems) {
		start = 0
	}
	m.SubsystemStart = uint8(start)
	return next
}

// AppendSubsystemStates appends one batch of the stock subsystem
// round-robin of a ship of class s, as it follows the dirty flags: the
// start index, then the states from list entry start on until the 10-byte
// budget is reached (see FillSubsystems for vals and ownShip). It assumes
// no packed bit precedes the section in the message (flags 0x01 and 0x40
// clear); otherwise build the message with StateUpdate.FillSubsystems. It
// returns the extended buffer and the start index of the next batch.
func (s *ShipSpec) AppendSubsystemStates(b []byte, start int, vals []SubsystemValues, ownShip bool) ([]byte, int) {
	if len(s.Subsystems) == 0 {
		return b, 0
	}
	var arr [16]SubsystemState
	states, _, next := s.roundRobin(arr[:0], nil, start, vals, ownShip, 0)
	if start < 0 || start >= len(s.Subsystems) {
		start = 0
	}
	w := dissect.NewWriter(b)
	w.U8(uint8(start))
	for i := range states {
		states[i].append(w)
	}
	return w.Bytes(), next
}
