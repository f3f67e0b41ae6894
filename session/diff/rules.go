package diff

// Rules: the tolerances and thresholds of a comparison, and the field-level
// comparison of two decoded messages that applies them. The replay verifier
// reuses CompareGame and CompareControl with the same Rules.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"path"
	"reflect"
	"strings"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"

	"github.com/bcwire/bcwire/internal/cfgfile"
)

// Severity ranks a difference.
type Severity uint8

// Severities, least severe first.
const (
	Info     Severity = iota // cosmetic or expected to vary
	Minor                    // worth a look: rates, timing
	Major                    // a stock client may behave differently
	Critical                 // a stock client may fail to join or play
)

var severityNames = [...]string{"info", "minor", "major", "critical"}

func (s Severity) String() string {
	if int(s) < len(severityNames) {
		return severityNames[s]
	}
	return fmt.Sprintf("severity(%d)", uint8(s))
}

// MarshalText writes the severity's name.
func (s Severity) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads a severity's name.
func (s *Severity) UnmarshalText(b []byte) error {
	v, err := ParseSeverity(string(b))
	if err == nil {
		*s = v
	}
	return err
}

// ParseSeverity reads "info", "minor", "major" or "critical".
func ParseSeverity(name string) (Severity, error) {
	for i, n := range severityNames {
		if strings.EqualFold(name, n) {
			return Severity(i), nil
		}
	}
	return 0, fmt.Errorf("severity %q: want info, minor, major or critical", name)
}

// Rules are what a comparison tolerates and where it draws its lines.
// DefaultRules gives the values described on each field; LoadRules reads
// changes to them from a file.
type Rules struct {
	// Ignore lists fields that legitimately differ, as patterns on field
	// paths. A path is the message name, then the JSON names of the fields
	// down to the value, joined by dots: "Settings.game_time",
	// "ObjCreateTeam.position.x", "peer-info.name". Control messages are
	// named by their kind ("peer-info", "slot-assignment"). Patterns use
	// path.Match syntax ("*.game_time", "ObjCreate*.position"), and a
	// pattern that matches a path also covers everything below it.
	Ignore []string `json:"ignore"`
	// ObjectIDsBySlot compares object ids in player ranges by their offset
	// within the owner's block of ids (0x3FFFFFFF + slot*0x40000), so the
	// same object of a player in another slot compares equal (default on).
	ObjectIDsBySlot bool `json:"object_ids_by_slot"`
	// FloatTolerance is the relative difference below which two floats
	// are equal (default 1e-4; an absolute 1e-6 near zero).
	FloatTolerance float64 `json:"float_tolerance"`

	// Latency is the difference in reply latency tolerated (default
	// 100 ms).
	Latency Duration `json:"latency"`
	// ReplyWindow is how long after a client's message the server's answer
	// may begin (default 2 s); ReplyBurst how long after its first
	// datagram the answer may go on (default 50 ms: stock answers in one
	// go).
	ReplyWindow Duration `json:"reply_window"`
	ReplyBurst  Duration `json:"reply_burst"`
	// RelayWindow is how long after a client's game message an identical
	// message to another client counts as a relayed copy (default 2 s).
	RelayWindow Duration `json:"relay_window"`
	// AckGrace is how long before a session's end a reliable message may
	// go unACKed without a finding (default 2 s).
	AckGrace Duration `json:"ack_grace"`

	// RateRatio flags per-opcode rates whose ratio ours/stock is above it
	// or below its inverse (default 1.5), and only when Alpha (default
	// 0.001) says the counts are too far apart to be chance.
	RateRatio float64 `json:"rate_ratio"`
	Alpha     float64 `json:"alpha"`
	// MinCount is the fewest messages of an opcode the busier side must
	// have for its absence on the other side to count (default 5).
	MinCount int `json:"min_count"`
	// KeepaliveRatio flags keepalive cadences further apart than this
	// ratio (default 1.5).
	KeepaliveRatio float64 `json:"keepalive_ratio"`
	// FlagShare flags a StateUpdate flag whose share of updates differs by
	// more than this between the sides (default 0.25).
	FlagShare float64 `json:"flag_share"`
	// CadenceRatio flags StateUpdate cadences per ship lane (interval
	// p50; the p90 is shown) whose ratio ours/stock is above it or below
	// its inverse (default 1.25: OpenBC's 0.142 s against stock's 0.100 s
	// is 1.42).
	CadenceRatio float64 `json:"cadence_ratio"`
	// RelayShare flags an opcode whose share of client messages relayed
	// differs by more than this (default 0.5).
	RelayShare float64 `json:"relay_share"`

	// Severity overrides the severity of a kind of difference
	// ("bundling": "minor").
	Severity map[string]Severity `json:"severity"`
}

