package dissect

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"github.com/bcwire/bcwire/internal/fixture"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// realDatagrams are decrypted stock (and one third-party) datagrams quoted in
// PROTOCOL.md, seeds/001 and the vectors, with what each must split into.
var realDatagrams = []struct {
	name string
	hex  string
	want []Message // compared on Type, Reliable, Ordered, Fragment, Seq, AckFlags, len(Payload)
}{
	{"client connect", "FF01030FC000000A0A0AEF5F0A00000000",
		[]Message{{Type: TypeConnectAck, Reliable: true, Ordered: true, Payload: make([]byte, 10)}}},
	{"server connect reply + checksum round 0", "01020306C0000002321B80000020000800736372697074732F07004170702E70796320",
		[]Message{{Type: TypeConnectAck, Reliable: true, Ordered: true, Payload: make([]byte, 1)},
			{Type: TypeData, Reliable: true, Payload: make([]byte, 22)}}},
	{"server keepalive", "010100" + "16C0010002" + "0A0A0AEF4300610064007900320000" + "00",
		[]Message{{Type: TypePeerInfo, Reliable: true, Ordered: true, Seq: 1, Payload: make([]byte, 17)}}},
	// seeds/001's hand-made CHAT example declares length 0x0F for a 17-byte
	// message; it is an illustration, not captured bytes, so it is not here.
	{"chat hello, length corrected", "01013211800100" + "2C02000000050068656C6C6F",
		[]Message{{Type: TypeData, Reliable: true, Seq: 1, Payload: make([]byte, 12)}}},
	{"ACK flags 0x02", "010101000002", []Message{{Type: TypeAck, Seq: 0, AckFlags: 0x02}}},
	{"ACK flags 0x01 + fragment index", "0101010200010300", nil}, // built below: flag 1 needs a frag byte
	{"graceful disconnect", "0203050AC00200020A0A0AEF0127000001280000",
		[]Message{{Type: TypeDisconnect, Reliable: true, Ordered: true, Seq: 2, Payload: make([]byte, 5)},
			{Type: TypeAck, Seq: 39}, {Type: TypeAck, Seq: 40}}},
	{"fragment 0 of 3", "010132" + "0AA0" + "0500" + "0003" + "212A00", // len 10
		[]Message{{Type: TypeData, Reliable: true, Fragment: true, Seq: 5, Payload: make([]byte, 3)}}},
}

func TestRealDatagramsSplit(t *testing.T) {
	for _, c := range realDatagrams {
		if c.want == nil {
			continue
		}
		b := fixture.Unhex(t, c.hex)
		var d Datagram
		if err := d.Parse(b); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if len(d.Messages) != len(c.want) {
			t.Errorf("%s: %d messages, want %d", c.name, len(d.Messages), len(c.want))
			continue
		}
		for i, w := range c.want {
			g := d.Messages[i]
			if g.Type != w.Type || g.Reliable != w.Reliable || g.Ordered != w.Ordered || g.Fragment != w.Fragment ||
				g.Seq != w.Seq || g.AckFlags != w.AckFlags || len(g.Payload) != len(w.Payload) {
				t.Errorf("%s: message %d = %+v, want %+v", c.name, i, g, w)
			}
		}
		if got := d.Append(nil); !bytes.Equal(got, b) {
			t.Errorf("%s: re-encoded\n% X\nwant\n% X", c.name, got, b)
		}
	}
}

func TestFragmentHeaderFields(t *testing.T) {
	var d Datagram
	if err := d.Parse(fixture.Unhex(t, "0101320AA005000003212A00")); err != nil {
		t.Fatal(err)
	}
	m := d.Messages[0]
	if !m.HasTotal() || m.FragIndex != 0 || m.FragTotal != 3 || !bytes.Equal(m.Payload, []byte{0x21, 0x2A, 0x00}) {
		t.Fatalf("fragment 0: %+v", m)
	}
	if err := d.Parse(fixture.Unhex(t, "01013208A005000201FF")); err != nil {
		t.Fatal(err)
	}
	m = d.Messages[0]
	if m.HasTotal() || m.FragIndex != 2 || m.FragTotal != 0 || !bytes.Equal(m.Payload, []byte{0x01, 0xFF}) {
		t.Fatalf("fragment 2: %+v", m)
	}
}

