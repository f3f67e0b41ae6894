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
	"math"
	"strconv"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/internal/jsonenc"
)

// appendJSONF32 appends f in strconv's shortest 'g' form (82.13282, 1e+06),
// and NaN or infinities, which a hostile message can hold and JSON cannot,
// as null.
func appendJSONF32(b []byte, f float32) []byte {
	if f != f || math.IsInf(float64(f), 0) {
		return append(b, "null"...)
	}
	if out, ok := appendShortF32(b, f); ok {
		return out
	}
	return strconv.AppendFloat(b, float64(f), 'g', -1, 32)
}

// appendShortF32 appends f as strconv.AppendFloat(b, float64(f), 'g', -1,
// 32) does, for the values where that is the decimal form with the fewest
// decimals that reads back as f, and reports false (b unchanged) for the
// others. Every StateUpdate has a game time, and strconv's shortest-digit
// search was a tenth of decode --json's time.
//
// For 2e-4 <= |f| <= 999999, 'g' writes the shortest digits in the 'f'
// form, and the fewest digits are the fewest decimals. A decimal reads back
// as f when it is within half a unit in the last place (h) of f, strictly
// (at exactly h the rounding goes to the even neighbour: left to strconv).
// For k = 0, 1, ... the k-decimal nearest f is n/10^k, n the integer
// nearest x = |f|*10^k; it reads back when |x-n| < h*10^k. f has 24
// significant bits and 10^k (k <= 10) at most 24 more, so x, x-n and
// h*10^k are exact in a float64, and the test is exact. Powers of two
// (whose interval is narrower below than above) and exact halves (two
// nearest decimals) are left to strconv. FuzzShortF32MatchesStrconv and
// TestShortF32MatchesStrconv hold the two together.
func appendShortF32(b []byte, f float32) ([]byte, bool) {
	a := float64(f)
	neg := a < 0
	if neg {
		a = -a
	}
	bits := math.Float32bits(float32(a))
	if !(a >= 2e-4 && a <= 999999) || bits&(1<<23-1) == 0 {
		return b, false
	}
	// h = half the spacing of float32s at f: 2^(exponent-23-1).
	h := math.Float64frombits(uint64(int(bits>>23)-127-24+1023) << 52)
	for k := range shortPow10 {
		p := shortPow10[k]
		x := a * p
		n := math.Floor(x)
		d := x - n
		switch {
		case d == 0.5:
			return b, false
		case d > 0.5:
			n, d = n+1, n+1-x
		}
		switch hk := h * p; {
		case d == hk:
			return b, false
		case d > hk:
			continue
		}
		u := uint64(n)
		if neg {
			b = append(b, '-')
		}
		if k == 0 {
			return jsonenc.Uint(b, u), true
		}
		scale := shortPow10u[k]
		b = append(jsonenc.Uint(b, u/scale), '.')
		frac := u % scale
		var digits [len(shortPow10)]byte
		for i := k - 1; i >= 0; i-- {
			digits[i] = byte('0' + frac%10)
			frac /= 10
		}
		return append(b, digits[:k]...), true
	}
	return b, false
}

// shortPow10 and shortPow10u are 10^k for the k appendShortF32 tries.
var (
	shortPow10  = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10}
	shortPow10u = [...]uint64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10}
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
	quoted       string // the name in the text form, quoted
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
	return f
}

// fits reports whether s has what f was made from.
func (f *subsystemForms) fits(s *SubsystemState) bool {
	if s.Index != f.index || s.Name != f.name || s.Format != f.format ||
		len(s.ChildNames) != len(f.childNames) || len(s.Children) > len(f.children) {
		return false
	}
	for i, n := range s.ChildNames {
		if n != f.childNames[i] {
			return false
		}
	}
	return true
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