// Duration is a time.Duration that reads and writes as text ("100ms") in
// rules files.
type Duration time.Duration

// MarshalText writes the duration as time.Duration does.
func (d Duration) MarshalText() ([]byte, error) { return []byte(time.Duration(d).String()), nil }

// UnmarshalText reads a duration such as "250ms".
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// DefaultIgnore are the fields that differ between any two sessions and say
// nothing about a server: game time, addresses, player names, the state of
// ships at the moment they are replicated, and scores.
var DefaultIgnore = []string{
	"*.game_time",
	"*.ip", "*.port",
	"*.player_name", "peer-info.name", "DeletePlayerAnim.name",
	"ObjCreate*.position", "ObjCreate*.orientation", "ObjCreate*.speed", "ObjCreate*.subsystem_data",
	"SCORE.kills", "SCORE.deaths", "SCORE.score", "SCORE_INIT.kills", "SCORE_INIT.deaths", "SCORE_INIT.score",
	"MISSION_INIT.end_time",
}

// ConfigFields are the fields that say how a server is set up rather than
// how it speaks the protocol: the GameSpy reply's name (with the '*' a
// password adds), mission, map, player limit, game mode, time and frag
// limits, star system, password flag and player list ("gamespy.players"),
// the game port a server off the stock port adds (hostport),
// the Settings values, and the match settings MISSION_INIT carries (not
// its first byte: OpenBC's docs/network-flows/join-flow.md says stock
// sends the current player count there). A difference in one is a
// configuration difference: listed, but not a protocol divergence.
var ConfigFields = []string{
	"gamespy.hostname", "gamespy.missionscript", "gamespy.mapname", "gamespy.maxplayers",
	"gamespy.gamemode", "gamespy.timelimit", "gamespy.fraglimit", "gamespy.system",
	"gamespy.password", "gamespy.players", "gamespy.hostport",
	"Settings.collision_damage", "Settings.friendly_fire", "Settings.map", "Settings.checksum_correction",
	"MISSION_INIT.system", "MISSION_INIT.time_limit", "MISSION_INIT.frag_limit",
}

// IsConfig reports whether the field at path p is a configuration field
// (ConfigFields).
func IsConfig(p string) bool {
	return matchAny(ConfigFields, p)
}

// DefaultRules returns the default tolerances.
func DefaultRules() Rules {
	return Rules{
		Ignore:          append([]string(nil), DefaultIgnore...),
		ObjectIDsBySlot: true,
		FloatTolerance:  1e-4,
		Latency:         Duration(100 * time.Millisecond),
		ReplyWindow:     Duration(2 * time.Second),
		ReplyBurst:      Duration(50 * time.Millisecond),
		RelayWindow:     Duration(2 * time.Second),
		AckGrace:        Duration(2 * time.Second),
		RateRatio:       1.5,
		Alpha:           0.001,
		MinCount:        5,
		KeepaliveRatio:  1.5,
		FlagShare:       0.25,
		CadenceRatio:    1.25,
		RelayShare:      0.5,
	}
}

// rulesFile is the form of a rules file: every field optional, "ignore"
// adding to the defaults and "compare" taking patterns out of them.
type rulesFile struct {
	Rules
	Compare []string `json:"compare"`
}

// LoadRules reads a rules file: a JSON object whose keys are those of
// Rules (each optional, defaults for the rest), plus "compare", a list of
// default ignore patterns to take out. "ignore" adds to the defaults.
//
//	{"ignore": ["Settings.map"], "compare": ["*.player_name"],
//	 "latency": "250ms", "rate_ratio": 2, "severity": {"bundling": "minor"}}
func LoadRules(file string) (Rules, error) {
	b, err := cfgfile.Read(file, cfgfile.MaxConfig)
	if err != nil {
		return Rules{}, err
	}
	return ParseRules(b)
}

