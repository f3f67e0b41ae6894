package filter

import (
	"bytes"
	"encoding/json"
	"net/netip"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/internal/jsonenc"
)

// Context is what a record's fields need beyond the record: the file it
// came from and the time of that file's first packet, from which `time`
// counts whatever is filtered out.
type Context struct {
	File  string
	Start time.Time
}

// fieldID names one of the record's own fields (fields.PATH is separate).
type fieldID int

const (
	fFrame fieldID = iota
	fTime
	fSrc
	fDst
	fDir
	fPeer
	fMsg
	fType
	fTypeName
	fReliable
	fSeq
	fAckFlags
	fOpcode
	fName
	fReassembled
	fWarning
	fError
	fFile
	numFields
)

// fieldDef is a field's name (the key decode --json writes it under), the
// Go type a filter sees it as, and whether every record has it.
type fieldDef struct {
	name   string
	typ    any // zero value of the type, for expr's checker
	always bool
}

var fieldDefs = [numFields]fieldDef{
	fFrame:       {"frame", 0, true},
	fTime:        {"time", 0.0, true},
	fSrc:         {"src", "", true},
	fDst:         {"dst", "", true},
	fDir:         {"dir", "", true},
	fPeer:        {"peer", 0, false},
	fMsg:         {"msg", 0, false},
	fType:        {"type", 0, false},
	fTypeName:    {"type_name", "", false},
	fReliable:    {"reliable", false, false},
	fSeq:         {"seq", 0, false},
	fAckFlags:    {"ack_flags", 0, false},
	fOpcode:      {"opcode", 0, false},
	fName:        {"name", "", false},
	fReassembled: {"reassembled", 0, false},
	fWarning:     {"warning", "", false},
	fError:       {"error", "", false},
	fFile:        {"file", "", true},
}

// fieldsRoot is the prefix of a game message's own fields, as decode
// --json nests them: fields.speed, fields.object.id.
const fieldsRoot = "fields"

// envName is the name a field has in expr's environment: its own, but for
// `type`, which is also expr's builtin type() and is renamed by the patcher.
func envName(id fieldID) string {
	if id == fType {
		return "type__"
	}
	return fieldDefs[id].name
}

var fieldByName = func() map[string]fieldID {
	m := map[string]fieldID{}
	for i, d := range fieldDefs {
		m[d.name] = fieldID(i)
	}
	return m
}()

// Names lists every field name a filter or -e takes, for help and errors.
func Names() []string {
	var names []string
	for _, d := range fieldDefs {
		names = append(names, d.name)
	}
	sort.Strings(names)
	return append(names, fieldsRoot+".PATH")
}

// Boxed values made once, so that putting a record's name, direction or
// transport type into a filter's environment allocates nothing.
var (
	opcodeNameBoxed [256]any
	dirNameBoxed    [256]any
	typeNameBoxed   [256]any
	// namesOnce fills the three tables above at the first Compile or
	// NewExtractor, not at start-up: a command run without -Y or -e
	// should not pay for them (issue 30).
	namesOnce sync.Once
	// smallIntBoxed holds 0-65535 boxed (every peer id, sequence number
	// and opcode, and the first frames), made by the first Compile.
	smallIntBoxed     []any
	smallIntBoxedOnce sync.Once
)

func makeBoxedNames() {
	namesOnce.Do(func() {
		for i := range 256 {
			opcodeNameBoxed[i] = game.Opcode(i).String()
			dirNameBoxed[i] = game.Direction(i).String()
			typeNameBoxed[i] = dissect.TransportType(i).String()
		}
	})
}

func makeSmallInts() {
	smallIntBoxedOnce.Do(func() {
		smallIntBoxed = make([]any, 1<<16)
		for i := range smallIntBoxed {
			smallIntBoxed[i] = i
		}
	})
}

func boxInt(n int) any {
	if n >= 0 && n < len(smallIntBoxed) {
		return smallIntBoxed[n]
	}
	return n
}

// value returns field id of r as a filter sees it: nil when r does not
// have it (as decode --json leaves its key out).
func value(id fieldID, r *flow.Record, c *Context, addrs *addrCache) any {
	msg := r.Kind == flow.KindMessage && r.Msg != nil
	switch id {
	case fFrame:
		return boxInt(r.Frame)
	case fTime:
		if r.Time.IsZero() || c.Start.IsZero() {
			return 0.0
		}
		return r.Time.Sub(c.Start).Seconds()
	case fSrc:
		return addrs.get(r.Src)
	case fDst:
		return addrs.get(r.Dst)
	case fDir:
		return dirNameBoxed[r.Dir]
	case fPeer:
		if r.Kind == flow.KindGameSpy || !r.Src.IsValid() {
			return nil
		}
		return boxInt(int(r.Peer))
	case fMsg:
		if r.Kind == flow.KindGameSpy || !r.Src.IsValid() {
			return nil
		}
		return boxInt(r.MsgIndex)
	case fType:
		if msg {
			return boxInt(int(r.Msg.Type))
		}
	case fTypeName:
		if msg {
			return typeNameBoxed[r.Msg.Type]
		}
	case fReliable:
		if msg && r.Msg.Type != dissect.TypeAck {
			return r.Msg.Reliable
		}
	case fSeq:
		if msg && (r.Msg.Reliable || r.Msg.Type == dissect.TypeAck) {
			return boxInt(int(r.Msg.Seq))
		}
	case fAckFlags:
		if msg && r.Msg.Type == dissect.TypeAck {
			return boxInt(int(r.Msg.AckFlags))
		}
	case fOpcode:
		if r.Game != nil {
			return boxInt(int(r.Game.Msg.Opcode()))
		}
	case fName:
		if r.Game != nil {
			return opcodeNameBoxed[r.Game.Msg.Opcode()]
		}
	case fReassembled:
		if r.Game != nil && r.Reassembled > 0 {
			return boxInt(r.Reassembled)
		}
	case fWarning:
		if r.Warning != "" {
			return r.Warning
		}
	case fError:
		if r.Err != nil {
			return r.Err.Error()
		}
	case fFile:
		return c.File
	}
	return nil
}

