// Package wireshark writes a Wireshark dissector in Lua for Bridge
// Commander's protocol, generated from bcwire's own tables: the cipher's
// constants, transport types, opcode names, event code and class names,
// GameSpy query words, and the fixed layouts of game messages (Layouts).
// Nothing in the Lua is kept by hand apart from the code that walks those
// tables, so a fact changed in the dissector changes the Lua on the next
// `bcwire wireshark`.
//
// The model is Wireshark's own packet-raknet.c: a heuristic UDP dissector
// with a port preference, a decrypted data source, transport messages as
// subtrees, fragments reassembled per flow, and one subtree per game
// message.
package wireshark

import (
	_ "embed"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/template"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
)

//go:embed dissector.lua.tmpl
var luaTemplate string

// DefaultPort is the game's UDP port, the dissector's default preference.
const DefaultPort = 22101

// Generate writes the dissector. version names the bcwire that wrote it.
func Generate(w io.Writer, version string) error {
	t, err := template.New("lua").Funcs(template.FuncMap{
		"luastr": luaString,
		"lower":  abbrev,
	}).Parse(luaTemplate)
	if err != nil {
		return err
	}
	return t.Execute(w, data(version))
}

type luaField struct {
	Abbrev string // bcwire.<message>.<field>
	Var    string // the Lua variable holding the ProtoField
	Label  string
	Kind   string // the Lua reader: see the template's read_field
	Offset int
	Size   int
	Values string // a value_string table's name, or ""
}

type luaMessage struct {
	Op     int
	Name   string
	Fixed  bool
	Fields []luaField
}

type pair struct {
	Key  uint32
	Name string
}

type tmplData struct {
	Version    string
	Port       int
	Rows       [256][7]uint32
	M          [5]uint32
	Opcodes    []pair
	Transports []pair
	EventCodes []pair
	EventClass []pair
	QueryWords []pair // Key 1 when a value follows
	Messages   []luaMessage
}

var kindNames = map[Kind]string{
	U8: "u8", I8: "i8", Bool: "bool", U16: "u16", U32: "u32", I32: "i32", F32: "f32",
	CF16: "cf16", ObjID: "objid", Dir3: "dir3", CV4: "cv4", CV4F: "cv4f", Contact: "contact", Vec3: "vec3",
}

func data(version string) tmplData {
	d := tmplData{Version: version, Port: DefaultPort}
	rows, m := dissect.CipherRowTable()
	// The dissector needs only the low 16 bits of every term: each output
	// byte is made from bits 0-15 of the accumulator, and products and sums
	// modulo 2^16 depend only on their operands modulo 2^16. So Lua's
	// doubles compute them exactly.
	for f := range rows {
		for i := range rows[f] {
			d.Rows[f][i] = rows[f][i] & 0xFFFF
		}
	}
	for i := range m {
		d.M[i] = m[i] & 0xFFFF
	}
	for op := range 256 {
		o := game.Opcode(op)
		if s := o.String(); !strings.HasPrefix(s, "custom(") && !strings.HasPrefix(s, "unknown(") {
			d.Opcodes = append(d.Opcodes, pair{uint32(op), s})
		}
	}
	for t := range 256 {
		tt := dissect.TransportType(t)
		if tt.Known() {
			d.Transports = append(d.Transports, pair{uint32(t), tt.String()})
		}
	}
	for c, n := range game.EventCodeNames() {
		d.EventCodes = append(d.EventCodes, pair{uint32(c), n})
	}
	for c, n := range game.EventClassNames() {
		d.EventClass = append(d.EventClass, pair{uint32(c), n})
	}
	for w, valued := range dissect.GameSpyQueryWords() {
		v := uint32(0)
		if valued {
			v = 1
		}
		d.QueryWords = append(d.QueryWords, pair{v, w})
	}
	byKey := func(a, b pair) int { return int(a.Key) - int(b.Key) }
	slices.SortFunc(d.EventCodes, byKey)
	slices.SortFunc(d.EventClass, byKey)
	slices.SortFunc(d.QueryWords, func(a, b pair) int { return strings.Compare(a.Name, b.Name) })
	for _, l := range Layouts() {
		msg := luaMessage{Op: int(l.Op), Name: l.Name, Fixed: l.Fixed}
		for _, f := range l.Fields {
			lf := luaField{
				Abbrev: Abbrev(l.Name, f.Name),
				Var:    fmt.Sprintf("f_%02x_%s", int(l.Op), f.Name),
				Label:  strings.ReplaceAll(f.Name, "_", " "),
				Kind:   kindNames[f.Kind],
				Offset: f.Offset,
				Size:   f.Kind.Size(),
			}
			switch {
			case f.Name == "code" && f.Kind == U32:
				lf.Values = "event_codes"
			case f.Name == "class" && f.Kind == U32:
				lf.Values = "event_classes"
			}
			msg.Fields = append(msg.Fields, lf)
		}
		d.Messages = append(d.Messages, msg)
	}
	return d
}

// Abbrev is the Wireshark field name of a message's field.
func Abbrev(message, field string) string { return "bcwire." + abbrev(message) + "." + field }

// abbrev is a message name as a Wireshark field name part: lower case,
// anything but letters and digits an underscore.
func abbrev(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return strings.Trim(b.String(), "_")
}

// luaString quotes s as a Lua string literal.
func luaString(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7F:
			fmt.Fprintf(&b, "\\%03d", r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