// ParseRules is LoadRules on the file's bytes.
func ParseRules(b []byte) (Rules, error) {
	def := DefaultRules()
	f := rulesFile{Rules: def}
	f.Ignore = nil
	if err := cfgfile.CheckJSON(b); err != nil { // depth and repeated keys
		return Rules{}, fmt.Errorf("rules: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return Rules{}, fmt.Errorf("rules: %w", cfgfile.ShortError(err))
	}
	r := f.Rules
	r.Ignore = append(def.Ignore, f.Ignore...)
	r.Strict(f.Compare...)
	return r, r.check()
}

// Strict takes patterns out of the ignore list: those fields are compared
// again. A pattern not in the list is ignored.
func (r *Rules) Strict(patterns ...string) {
	kept := r.Ignore[:0]
	for _, p := range r.Ignore {
		drop := false
		for _, q := range patterns {
			if p == q {
				drop = true
			}
		}
		if !drop {
			kept = append(kept, p)
		}
	}
	r.Ignore = kept
}

func (r *Rules) check() error {
	for _, p := range r.Ignore {
		if _, err := path.Match(p, ""); err != nil {
			return fmt.Errorf("rules: ignore pattern %q: %w", p, err)
		}
	}
	switch {
	case r.RateRatio < 1:
		return fmt.Errorf("rules: rate_ratio %v must be at least 1", r.RateRatio)
	case r.Alpha <= 0 || r.Alpha >= 1:
		return fmt.Errorf("rules: alpha %v must be between 0 and 1", r.Alpha)
	case r.CadenceRatio < 1:
		return fmt.Errorf("rules: cadence_ratio %v must be at least 1", r.CadenceRatio)
	case r.KeepaliveRatio < 1:
		return fmt.Errorf("rules: keepalive_ratio %v must be at least 1", r.KeepaliveRatio)
	case r.ReplyWindow <= 0 || r.ReplyBurst < 0 || r.RelayWindow <= 0 || r.Latency < 0 || r.AckGrace < 0:
		return fmt.Errorf("rules: durations must be positive")
	}
	return nil
}

// Check reports whether the rules are usable.
func (r *Rules) Check() error { return r.check() }

// Ignored reports whether the field at path p is ignored.
func (r *Rules) Ignored(p string) bool { return matchAny(r.Ignore, p) }

// matchAny reports whether a pattern matches p or a path above it.
func matchAny(patterns []string, p string) bool {
	for _, pat := range patterns {
		for q := p; ; {
			if ok, _ := path.Match(pat, q); ok {
				return true
			}
			i := strings.LastIndexByte(q, '.')
			if i < 0 {
				break
			}
			q = q[:i]
		}
	}
	return false
}

// FieldDiff is one field that differs between two messages of the same
// kind.
type FieldDiff struct {
	Path  string `json:"path"` // e.g. "ChecksumRequest.dir"
	Ours  string `json:"ours"`
	Stock string `json:"stock"`
}

func (f FieldDiff) String() string {
	return fmt.Sprintf("%s: ours %s, stock %s", f.Path, f.Ours, f.Stock)
}

// CompareGame compares two decoded game messages field by field under the
// rules and returns the fields that differ beyond them. Messages of
// different opcodes differ as a whole (one FieldDiff with path "opcode").
// Nil messages compare as absent.
func (r *Rules) CompareGame(ours, stock game.Message) []FieldDiff {
	switch {
	case ours == nil && stock == nil:
		return nil
	case ours == nil || stock == nil:
		return []FieldDiff{{Path: "message", Ours: messageName(ours), Stock: messageName(stock)}}
	case ours.Opcode() != stock.Opcode():
		return []FieldDiff{{Path: "opcode", Ours: ours.Opcode().String(), Stock: stock.Opcode().String()}}
	}
	var out []FieldDiff
	r.walk(&out, ours.Opcode().String(), reflect.ValueOf(ours), reflect.ValueOf(stock))
	return out
}

// CompareControl compares the payloads of two control messages (keepalive
// peer-info, slot assignment, connect request, ...) the same way.
func (r *Rules) CompareControl(ours, stock *dissect.Control) []FieldDiff {
	switch {
	case ours == nil && stock == nil:
		return nil
	case ours == nil || stock == nil:
		return []FieldDiff{{Path: "control", Ours: controlKind(ours), Stock: controlKind(stock)}}
	case ours.Kind != stock.Kind:
		return []FieldDiff{{Path: "kind", Ours: ours.Kind, Stock: stock.Kind}}
	}
	var out []FieldDiff
	r.walk(&out, ours.Kind, reflect.ValueOf(ours), reflect.ValueOf(stock))
	return out
}

func messageName(m game.Message) string {
	if m == nil {
		return "none"
	}
	return m.Opcode().String()
}

func controlKind(c *dissect.Control) string {
	if c == nil {
		return "none"
	}
	return c.Kind
}

var objectIDType = reflect.TypeOf(game.ObjectID(0))

// walk compares a and b (of the same type) at path p.
func (r *Rules) walk(out *[]FieldDiff, p string, a, b reflect.Value) {
	if r.Ignored(p) {
		return
	}
	for a.Kind() == reflect.Pointer || a.Kind() == reflect.Interface {
		if a.IsNil() || b.IsNil() {
			if a.IsNil() != b.IsNil() {
				*out = append(*out, FieldDiff{p, showValue(a), showValue(b)})
			}
			return
		}
		a, b = a.Elem(), b.Elem()
	}
	if a.Type() == objectIDType {
		x, y := game.ObjectID(a.Uint()), game.ObjectID(b.Uint())
		if x != y && !(r.ObjectIDsBySlot && sameSlotOffset(x, y)) {
			*out = append(*out, FieldDiff{p, x.String(), y.String()})
		}
		return
	}
	switch a.Kind() {
	case reflect.Struct:
		t := a.Type()
		if !hasExportedField(t) { // netip.Addr and the like: compare whole
			if a.CanInterface() && !reflect.DeepEqual(a.Interface(), b.Interface()) {
				*out = append(*out, FieldDiff{p, showValue(a), showValue(b)})
			}
			return
		}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			name := jsonName(f)
			if name == "-" {
				continue
			}
			q := p
			if !f.Anonymous {
				q = p + "." + name
			}
			r.walk(out, q, a.Field(i), b.Field(i))
		}
	case reflect.Slice, reflect.Array:
		if a.Type().Elem().Kind() == reflect.Uint8 {
			if !bytes.Equal(byteSlice(a), byteSlice(b)) {
				*out = append(*out, FieldDiff{p, showBytes(byteSlice(a)), showBytes(byteSlice(b))})
			}
			return
		}
		if a.Len() != b.Len() {
			*out = append(*out, FieldDiff{p + ".len", fmt.Sprint(a.Len()), fmt.Sprint(b.Len())})
			return
		}
		for i := 0; i < a.Len(); i++ {
			r.walk(out, fmt.Sprintf("%s[%d]", p, i), a.Index(i), b.Index(i))
		}
	case reflect.Float32, reflect.Float64:
		if !r.floatEqual(a.Float(), b.Float()) {
			*out = append(*out, FieldDiff{p, showValue(a), showValue(b)})
		}
	case reflect.Map:
		// no decoded message has maps; compare their text
		if fmt.Sprint(a.Interface()) != fmt.Sprint(b.Interface()) {
			*out = append(*out, FieldDiff{p, showValue(a), showValue(b)})
		}
	default:
		if a.CanInterface() && !reflect.DeepEqual(a.Interface(), b.Interface()) {
			*out = append(*out, FieldDiff{p, showValue(a), showValue(b)})
		}
	}
}

