package game

// The subsystem-state section of StateUpdate (0x1C, flag 0x20): each ship
// class's top-level subsystems write their states in a round-robin, a few
// entries per update. This file holds that section's decoding, encoding and
// text; stateupdate.go holds the rest of the message.

import (
	"strconv"
	"strings"

	"github.com/bcwire/bcwire/dissect"
)

// SubsystemState is one top-level subsystem's state in the StateUpdate
// subsystem round-robin (its WriteState output): the condition byte, one
// condition byte per child, then by format the packed power bit and power
// byte (powered), the two battery bytes (power), or the power bit and byte
// and six facing bytes (shield). Conditions are the fraction of full
// health times 255, truncated: 0xFF full, 0x00 destroyed. ObjCreate ship
// bodies carry the same states in another form (see createStates).
type SubsystemState struct {
	// Index is the entry's position in the class's subsystem list.
	Index int `json:"index"`
	// Name is the entry's name (informational; not on the wire).
	Name      string          `json:"name"`
	Format    SubsystemFormat `json:"format"`
	Condition uint8           `json:"condition"`
	// Children holds the children's condition bytes in list order;
	// ChildNames (informational) their names.
	Children   []uint8  `json:"-"`
	ChildNames []string `json:"-"`
	// HasPower is the powered format's packed bit; Power (the power
	// percentage wanted, 0-100) is on the wire only when it is set. The
	// host sets it for every receiver except the ship's owner.
	HasPower bool  `json:"has_power"`
	Power    uint8 `json:"power"`
	// Off is an ObjCreate state's switch: there the power byte is signed,
	// and zero or negative (Power then holds its magnitude) means off.
	Off bool `json:"off"`
	// Facings are the shield generator's six facing bytes (0xFF in every
	// stock sample; aliases the input when decoded).
	Facings []uint8 `json:"-"`
	// Extra are the bytes a weapon system writes after its power byte in
	// an ObjCreate state (their meaning is not known; see createExtra).
	Extra []uint8 `json:"-"`
	// NewBitGroup marks a power bit that opened a new bit group byte
	// while the open group had room, which stock never does (OpenBC's
	// server does: warnOpenBCGroups).
	NewBitGroup bool `json:"new_bit_group"`
	// MainBattery and BackupBattery are the power format's battery levels
	// (255 = full).
	MainBattery   uint8 `json:"main_battery"`
	BackupBattery uint8 `json:"backup_battery"`

	// forms are the JSON parts of the class entry the state was decoded
	// with (nil for a state made otherwise).
	forms *subsystemForms
}

// readSubsystems decodes the states after the start index with the class
// c, or keeps them as bytes when c is nil or the bytes do not fit it.
func (m *StateUpdate) readSubsystems(r *dissect.Reader, c *shipClass) {
	if c != nil {
		if m.readByClass(r, c) {
			m.Class = c.spec
			return
		}
		m.whyRaw, m.tried = undecodedMismatch, c.spec
	} else {
		m.whyRaw = undecodedUnknownClass
	}
	m.SubsystemsUndecoded = true
	lead := m.leadBuf[:0]
	for r.BitsLeft() > 0 && r.Err() == nil {
		lead = append(lead, r.Bit("subsystem power bit"))
	}
	if len(lead) > 0 {
		m.SubsystemLeadBits = lead
	}
	m.SubsystemData = r.Bytes(r.Len(), "subsystem states")
}

// The ways OpenBC's server writes subsystem states unlike stock, seen in
// its traffic (docs/protocol-notes.md): the shield generator as a base
// subsystem, and a new bit group byte for a power bit where stock would
// have put it in the open group (after a group of fewer than five bits,
// once a non-powered state came between).
const (
	warnOpenBCShield = "OpenBC form: the shield generator's state is its condition byte alone " +
		"(stock writes it as a powered subsystem: condition, has-power bit, power byte when set, six facing bytes)"
	warnOpenBCGroups = "OpenBC form: a power bit opens a new bit group byte while the open group has room " +
		"(stock fills a group to five bits before opening another)"

	openbcShield uint8 = 1 // m.openbc's bits
	openbcGroups uint8 = 2
)

