package report

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/netip"
	"path/filepath"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/capture/capturetest"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
)

// The NDJSON and -V printers as they were, on encoding/json, kept as the
// reference for the AppendJSON ones. (Their json.Marshal of a game message
// now runs its MarshalJSON, that is AppendJSON; dissect/game's tests hold
// that to the old game encoders.)

func oldAppendFields(b []byte, r *flow.Record) []byte {
	var v any
	switch {
	case r.Game != nil:
		v = r.Game.Msg
	case r.Control != nil:
		v = r.Control
	case r.GameSpy != nil:
		v = r.GameSpy
	case r.Kind == flow.KindDamaged:
		return append(b, fmt.Sprintf("         raw: %X\n", r.Raw)...)
	default:
		return b
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return append(b, fmt.Sprintf("         (fields: %v)\n", err)...)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return append(b, "         "+string(raw)+"\n"...)
	}
	keys := oldJSONKeyOrder(raw)
	for _, k := range keys {
		b = append(b, fmt.Sprintf("         %s: %s\n", k, obj[k])...)
	}
	return b
}

func oldJSONKeyOrder(raw []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var keys []string
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			break
		}
		k, _ := t.(string)
		keys = append(keys, k)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			break
		}
	}
	if len(keys) == 0 {
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
	}
	return keys
}

func oldAppendRecordJSON(b []byte, r *flow.Record) []byte {
	b = append(b, `{"frame":`...)
	b = strconv.AppendInt(b, int64(r.Frame), 10)
	if !r.Time.IsZero() { // no zero values: a damaged record may have no time or addresses
		b = append(b, `,"time":`...)
		b = strconv.AppendQuote(b, r.Time.UTC().Format(time.RFC3339Nano))
	}
	if r.Src.IsValid() {
		b = append(b, `,"src":`...)
		b = strconv.AppendQuote(b, r.Src.String())
		b = append(b, `,"dst":`...)
		b = strconv.AppendQuote(b, r.Dst.String())
		b = append(b, `,"dir":`...)
		b = strconv.AppendQuote(b, r.Dir.String())
	}
	switch r.Kind {
	case flow.KindGameSpy:
		gs, _ := json.Marshal(r.GameSpy)
		b = append(b, `,"gamespy":`...)
		b = append(b, gs...)
	case flow.KindDamaged:
		if r.Src.IsValid() {
			b = append(b, `,"peer":`...)
			b = strconv.AppendInt(b, int64(r.Peer), 10)
			b = append(b, `,"msg":`...)
			b = strconv.AppendInt(b, int64(r.MsgIndex), 10)
		}
		if len(r.Raw) > 0 {
			b = append(b, `,"raw":"`...)
			b = hex.AppendEncode(b, r.Raw)
			b = append(b, '"')
		}
	case flow.KindMessage:
		b = oldAppendMessageJSON(b, r)
	}
	if r.Warning != "" {
		b = append(b, `,"warning":`...)
		b = strconv.AppendQuote(b, r.Warning)
	}
	if r.Err != nil {
		b = append(b, `,"error":`...)
		b = strconv.AppendQuote(b, r.Err.Error())
	}
	return append(b, '}')
}

func oldAppendMessageJSON(b []byte, r *flow.Record) []byte {
	m := r.Msg
	b = append(b, `,"peer":`...)
	b = strconv.AppendInt(b, int64(r.Peer), 10)
	b = append(b, `,"msg":`...)
	b = strconv.AppendInt(b, int64(r.MsgIndex), 10)
	b = append(b, `,"type":`...)
	b = strconv.AppendInt(b, int64(m.Type), 10)
	b = append(b, `,"type_name":`...)
	b = strconv.AppendQuote(b, m.Type.String())
	if m.Type == dissect.TypeAck {
		b = append(b, `,"seq":`...)
		b = strconv.AppendInt(b, int64(m.Seq), 10)
		b = append(b, `,"ack_flags":`...)
		b = strconv.AppendInt(b, int64(m.AckFlags), 10)
		if m.AckFlags&dissect.AckFragment != 0 {
			b = append(b, `,"ack_fragment":`...)
			b = strconv.AppendInt(b, int64(m.AckFragIndex), 10)
		}
		return b
	}
	b = append(b, `,"reliable":`...)
	b = strconv.AppendBool(b, m.Reliable)
	if m.Ordered {
		b = append(b, `,"ordered":true`...)
	}
	if m.Reliable {
		b = append(b, `,"seq":`...)
		b = strconv.AppendInt(b, int64(m.Seq), 10)
	}
	if m.Fragment {
		b = append(b, `,"fragment":{"index":`...)
		b = strconv.AppendInt(b, int64(m.FragIndex), 10)
		if m.HasTotal() {
			b = append(b, `,"total":`...)
			b = strconv.AppendInt(b, int64(m.FragTotal), 10)
		}
		if r.DuplicateFragment {
			b = append(b, `,"duplicate":true`...)
		}
		b = append(b, '}')
	}
	if m.Legacy {
		b = append(b, `,"legacy_header":true`...)
	}
	switch {
	case r.Game != nil:
		g := r.Game.Msg
		b = append(b, `,"opcode":`...)
		b = strconv.AppendInt(b, int64(g.Opcode()), 10)
		b = append(b, `,"name":`...)
		b = strconv.AppendQuote(b, g.Opcode().String())
		if r.Reassembled > 0 {
			b = append(b, `,"reassembled":`...)
			b = strconv.AppendInt(b, int64(r.Reassembled), 10)
		}
		if fields, err := json.Marshal(g); err == nil {
			b = append(b, `,"fields":`...)
			b = append(b, fields...)
		}
		if len(r.Game.Unparsed) > 0 {
			b = append(b, `,"unparsed":"`...)
			b = hex.AppendEncode(b, r.Game.Unparsed)
			b = append(b, '"')
		}
	case r.Control != nil:
		if c, err := json.Marshal(r.Control); err == nil {
			b = append(b, `,"control":`...)
			b = append(b, c...)
		}
		if len(r.Control.Extra) > 0 {
			b = append(b, `,"unparsed":"`...)
			b = hex.AppendEncode(b, r.Control.Extra)
			b = append(b, '"')
		}
	}
	return b
}