// Lengths of 256 and more put bit 8 in the high byte (0x81): that is length,
// not a "more fragments" flag.
func TestLongMessageHighByte(t *testing.T) {
	payload := bytes.Repeat([]byte{0x21}, 268)
	m := Message{Type: TypeData, Reliable: true, Seq: 0x400, Payload: payload}
	b := (&Datagram{Peer: 2, Messages: []Message{m}}).Append(nil)
	if b[3] != 0x11 || b[4] != 0x81 {
		t.Fatalf("flags_len bytes % X, want 11 81 (reliable, length 273)", b[3:5])
	}
	var d Datagram
	if err := d.Parse(b); err != nil || d.Messages[0].Fragment || len(d.Messages[0].Payload) != 268 {
		t.Fatalf("parse: %v %+v", err, d.Messages)
	}
}

func TestEveryTransportTypeRoundTrips(t *testing.T) {
	msgs := []Message{
		{Type: TypePeerInfo, Reliable: true, Ordered: true, Seq: 7, Payload: []byte{2, 10, 0, 0, 1, 'A', 0, 0, 0}},
		{Type: TypePeerInfo, Payload: nil},
		{Type: TypeAck, Seq: 300, AckFlags: AckControl},
		{Type: TypeAck, Seq: 4, AckFlags: AckFragment, AckFragIndex: 2},
		{Type: TypeConnect, Reliable: true, Payload: []byte{1, 2, 3}},
		{Type: TypeConnectAck, Reliable: true, Ordered: true, Payload: []byte{2}},
		{Type: TypeBoot, Reliable: true, Seq: 3, Payload: []byte{4}},
		{Type: TypeDisconnect, Reliable: true, Ordered: true, Seq: 2, Payload: []byte{2, 10, 10, 10, 239}},
		{Type: TypeData, Payload: []byte{0x1C, 1, 2, 3}},
		{Type: TypeData, Reliable: true, Ordered: true, Seq: 65535, Payload: []byte{0x2A, 0x20}},
		{Type: TypeData, Reliable: true, Fragment: true, Seq: 9, FragIndex: 0, FragTotal: 2, Payload: []byte{0x21, 1}},
		{Type: TypeData, Reliable: true, Fragment: true, Seq: 9, FragIndex: 1, Payload: []byte{2, 3}},
		{Type: TypeData, Reliable: true, Payload: bytes.Repeat([]byte{9}, 5000)},
	}
	for _, m := range msgs {
		b := (&Datagram{Peer: 1, Messages: []Message{m, m}}).Append(nil)
		var d Datagram
		if err := d.Parse(b); err != nil {
			t.Errorf("%v: %v", m.Type, err)
			continue
		}
		for i := range d.Messages {
			g := d.Messages[i]
			if g.Type != m.Type || g.Seq != m.Seq || g.Reliable != m.Reliable || g.Ordered != m.Ordered ||
				g.Fragment != m.Fragment || g.FragIndex != m.FragIndex || g.FragTotal != m.FragTotal ||
				g.AckFlags != m.AckFlags || g.AckFragIndex != m.AckFragIndex || !bytes.Equal(g.Payload, m.Payload) {
				t.Errorf("%v: parsed %+v", m.Type, g)
			}
			if !bytes.Equal(g.Append(nil), g.Raw) {
				t.Errorf("%v: Append differs from Raw", m.Type)
			}
		}
		if got := d.Append(nil); !bytes.Equal(got, b) {
			t.Errorf("%v: datagram round trip differs", m.Type)
		}
	}
}