// openbcWarnings[m.openbc] is the warning for the deviations m.openbc holds.
var openbcWarnings = [4]string{"", warnOpenBCShield, warnOpenBCGroups, warnOpenBCShield + "; " + warnOpenBCGroups}

// readByClass decodes the states with c's list when they fit (see
// statesByClass), and otherwise reports false and leaves r as it was.
func (m *StateUpdate) readByClass(r *dissect.Reader, c *shipClass) bool {
	b := r.Rest()
	bits, ok := m.statesByClass(b, r.BitGroup(), c)
	if ok {
		r.Commit(b[len(b):], bits)
	}
	return ok
}

// statesByClass decodes b, the rest of the message after the start index,
// as subsystem states of c's list from entry m.SubsystemStart on, with
// bits the packed-bit state where b starts. The states fit when they end
// exactly at the end of b with every packed bit used; otherwise it reports
// false and m.Subsystems is empty. Misfits are never errors (the section is
// then kept as bytes), so the states are read straight from b by offset,
// with no error bookkeeping: this is the innermost loop of game decoding.
// Each state is what the subsystem's WriteState wrote (see SubsystemState).
// Bytes that do not fit the stock form are tried in OpenBC's form (the
// shield generator as a base subsystem, bit groups closed early);
// m.openbc then says which of those the bytes have.
func (m *StateUpdate) statesByClass(b []byte, bits dissect.BitGroup, c *shipClass) (dissect.BitGroup, bool) {
	m.openbc = 0
	if after, ok := m.statesByForm(b, bits, c, false); ok {
		return after, true
	}
	return m.statesByForm(b, bits, c, true)
}

// statesByForm is statesByClass in one form: stock, or with openbc set
// OpenBC's (shield generator as a base subsystem, and a new bit group
// allowed after a short one); it sets m.openbc to what the OpenBC form
// needed, and fails when it needed neither (stock has then spoken).
func (m *StateUpdate) statesByForm(b []byte, bits dissect.BitGroup, c *shipClass, openbc bool) (dissect.BitGroup, bool) {
	m.Subsystems = m.Subsystems[:0]
	if int(m.SubsystemStart) >= len(c.entries) {
		return bits, false
	}
	t := &c.entries[m.SubsystemStart]
	// With the capacity cut to the length, the children's slice needs no
	// check beyond the length check. Offsets and counts are unsigned, as
	// the bounds checks are: the compiler then sees that the loop's own
	// tests cover them.
	b = b[:len(b):len(b)]
	size := uint(len(b))
	// Every state takes at least a byte, so there are at most size of
	// them: with that many slots ready, the loop needs no test of its own
	// for room, and makes no call, so that its values stay in registers
	// (the Go register ABI saves none across a call). The slots kept are
	// then as many as the longest section's bytes, where growing as the
	// states came kept as many as its states: no more than that for a
	// hostile section of one-byte states, a handful more for the stock
	// ten-byte batches.
	if uint(cap(m.Subsystems)) < size {
		m.Subsystems = make([]SubsystemState, 0, max(size, 8))
	}
	list := m.Subsystems[:size]
	var n, p uint
	var dev uint8 // the OpenBC deviations used
	for p < size {
		e := &t.state
		end := p + 1 + uint(len(e.ChildNames)) // condition and child conditions
		if end > size {
			return bits, false
		}
		cond, kids := b[p], b[p+1:end:end]
		p = end
		// The class's part in one copy, which also zeroes the rest.
		s := &list[n]
		*s = *e
		n++
		s.Condition, s.Children = cond, kids
		switch e.Format {
		case SubsystemPowered, SubsystemShield:
			if e.Format == SubsystemShield && openbc {
				s.Format = SubsystemBase
				dev |= openbcShield
				break
			}
			if bits.Empty() {
				ok := p < size
				if ok {
					var g dissect.BitGroup
					if g, ok = bits.Opened(b[p]); !ok && openbc {
						// After a short group: a fresh group has no
						// size rule to break.
						if g, ok = (dissect.BitGroup{}).Opened(b[p]); ok {
							dev |= openbcGroups
							s.NewBitGroup = true
						}
					}
					bits = g
				}
				if !ok {
					return bits, false
				}
				p++
			}
			if s.HasPower, bits = bits.Next(); s.HasPower {
				if p >= size {
					return bits, false
				}
				s.Power = b[p]
				p++
			}
			if e.Format == SubsystemShield {
				if p+ShieldFacings > size {
					return bits, false
				}
				s.Facings = b[p : p+ShieldFacings : p+ShieldFacings]
				p += ShieldFacings
			}
		case SubsystemPower:
			if p+2 > size {
				return bits, false
			}
			s.MainBattery, s.BackupBattery = b[p], b[p+1]
			p += 2
		}
		t = t.next
	}
	if !bits.Empty() || openbc && dev == 0 {
		return bits, false
	}
	m.openbc = dev
	m.Subsystems = m.Subsystems[:n] // list's array: only the length changes
	return bits, true
}