// addrCache keeps the boxed text of the addresses seen: a capture has few,
// and formatting and boxing one for every record would allocate.
type addrCache struct{ m map[netip.AddrPort]any }

func (a *addrCache) get(ap netip.AddrPort) any {
	if v, ok := a.m[ap]; ok {
		return v
	}
	if a.m == nil || len(a.m) >= 4096 {
		a.m = map[netip.AddrPort]any{}
	}
	v := any(ap.String())
	a.m[ap] = v
	return v
}

// gameJSON appends the JSON object of r's game message, as decode --json
// writes it under "fields"; ok is false when r has none.
func gameJSON(b []byte, r *flow.Record) ([]byte, bool) {
	if r.Game == nil {
		return b, false
	}
	var v any = r.Game.Msg
	if a, ok := v.(jsonenc.Appender); ok {
		return jsonenc.Append(b, a)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return b, false
	}
	return append(b, raw...), true
}

// jsonPath is a fields.PATH split into its keys, each also as it stands in
// the JSON ("key":), so that an object without it is passed over with one
// fast bytes.Contains rather than walked member by member.
type jsonPath []pathKey

type pathKey struct {
	key    string
	quoted []byte
}

// compilePath splits path (dot-separated keys; a number indexes an
// array).
func compilePath(path string) jsonPath {
	var p jsonPath
	for _, key := range strings.Split(path, ".") {
		p = append(p, pathKey{key, []byte(strconv.Quote(key) + ":")})
	}
	return p
}

// lookup returns the raw value at p in the compact JSON value doc, or nil.
func (p jsonPath) lookup(doc []byte) []byte {
	v := doc
	for _, k := range p {
		if len(v) > 0 && v[0] == '{' && !bytes.Contains(v, k.quoted) {
			return nil
		}
		if v = member(v, k.key); v == nil {
			return nil
		}
	}
	return v
}

// lookupJSON finds path in doc (see compilePath and lookup).
func lookupJSON(doc []byte, path string) []byte { return compilePath(path).lookup(doc) }

// member returns the raw value of key in the JSON object obj, or of
// element key (a decimal index) in the JSON array obj; nil if absent.
func member(obj []byte, key string) []byte {
	if len(obj) < 2 {
		return nil
	}
	switch obj[0] {
	case '{':
		for i := 1; i < len(obj) && obj[i] == '"'; {
			keyEnd := jsonenc.SkipValue(obj, i)
			valStart := keyEnd + 1
			valEnd := jsonenc.SkipValue(obj, valStart)
			if keyEnd-i-2 == len(key) && string(obj[i+1:keyEnd-1]) == key {
				return obj[valStart:valEnd]
			}
			i = valEnd + 1
		}
	case '[':
		n, err := strconv.Atoi(key)
		if err != nil || n < 0 {
			return nil
		}
		for i := 1; i < len(obj) && obj[i] != ']'; n-- {
			end := jsonenc.SkipValue(obj, i)
			if n == 0 {
				return obj[i:end]
			}
			i = end + 1
		}
	}
	return nil
}

// jsonValue turns a raw JSON value into what a filter compares: strings as
// strings (hex ids such as "0x3FFFFFFF" as numbers), numbers as float64, true/false, nil for null; objects and arrays
// stay their JSON text, so that `contains` works on them.
func jsonValue(raw []byte) any {
	if len(raw) == 0 {
		return nil
	}
	switch raw[0] {
	case '"':
		s := jsonString(raw)
		// Ids are written as hex strings ("0x3FFFFFFF"); as numbers they
		// compare with the filter's hex literals: fields.object.id == 0x3FFFFFFF.
		if len(s) > 2 && len(s) <= 18 && (strings.HasPrefix(s, "0x") || strings.HasPrefix(s, "0X")) {
			if n, err := strconv.ParseUint(s[2:], 16, 63); err == nil {
				return int(n)
			}
		}
		return s
	case 't':
		return true
	case 'f':
		return false
	case 'n':
		return nil
	case '{', '[':
		return string(raw)
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if err != nil {
		return string(raw)
	}
	return f
}

// jsonString is the text of the JSON string raw (with its quotes).
func jsonString(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw[1 : len(raw)-1])
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return string(raw)
	}
	return s
}