func TestDamageIsReportedWithOffsets(t *testing.T) {
	cases := []struct {
		name   string
		hex    string
		offset int
		kept   int
		reason error
	}{
		{"too short for a header", "01", 1, 0, ErrShort},
		{"length past the datagram", "0102" + "010000" + "02" + "3220800000AA", 7, 1, ErrShort},
		{"unknown type byte", "010201000002" + "7711", 6, 1, ErrBadValue},
		{"count larger than what is there", "01030100000201000000", 10, 2, ErrShort},
		{"length shorter than the header", "0101320380", 3, 0, ErrBadValue},
		{"trailing bytes", "010101000002FFFF", 6, 1, ErrTrailing},
	}
	for _, c := range cases {
		var d Datagram
		err := d.Parse(fixture.Unhex(t, c.hex))
		var e *Error
		if !errors.As(err, &e) || e.Offset != c.offset || !errors.Is(err, c.reason) {
			t.Errorf("%s: err = %v, want offset %d and %v", c.name, err, c.offset, c.reason)
		}
		if len(d.Messages) != c.kept {
			t.Errorf("%s: kept %d messages, want %d", c.name, len(d.Messages), c.kept)
		}
	}
}

// One third-party client frames its connect as [type][len:u8][flags:u8]; the
// stock reading gives a length past the datagram, so the legacy reading is
// used and marked.
func TestLegacyConnectHeader(t *testing.T) {
	b := fixture.Unhex(t, "FF010308010000007F00")
	var d Datagram
	if err := d.Parse(b); err != nil {
		t.Fatal(err)
	}
	m := d.Messages[0]
	if !m.Legacy || m.Type != TypeConnectAck || len(m.Payload) != 5 || m.Reliable {
		t.Fatalf("legacy connect: %+v", m)
	}
	if got := d.Append(nil); !bytes.Equal(got, b) {
		t.Fatalf("legacy re-encode % X", got)
	}
}

type stockDatagram struct {
	Label string `json:"label"`
	Dir   string `json:"direction"`
	Plain string `json:"plain_datagram"`
}

// Every datagram in shared/vectors/stock-datagrams.json must split without a
// framing error and re-encode to the same bytes.
func TestStockDatagramVectors(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(sharedVectors, "stock-datagrams.json"))
	if os.IsNotExist(err) {
		t.Skipf("%s not present (the in-file copies are tested by TestRealDatagramsSplit)", sharedVectors)
	}
	if err != nil {
		t.Fatal(err)
	}
	var vs []stockDatagram
	if err := json.Unmarshal(data, &vs); err != nil || len(vs) == 0 {
		t.Fatalf("stock-datagrams.json: %v (%d entries)", err, len(vs))
	}
	for _, v := range vs {
		b := fixture.Unhex(t, v.Plain)
		var d Datagram
		if err := d.Parse(b); err != nil {
			t.Errorf("%s: %v", v.Label, err)
			continue
		}
		if int(d.Count) != len(d.Messages) || !bytes.Equal(d.Append(nil), b) {
			t.Errorf("%s: count %d, messages %d, round trip ok=%v", v.Label, d.Count, len(d.Messages), bytes.Equal(d.Append(nil), b))
		}
		if strings.HasPrefix(v.Dir, "C") && d.Peer == 1 {
			t.Errorf("%s: client datagram with server peer id", v.Label)
		}
	}
}

