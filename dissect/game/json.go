package game

// The JSON forms of the game messages: each type appends its own JSON with
// AppendJSON (see jsonenc.Appender), which `decode --json` and `decode -V`
// call directly, without encoding/json's reflection.
//
// A message whose JSON is what encoding/json makes of its struct tags gets
// its AppendJSON generated from the tags into zjson.go (go generate; see
// internal/jsongen); TestGeneratedIsCurrent fails when zjson.go is
// stale. The others write theirs by hand beside the message, because
// their JSON adds fields the struct tags cannot say (names of codes, a
// flag's meaning, fields chosen by an event class or the dirty flags), and
// implement MarshalJSON with it, so that encoding/json users see the same
// bytes. This file holds what those share.

//go:generate go run zjson_gen.go

import (
	"unsafe"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/internal/jsonenc"
)

func appendUint(b []byte, v uint64) []byte { return jsonenc.Uint(b, v) }
func appendInt(b []byte, v int64) []byte   { return jsonenc.Int(b, v) }

// appendIDName appends {"<key>":"0x%08X","name":"<name>"}, the name left out
// when empty: the form of event codes, event classes and object classes.
// open is the object's start up to the value's quote: {"code":".
func appendIDName(b []byte, open string, v uint32, name string) []byte {
	b = jsonenc.Hex32(append(b, open...), v)
	b = append(b, '"')
	if name != "" {
		b = jsonenc.String(append(b, `,"name":`...), name)
	}
	return append(b, '}')
}

// appendNumberName appends {"id":n,"name":"<name>"}, the name left out when
// empty: the form of species and torpedo types.
func appendNumberName(b []byte, v uint8, name string) []byte {
	b = appendUint(append(b, `{"id":`...), uint64(v))
	if name != "" {
		b = jsonenc.String(append(b, `,"name":`...), name)
	}
	return append(b, '}')
}

// AppendJSON appends {"id":5,"name":"SOVEREIGN"} (name left out beyond the
// stock table).
func (s Species) AppendJSON(b []byte) []byte { return appendNumberName(b, uint8(s), s.Name()) }

const hexDigits = "0123456789ABCDEF"

// appendContactJSON appends a contact point as the raw direction bytes'
// vector, the magnitude byte, and the point in bounding-radius units:
// {"dir":[x,y,z],"mag":n,"point":[x,y,z]}.
func appendContactJSON(b []byte, c dissect.Contact) []byte {
	b = c.Dir.AppendJSON(append(b, `{"dir":`...))
	b = appendUint(append(b, `,"mag":`...), uint64(c.Mag))
	b = c.Vec().AppendJSON(append(b, `,"point":`...))
	return append(b, '}')
}

// appendContactsJSON appends the contact count and the contacts:
// "contact_count":n,"contacts":[...] (the list is [] when empty).
func appendContactsJSON(b []byte, cs []dissect.Contact) []byte {
	b = appendInt(append(b, `"contact_count":`...), int64(len(cs)))
	b = append(b, `,"contacts":[`...)
	for i, c := range cs {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendContactJSON(b, c)
	}
	return append(b, ']')
}

// formatMembers are the "format" members of the known formats, written
// whole rather than escaped for every state.
var formatMembers = func() (t [len(subsystemFormatNames)]string) {
	for f := range t {
		t[f] = string(jsonenc.String([]byte(`,"format":`), SubsystemFormat(f).String()))
	}
	return t
}()