// checkRecord holds the NDJSON line and the -V field lines of r to the old
// printers.
func checkRecord(t *testing.T, p *DecodePrinter, r *flow.Record) {
	t.Helper()
	want := oldAppendRecordJSON(nil, r)
	if got := AppendRecordJSON(nil, r); !bytes.Equal(got, want) {
		t.Fatalf("frame %d:\nAppendRecordJSON %s\nold              %s", r.Frame, got, want)
	}
	// And with the times of the records before (the printer's way).
	if got := appendRecordJSON(nil, r, &p.jsonOpen, nil); !bytes.Equal(got, want) {
		t.Fatalf("frame %d:\nprinter %s\nold     %s", r.Frame, got, want)
	}
	if got, want := p.appendFields(nil, r), oldAppendFields(nil, r); !bytes.Equal(got, want) {
		t.Fatalf("frame %d -V:\n%s\nold:\n%s", r.Frame, got, want)
	}
}

func bundledCaptures(t testing.TB) []string {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "pcaps", "*"))
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range files {
		if ext := filepath.Ext(f); ext == ".pcap" || ext == ".pcapng" {
			out = append(out, f)
		}
	}
	if len(out) == 0 {
		t.Fatal("no bundled captures")
	}
	return out
}

// TestDecodeJSONMatchesOldPrinters: every record of every bundled capture.
func TestDecodeJSONMatchesOldPrinters(t *testing.T) {
	for _, path := range bundledCaptures(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			rd, err := capture.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer rd.Close()
			p := NewDecodePrinter(io.Discard, DecodeVerbose, false)
			_, err = flow.Run(rd, flow.New(flow.Options{}), func(r *flow.Record) bool {
				checkRecord(t, p, r)
				return true
			})
			if err != nil {
				t.Logf("capture: %v", err)
			}
		})
	}
}

// TestDecodeJSONOddRecords: what the captures do not hold: a message
// without a JSON form (NaN game time), odd addresses, escapes in warnings
// and errors, fragments, unparsed bytes.
func TestDecodeJSONOddRecords(t *testing.T) {
	p := NewDecodePrinter(io.Discard, DecodeVerbose, false)
	slot := uint8(3)
	data := &dissect.Message{Type: dissect.TypeData, Reliable: true, Seq: 7, Fragment: true, FragIndex: 2,
		FragTotal: 5, Legacy: true, Ordered: true}
	records := []flow.Record{
		{Kind: flow.KindMessage, Msg: data, Game: &game.Result{Msg: &game.Settings{GameTime: float32(math.NaN())}}},
		{Kind: flow.KindMessage, Msg: data, Game: &game.Result{Msg: &game.Settings{GameTime: float32(math.Inf(-1))}}},
		{Kind: flow.KindMessage, Msg: data, Reassembled: 3, DuplicateFragment: true,
			Game: &game.Result{Msg: &game.Chat{Op: game.OpChat, Text: "<&>\xff"}, Unparsed: []byte{1}}},
		{Kind: flow.KindMessage, Msg: data, Game: &game.Result{Msg: &game.Raw{Op: 0x99, Data: []byte{1}}}},
		{Kind: flow.KindMessage, Msg: data, Game: &game.Result{Msg: &game.GameInit{}}},
		{Kind: flow.KindMessage, Msg: &dissect.Message{Type: 0x77},
			Control: &dissect.Control{Kind: "peer-info", Slot: &slot, Name: "\"n\"", Extra: []byte{2}}},
		{Kind: flow.KindMessage, Msg: &dissect.Message{Type: dissect.TypeAck, AckFlags: dissect.AckFragment, AckFragIndex: 4}},
		{Kind: flow.KindGameSpy, GameSpy: &dissect.GameSpy{Kind: "reply", Fields: []dissect.GameSpyField{{Key: "k", Value: "<v>"}}}},
		{Kind: flow.KindDamaged, Raw: []byte{0xAB}, Err: errors.New("bad \"thing\"\n\xff"), Warning: "w\t\u2028"},
		{Kind: flow.KindLost, Src: netip.MustParseAddrPort("[fe80::1%eth\"0\xff]:5"),
			Dst: netip.MustParseAddrPort("[::ffff:1.2.3.4]:65535"), Time: time.Date(2026, 1, 2, 3, 4, 5, 600, time.UTC)},
		{Kind: flow.KindLost, Src: netip.MustParseAddrPort("[2001:db8::1]:1"),
			Time: time.Date(12345, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))},
		{Kind: flow.KindLost, Time: time.Date(-5, 1, 2, 3, 4, 5, 123456789, time.UTC)},
		{Kind: flow.KindLost, Time: time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC)},
		{Kind: flow.KindLost, Time: time.Date(10000, 1, 1, 0, 0, 0, 1, time.UTC)},
		{Kind: flow.KindLost, Time: time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)},
		{Kind: flow.KindLost, Time: time.Date(0, 12, 31, 23, 59, 59, 100, time.UTC)},
		{Kind: flow.KindLost, Time: time.Date(2026, 1, 2, 3, 4, 5, 10, time.FixedZone("y", -7200))},
		{Kind: flow.KindLost, Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)},
		{Kind: flow.KindLost, Time: time.Date(2026, 1, 2, 3, 4, 5, 500000000, time.UTC)},
		{Kind: flow.KindLost, Time: time.Date(2026, 1, 2, 3, 4, 4, 999999999, time.UTC)},
	}
	for i := range records {
		records[i].Frame = i + 1
		checkRecord(t, p, &records[i])
	}
}