func (r *Rules) floatEqual(a, b float64) bool {
	if a == b || (math.IsNaN(a) && math.IsNaN(b)) {
		return true
	}
	d := math.Abs(a - b)
	return d <= 1e-6 || d <= r.FloatTolerance*math.Max(math.Abs(a), math.Abs(b))
}

// sameSlotOffset reports whether two player-range ids sit at the same offset
// within their owners' blocks.
func sameSlotOffset(a, b game.ObjectID) bool {
	sa, sb := a.Slot(), b.Slot()
	if sa < 0 || sb < 0 {
		return false
	}
	return a-game.PlayerObjectID(sa) == b-game.PlayerObjectID(sb)
}

func hasExportedField(t reflect.Type) bool {
	for i := 0; i < t.NumField(); i++ {
		if t.Field(i).IsExported() {
			return true
		}
	}
	return false
}

func jsonName(f reflect.StructField) string {
	tag := f.Tag.Get("json")
	if tag == "" {
		return strings.ToLower(f.Name)
	}
	name, _, _ := strings.Cut(tag, ",")
	if name == "" {
		return strings.ToLower(f.Name)
	}
	return name
}

func byteSlice(v reflect.Value) []byte {
	if v.Kind() == reflect.Slice {
		return v.Bytes()
	}
	b := make([]byte, v.Len())
	for i := range b {
		b[i] = byte(v.Index(i).Uint())
	}
	return b
}

func showBytes(b []byte) string {
	const max = 24
	if len(b) > max {
		return fmt.Sprintf("% X … (%d bytes)", b[:max], len(b))
	}
	if len(b) == 0 {
		return "(none)"
	}
	return fmt.Sprintf("% X", b)
}

func showValue(v reflect.Value) string {
	if !v.IsValid() {
		return "none"
	}
	if (v.Kind() == reflect.Pointer || v.Kind() == reflect.Interface) && v.IsNil() {
		return "none"
	}
	if !v.CanInterface() {
		return "?"
	}
	x := v.Interface()
	if s, ok := x.(string); ok {
		return fmt.Sprintf("%q", s)
	}
	if st, ok := x.(fmt.Stringer); ok {
		return st.String()
	}
	return fmt.Sprint(x)
}