// append writes s in its StateUpdate form.
func (s *SubsystemState) append(w *dissect.Writer) {
	w.U8(s.Condition)
	w.Raw(s.Children)
	switch s.Format {
	case SubsystemPowered, SubsystemShield:
		if s.NewBitGroup {
			w.EndBits()
		}
		w.Bit(s.HasPower)
		if s.HasPower {
			w.U8(s.Power)
		}
		if s.Format == SubsystemShield {
			appendFacings(w, s.Facings)
		}
	case SubsystemPower:
		w.U8(s.MainBattery)
		w.U8(s.BackupBattery)
	}
}

// appendFacings writes the six facing bytes: f's, then 0xFF (full) for
// any that f lacks.
func appendFacings(w *dissect.Writer, f []uint8) {
	for i := range ShieldFacings {
		if i < len(f) {
			w.U8(f[i])
		} else {
			w.U8(0xFF)
		}
	}
}

func misfitNote(s *ShipSpec) string { return "bytes do not fit the " + s.Name + " subsystem list" }

// misfitNotes holds misfitNote of each stock class.
var misfitNotes = func() map[*ShipSpec]string {
	t := make(map[*ShipSpec]string, len(stockShips))
	for _, s := range stockShips {
		t[s] = misfitNote(s)
	}
	return t
}()

// subsystemNote says why the subsystem section is undecoded.
func (m *StateUpdate) subsystemNote() string {
	switch m.whyRaw {
	case undecodedMismatch:
		if note, ok := misfitNotes[m.tried]; ok {
			return note // no allocation for the stock classes
		}
		return misfitNote(m.tried)
	case undecodedUnknownClass:
		return "ship class unknown: no ObjCreate seen for this object"
	}
	if m.SubsystemsUndecoded {
		return "undecoded"
	}
	return ""
}

// appendString appends s as `"Tractors"=255(255,255) power=100`.
func (s *SubsystemState) appendString(b []byte) []byte {
	if f := s.forms; f != nil && s.Format == f.format && s.Name != "" && sameString(s.Name, f.name) &&
		s.Condition == 255 && len(s.Children) == len(f.children) && allFull(s.Children) {
		if out, ok := s.appendHealthyText(b, f); ok {
			return out
		}
	}
	switch {
	case s.forms != nil && s.Name == s.forms.name && s.Name != "":
		b = append(b, s.forms.quoted...)
	case s.Name == "":
		b = strconv.AppendQuote(b, "#"+strconv.Itoa(s.Index))
	default:
		b = dissect.AppendQuote(b, s.Name)
	}
	b = appendUint(append(b, '='), uint64(s.Condition))
	if len(s.Children) > 0 {
		b = append(b, '(')
		for i, c := range s.Children {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendUint(b, uint64(c))
		}
		b = append(b, ')')
	}
	switch s.Format {
	case SubsystemPowered, SubsystemShield:
		switch {
		case s.Off:
			b = appendUint(append(b, " power=off/"...), uint64(s.Power))
		case s.HasPower:
			b = appendUint(append(b, " power="...), uint64(s.Power))
		default:
			b = append(b, " power=-"...)
		}
		if s.Format == SubsystemShield {
			b = append(b, " facings="...)
			for i, c := range s.Facings {
				if i > 0 {
					b = append(b, '/')
				}
				b = appendUint(b, uint64(c))
			}
		}
		if s.Extra != nil {
			b = append(b, " extra="...)
			for i, c := range s.Extra {
				if i > 0 {
					b = append(b, ' ')
				}
				b = appendHex(b, uint64(c), 2)
			}
		}
	case SubsystemPower:
		b = appendUint(append(b, " battery="...), uint64(s.MainBattery))
		b = appendUint(append(b, '/'), uint64(s.BackupBattery))
	}
	return b
}