// TestAppendMembers: the -V splitter on objects holding every kind of
// value, strings with escapes and brackets included.
func TestAppendMembers(t *testing.T) {
	for _, raw := range []string{`{}`, `{"a":1}`, `{"a":"x,}]\"{[","b":[1,{"c":"]"}],"c":{"d":[]},"e":null,"f":true,"g":-1.5e-7}`,
		`{"k\"ey":1,"\u00e9":2}`, `[1,2]`, `"s"`} {
		want := oldMembers(raw)
		if got := string(appendMembers(nil, []byte(raw))); got != want {
			t.Errorf("%s:\n%s\nold:\n%s", raw, got, want)
		}
	}
}

// oldMembers is the member printing of oldAppendFields for a JSON text.
func oldMembers(raw string) string {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(raw), &obj) != nil {
		return "         " + raw + "\n"
	}
	var b []byte
	for _, k := range oldJSONKeyOrder([]byte(raw)) {
		b = append(b, fmt.Sprintf("         %s: %s\n", k, obj[k])...)
	}
	return string(b)
}

// BenchmarkAppendRecordJSON runs battle.pcap's datagrams through one
// Tracker per pass (after a warm-up pass) and appends every record's
// NDJSON object; "decode" is the same without the JSON, so the difference
// is AppendRecordJSON's cost, in time and allocations.
func BenchmarkAppendRecordJSON(b *testing.B) {
	dgs := capturetest.LoadBattle(b)
	for _, withJSON := range []bool{false, true} {
		name := "decode"
		if withJSON {
			name = "decode+json"
		}
		b.Run(name, func(b *testing.B) {
			var line []byte
			records, out := 0, 0
			emit := func(r *flow.Record) {
				records++
				if withJSON {
					line = AppendRecordJSON(line[:0], r)
					out += len(line)
				}
			}
			tr := flow.New(flow.Options{})
			for _, d := range dgs {
				tr.Datagram(d.Frame, d.Time, d.Src, d.Dst, d.Payload, emit)
			}
			perPass := records
			b.SetBytes(int64(out))
			b.ReportAllocs()
			for b.Loop() {
				for _, d := range dgs {
					tr.Datagram(d.Frame, d.Time, d.Src, d.Dst, d.Payload, emit)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(perPass)/float64(b.N), "ns/record")
		})
	}
}

// TestRecordJSONAllocatesNothing: every record of the battle, through
// AppendRecordJSON and the JSON printer, into buffers with room.
func TestRecordJSONAllocatesNothing(t *testing.T) {
	rd, err := capture.Open(filepath.Join("..", "testdata", "pcaps", "battle.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	p := NewDecodePrinter(io.Discard, DecodeJSON, false)
	buf := make([]byte, 0, 1<<16)
	n := 0
	_, err = flow.Run(rd, flow.New(flow.Options{}), func(r *flow.Record) bool {
		if n++; n%7 != 0 { // a sample keeps the test short
			return true
		}
		if a := testing.AllocsPerRun(5, func() {
			AppendRecordJSON(buf[:0], r)
			_ = p.Print(r)
		}); a != 0 {
			t.Fatalf("frame %d: %v allocations: %s", r.Frame, a, AppendRecordJSON(nil, r))
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
}