func TestControlPayloads(t *testing.T) {
	cases := []struct {
		hex  string
		kind string
		text string
	}{
		{"010100" + "16C0010002" + "0A0A0AEF4300610064007900320000" + "00", "peer-info", "2 10.10.10.239 0 Cady2"},
		{"FF01030FC000000A0A0AEF5F0A00000000", "connect-request", "0 10.10.10.239 24330 "},
		{"01010306C0000002", "slot-assignment", "2 invalid IP 0 "},
		{"0201050AC00200020A0A0AEF", "disconnect", "2 10.10.10.239 0 "},
	}
	for _, c := range cases {
		b := fixture.Unhex(t, c.hex)
		b[1] = 1
		var d Datagram
		if err := d.Parse(b); err != nil {
			t.Fatalf("%s: %v", c.kind, err)
		}
		m := &d.Messages[0]
		ctl, err := ParseControl(m)
		if err != nil || ctl.Kind != c.kind {
			t.Fatalf("%s: %+v %v", c.kind, ctl, err)
		}
		var slot uint8
		if ctl.Slot != nil {
			slot = *ctl.Slot
		}
		if got := strings.Join([]string{itoa(int(slot)), ctl.Addr.String(), itoa(int(ctl.Port)), ctl.Name}, " "); got != c.text {
			t.Errorf("%s: %q, want %q", c.kind, got, c.text)
		}
		if re := AppendControl(nil, &ctl); !bytes.Equal(re, m.Payload) {
			t.Errorf("%s: re-encoded % X, want % X", c.kind, re, m.Payload)
		}
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

func TestGameSpy(t *testing.T) {
	q, err := ParseGameSpy([]byte(`\status\`))
	if err != nil || !q.Query || q.Kind != "status" || string(q.Append(nil)) != `\status\` {
		t.Fatalf("query: %+v %v", q, err)
	}
	reply := `\gamename\bcommander\hostname\My Server\numplayers\2\maxplayers\8\gamemode\openplaying\final\\queryid\1.1`
	r, err := ParseGameSpy([]byte(reply))
	if err != nil || r.Query || r.QueryID != "1.1" || !r.Final || len(r.Fields) != 5 || r.Fields[1].Value != "My Server" {
		t.Fatalf("reply: %+v %v", r, err)
	}
	if got := string(r.Append(nil)); got != reply {
		t.Fatalf("reply round trip %q", got)
	}
	if _, err := ParseGameSpy([]byte(`\hostname\x\numplayers`)); err == nil {
		t.Fatal("dangling key accepted")
	}
}

// TestGameSpyQueries: a query stays a query when it carries \queryid\ or
// a word that takes a value (OpenBC docs/protocol/gamespy-protocol.md:
// "\status\" from LAN browsers, "\secure\<6-char challenge>" from the
// master, \echo\ echoed; its test harness sends \status\\queryid\99.1\).
func TestGameSpyQueries(t *testing.T) {
	for _, c := range []struct {
		in, kind, queryID string
		fields            []GameSpyField
		out               string // Append of the parse
	}{
		{`\status\`, "status", "", []GameSpyField{{"status", ""}}, `\status\`},
		{`\status\\queryid\99.1\`, "status", "99.1", []GameSpyField{{"status", ""}}, `\status\\queryid\99.1`},
		{`\queryid\2.1\basic\`, "basic", "2.1", []GameSpyField{{"basic", ""}}, `\basic\\queryid\2.1`},
		{`\basic\\info\`, "basic", "", []GameSpyField{{"basic", ""}, {"info", ""}}, `\basic\\info\`},
		{`\echo\hello there`, "echo", "", []GameSpyField{{"echo", "hello there"}}, `\echo\hello there`},
		{`\echo\status`, "echo", "", []GameSpyField{{"echo", "status"}}, `\echo\status`},
		{`\secure\ABCDEF`, "secure", "", []GameSpyField{{"secure", "ABCDEF"}}, `\secure\ABCDEF`},
		{`\basic\\secure\MOCKCH`, "basic", "", []GameSpyField{{"basic", ""}, {"secure", "MOCKCH"}}, `\basic\\secure\MOCKCH`},
	} {
		g, err := ParseGameSpy([]byte(c.in))
		if err != nil || !g.Query || g.Kind != c.kind || g.QueryID != c.queryID || !reflect.DeepEqual(g.Fields, c.fields) {
			t.Errorf("%s: %+v %v", c.in, g, err)
			continue
		}
		if got := string(g.Append(nil)); got != c.out {
			t.Errorf("%s: Append %s, want %s", c.in, got, c.out)
		}
	}
	// Replies are not queries, even when they start with a query word.
	for _, in := range []string{`\echo\hi\final\\queryid\1.1`, `\queryid\1.1`,
		`\gamename\bcommander\gamever\60\location\0\validate\abcdEFGH\final\\queryid\1.1`,
		`\heartbeat\22101\gamename\bcommander\`} {
		if g, _ := ParseGameSpy([]byte(in)); g.Query || g.Kind != "reply" {
			t.Errorf("%s read as a query: %+v", in, g)
		}
	}
}

func FuzzDatagram(f *testing.F) {
	for _, c := range realDatagrams {
		b, _ := hexDecode(c.hex)
		f.Add(b)
	}
	f.Add([]byte{0xFF, 0x01, 0x03, 0x08, 0x01, 0, 0, 0, 0x7F, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		var d Datagram
		err := d.Parse(b)
		var e *Error
		if err != nil && (!errors.As(err, &e) || e.Offset > len(b)) {
			t.Fatalf("bad error %v", err)
		}
		for i := range d.Messages {
			m := &d.Messages[i]
			if m.Offset+len(m.Raw) > len(b) {
				t.Fatalf("message %d runs past the input", i)
			}
			if !m.Legacy && !bytes.Equal(m.Append(nil), m.Raw) {
				t.Fatalf("message %d: append % X != raw % X", i, m.Append(nil), m.Raw)
			}
			if m.Type != TypeAck && m.Type != TypeData {
				ParseControl(m)
			}
		}
		if err == nil && !bytes.Equal(d.Append(nil), b) {
			t.Fatalf("clean parse does not round trip")
		}
	})
}

func FuzzGameSpy(f *testing.F) {
	f.Add([]byte(`\basic\`))
	f.Add([]byte(`\hostname\a\queryid\1.1\final\`))
	f.Add([]byte(`\hostname\a\final\\queryid\1.1`))
	f.Add([]byte(`\status\\queryid\99.1\`))
	f.Add([]byte(`\echo\x\secure\ABCDEF`))
	f.Fuzz(func(t *testing.T, b []byte) {
		g, err := ParseGameSpy(b)
		if g.Query && (len(g.Fields) > 0 || g.QueryID != "") {
			// A query reads back as itself.
			g2, err2 := ParseGameSpy(g.Append(nil))
			if err2 != nil || !g2.Query || g2.Kind != g.Kind || g2.QueryID != g.QueryID || !reflect.DeepEqual(g2.Fields, g.Fields) {
				t.Fatalf("query %q re-encoded as %q reads back as %+v (%v), want %+v", b, g.Append(nil), g2, err2, g)
			}
		}
		// An empty key cannot be written unambiguously (\\ also reads as
		// an empty query), so only replies without one must round trip.
		emptyKey := false
		for _, f := range g.Fields {
			emptyKey = emptyKey || f.Key == ""
		}
		if err == nil && !g.Query && !emptyKey {
			g2, err2 := ParseGameSpy(g.Append(nil))
			if err2 != nil || len(g2.Fields) != len(g.Fields) {
				t.Fatalf("re-parse of %q: %v", g.Append(nil), err2)
			}
		}
	})
}

// TestParseSetsEveryField parses datagrams into messages left over with
// every field set, and checks that they come out as from fresh storage:
// parseData and parseAck set the fields one by one, and a field added to
// Message must not be forgotten there.
func TestParseSetsEveryField(t *testing.T) {
	datagrams := []string{
		"0103" + "3207800100AABB" + "01070000" + "320600020068", // data (reliable), ACK, data
		"0203050AC00200020A0A0AEF0127000001280000",              // disconnect and two ACKs
		"010132" + "0AA0" + "0500" + "0003" + "212A00",          // fragment 0
	}
	for _, r := range realDatagrams {
		datagrams = append(datagrams, r.hex)
	}
	for _, h := range datagrams {
		b, err := hex.DecodeString(h)
		if err != nil {
			t.Fatal(err)
		}
		var fresh Datagram
		wantErr := fresh.Parse(b)
		used := Datagram{Messages: make([]Message, 8)}
		for i := range used.Messages {
			fixture.FillNonZero(t, reflect.ValueOf(&used.Messages[i]).Elem())
		}
		gotErr := used.Parse(b)
		if (gotErr == nil) != (wantErr == nil) || !reflect.DeepEqual(used.Messages, fresh.Messages) {
			t.Errorf("%s: reused storage gives %+v (%v), fresh %+v (%v)", h, used.Messages, gotErr, fresh.Messages, wantErr)
		}
	}
}