// AppendJSON appends the fields that the state's format puts on the wire,
// with each child's name next to its condition.
func (s *SubsystemState) AppendJSON(b []byte) []byte {
	if f := s.forms; f != nil && f.fits(s) {
		if s.Condition == 255 && len(s.Children) == len(f.children) && allFull(s.Children) {
			if out, ok := s.appendHealthyJSON(b, f); ok {
				return out
			}
		}
		b = append(b, f.head...)
		b = append(b, conditionJSON[s.Condition]...)
		switch {
		case len(s.Children) == 0:
		case len(s.Children) == len(f.children) && allFull(s.Children):
			b = append(b, f.childrenFull...)
		default:
			b = append(b, `,"children":[`...)
			for i, c := range s.Children {
				if i > 0 {
					b = append(b, ',')
				}
				b = append(b, f.children[i]...)
				b = append(appendUint(b, uint64(c)), '}')
			}
			b = append(b, ']')
		}
		return s.appendJSONTail(b)
	}
	b = s.appendJSONHead(b)
	b = appendUint(b, uint64(s.Condition))
	b = appendConditionFraction(append(b, `,"fraction":`...), s.Condition)
	if len(s.Children) > 0 {
		b = append(b, `,"children":[`...)
		for i, c := range s.Children {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendChildOpening(b, s.ChildNames, i)
			b = appendUint(b, uint64(c))
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return s.appendJSONTail(b)
}

// appendHealthyJSON appends the JSON of a state at full health (condition
// and every child 255, which the caller has checked), in the usual form
// of its format: powered, on, without extra bytes or a new bit group; a
// shield too, every facing 255; a power plant; a format without a tail.
// It starts from f.healthy, made once, and ok is false (b unchanged) for
// a state in another form.
func (s *SubsystemState) appendHealthyJSON(b []byte, f *subsystemForms) (out []byte, ok bool) {
	switch s.Format {
	case SubsystemPowered, SubsystemShield:
		if s.Off || s.Extra != nil || s.NewBitGroup ||
			s.Format == SubsystemShield && !(len(s.Facings) == ShieldFacings && allFull(s.Facings)) {
			return b, false
		}
		b = append(b, f.healthy...)
		if s.HasPower {
			b = appendUint(append(b, `true,"power":`...), uint64(s.Power))
		} else {
			b = append(b, "false"...) // the ship's owner is not sent its power
		}
		if s.Format == SubsystemShield {
			b = append(b, fullFacingsJSON...)
		}
	case SubsystemPower:
		b = appendUint(append(b, f.healthy...), uint64(s.MainBattery))
		b = appendUint(append(b, `,"backup_battery":`...), uint64(s.BackupBattery))
	default:
		b = append(b, f.healthy...)
	}
	return append(b, '}'), true
}

// appendJSONHead appends the state's JSON up to its condition:
// {"index":I,"name":"N","format":"F","condition":
func (s *SubsystemState) appendJSONHead(b []byte) []byte {
	b = appendInt(append(b, `{"index":`...), int64(s.Index))
	if s.Name != "" {
		b = jsonenc.String(append(b, `,"name":`...), s.Name)
	}
	if int(s.Format) < len(formatMembers) {
		b = append(b, formatMembers[s.Format]...)
	} else {
		b = jsonenc.String(append(b, `,"format":`...), s.Format.String())
	}
	return append(b, `,"condition":`...)
}

// appendChildOpening appends the opening of child i's object, up to its
// condition: {"name":"<name>","condition": (without the name when there
// is none).
func appendChildOpening(b []byte, names []string, i int) []byte {
	b = append(b, '{')
	if i < len(names) && names[i] != "" {
		b = jsonenc.String(append(b, `"name":`...), names[i])
		b = append(b, ',')
	}
	return append(b, `"condition":`...)
}

// subsystemForms are the parts of a class entry's JSON that the class
// decides, made once when a decoder first meets the class: the entry's
// opening up to its condition and each child's opening (names escaped,
// index and format written), and its quoted name for the text form. They are a third of the JSON of a battle's
// StateUpdates. The states decoded with the entry point to them; AppendJSON
// uses them only while the state still has the index, name, format and
// child names they were made from (fits), so a state changed since writes
// the long way, and the bytes are the same either way.
type subsystemForms struct {
	index      int
	name       string
	format     SubsystemFormat
	childNames []string // a copy: the state's names are compared with these
	head       string
	children   []string
	// childrenFull is the children member with every child at 255 (full
	// health: nearly always).
	childrenFull string
	// healthy is the JSON of the entry at full health (condition and
	// every child 255) up to the values that vary: the power bit of a
	// powered state or a shield (it ends with `,"has_power":`), the main
	// battery of a power plant; another format's lacks only the closing
	// brace (see appendHealthyJSON).
	healthy string
	// healthyText is healthy's text form: the quoted name, the condition
	// and every child at 255, and " power=" or " battery=" (see
	// appendHealthyText).
	healthyText string
	quoted      string // the name in the text form, quoted
	// classMember is ,"class":"<name>","subsystems":[ for class, whose
	// name was className: the opening of a StateUpdate's states (see
	// StateUpdate.classForms).
	class       *ShipSpec
	className   string
	classMember string
}

// allFull reports whether every byte of v is 255.
func allFull(v []uint8) bool {
	for _, c := range v {
		if c != 255 {
			return false
		}
	}
	return true
}

// fullFacingsJSON is the facings member of a shield at full strength.
const fullFacingsJSON = `,"facings":[255,255,255,255,255,255]`

func newSubsystemForms(index int, sp *SubsystemSpec) *subsystemForms {
	f := &subsystemForms{index: index, name: sp.Name, format: sp.Format, childNames: append([]string(nil), sp.Children...)}
	s := SubsystemState{Index: index, Name: sp.Name, Format: sp.Format}
	f.head = string(s.appendJSONHead(nil))
	f.quoted = string(dissect.AppendQuote(nil, sp.Name))
	f.children = make([]string, len(sp.Children))
	full := []byte(`,"children":[`)
	for i := range sp.Children {
		f.children[i] = string(appendChildOpening(nil, sp.Children, i))
		if i > 0 {
			full = append(full, ',')
		}
		full = append(append(full, f.children[i]...), `255}`...)
	}
	f.childrenFull = string(append(full, ']'))
	healthy := append([]byte(f.head), conditionJSON[255]...)
	if len(f.children) > 0 {
		healthy = append(healthy, f.childrenFull...)
	}
	switch f.format {
	case SubsystemPowered, SubsystemShield:
		healthy = append(healthy, `,"has_power":`...)
	case SubsystemPower:
		healthy = append(healthy, `,"main_battery":`...)
	}
	f.healthy = string(healthy)
	text := append([]byte(f.quoted), "=255"...)
	for i := range f.children {
		text = append(text, "(,"[min(i, 1)])
		text = append(text, "255"...)
	}
	if len(f.children) > 0 {
		text = append(text, ')')
	}
	switch f.format {
	case SubsystemPowered, SubsystemShield:
		text = append(text, " power="...)
	case SubsystemPower:
		text = append(text, " battery="...)
	}
	f.healthyText = string(text)
	return f
}

// fits reports whether s has what f was made from.
func (f *subsystemForms) fits(s *SubsystemState) bool {
	if s.Index != f.index || s.Format != f.format || !sameString(s.Name, f.name) ||
		len(s.ChildNames) != len(f.childNames) || len(s.Children) > len(f.children) {
		return false
	}
	for i, n := range s.ChildNames {
		if !sameString(n, f.childNames[i]) {
			return false
		}
	}
	return true
}

// sameString is a == b, without a call when the two share their bytes:
// a decoded state's names are its class's, which f's are too.
func sameString(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}

// conditionJSON (tables_gen.go) holds each condition byte's JSON and its
// fraction's, `255,"fraction":1`.

// appendJSONTail appends what follows the children: the format's fields,
// and the closing brace.
func (s *SubsystemState) appendJSONTail(b []byte) []byte {
	switch s.Format {
	case SubsystemPowered, SubsystemShield:
		b = jsonenc.Bool(append(b, `,"has_power":`...), s.HasPower)
		if s.HasPower {
			b = appendUint(append(b, `,"power":`...), uint64(s.Power))
		}
		if s.Off {
			b = append(b, `,"off":true`...)
		}
		if s.Format == SubsystemShield {
			if len(s.Facings) == ShieldFacings && allFull(s.Facings) {
				b = append(b, fullFacingsJSON...)
			} else {
				b = appendByteList(append(b, `,"facings":`...), s.Facings)
			}
		}
		if s.Extra != nil {
			b = jsonenc.Hex(append(b, `,"extra":`...), s.Extra)
		}
		if s.NewBitGroup {
			b = append(b, `,"new_bit_group":true`...)
		}
	case SubsystemPower:
		b = appendUint(append(b, `,"main_battery":`...), uint64(s.MainBattery))
		b = appendUint(append(b, `,"backup_battery":`...), uint64(s.BackupBattery))
	}
	return append(b, '}')
}