// appendHealthyText appends the text of a state at full health (condition
// and every child 255, under the name and format f was made with, which
// the caller has checked) from f.healthyText, in the usual form of its
// format: powered and on, without extra bytes; a shield too, all six
// facings 255; a power plant; a format without a tail. ok is false (b unchanged) for a
// state in another form.
func (s *SubsystemState) appendHealthyText(b []byte, f *subsystemForms) (out []byte, ok bool) {
	switch s.Format {
	case SubsystemPowered, SubsystemShield:
		if s.Off || s.Extra != nil ||
			s.Format == SubsystemShield && !(len(s.Facings) == ShieldFacings && allFull(s.Facings)) {
			return b, false
		}
		b = append(b, f.healthyText...)
		if s.HasPower {
			b = appendUint(b, uint64(s.Power))
		} else {
			b = append(b, '-')
		}
		if s.Format == SubsystemShield {
			b = append(b, fullFacingsText...)
		}
	case SubsystemPower:
		b = appendUint(append(b, f.healthyText...), uint64(s.MainBattery))
		b = appendUint(append(b, '/'), uint64(s.BackupBattery))
	default:
		b = append(b, f.healthyText...)
	}
	return b, true
}

// fullFacingsText is the facings of a shield at full strength.
const fullFacingsText = " facings=255/255/255/255/255/255"

// MarshalJSON is AppendJSON for encoding/json.
func (s SubsystemState) MarshalJSON() ([]byte, error) { return s.AppendJSON(nil), nil }

// appendByteList appends v as a JSON array of numbers.
func appendByteList(b []byte, v []uint8) []byte {
	b = append(b, '[')
	for i, c := range v {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendUint(b, uint64(c))
	}
	return append(b, ']')
}

// notFull describes what of s is not full ("Phasers 50% (a child at 0%)",
// "Sensor Array off at 80%"), or returns "" when all is: condition,
// children, facings and batteries 0xFF, power on at 100%.
func (s *SubsystemState) notFull() string {
	var parts []string
	if s.Condition != 0xFF {
		parts = append(parts, pct(s.Condition))
	}
	low := 0xFF
	for _, c := range s.Children {
		low = min(low, int(c))
	}
	for _, c := range s.Facings {
		low = min(low, int(c))
	}
	if low != 0xFF {
		parts = append(parts, "(a part at "+pct(uint8(low))+")")
	}
	switch s.Format {
	case SubsystemPowered, SubsystemShield:
		switch {
		case s.Off:
			parts = append(parts, "off at "+strconv.Itoa(int(s.Power))+"% power")
		case s.HasPower && s.Power != 100:
			parts = append(parts, strconv.Itoa(int(s.Power))+"% power")
		}
	case SubsystemPower:
		if s.MainBattery != 0xFF || s.BackupBattery != 0xFF {
			parts = append(parts, "batteries "+pct(s.MainBattery)+"/"+pct(s.BackupBattery))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return s.Name + " " + strings.Join(parts, " ")
}

// pct is a condition byte as a whole percentage of full.
func pct(c uint8) string { return pctText[c] }

// appendConditionFraction appends a condition byte as the fraction of full
// health it stands for (condition/255, three decimals: 1, 0.502, 0).
func appendConditionFraction(b []byte, c uint8) []byte { return append(b, conditionFraction[c]...) }

// pctText and conditionFraction (tables_gen.go) are the texts of every
// condition byte, formatted by TestGeneratedTables: a battle's
// StateUpdates carry a condition for every subsystem state, and formatting
// the float each time was a third of decode --json's time on the bundled
// battle.
