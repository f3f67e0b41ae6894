package game

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/internal/fixture"
)

// Connection-phase messages: Settings 0x00, GameInit 0x01, UICollision 0x16,
// NewPlayerInGame 0x2A and the dead slots 0x04/0x05/0x24/0x26.

const mission1Hex = "4D 75 6C 74 69 70 6C 61 79 65 72 2E 45 70 69 73 6F 64 65 2E 4D 69 73 73 69 6F 6E 31 2E 4D 69 73 73 69 6F 6E 31"

func checkSettings(want Settings) func(t *testing.T, m Message) {
	return func(t *testing.T, m Message) {
		t.Helper()
		got, ok := m.(*Settings)
		if !ok {
			t.Fatalf("decoded as %T", m)
		}
		if !reflect.DeepEqual(*got, want) {
			t.Fatalf("got  %+v\nwant %+v", *got, want)
		}
	}
}

var (
	// The datagram's third message at offset 0x0D: `32 33 80 06 00` then 46
	// payload bytes. The source's own decode: gameTime=33.25 slot=0 map=
	// "Multiplayer.Episode.Mission1.Mission1"; 0x61 = collision on, friendly
	// fire off, no checksum correction (wire-format-audit §5/§6).
	_ = addReal(realCase{
		name:   "Settings/stock-dedi-packet-25",
		source: "OpenBC docs/wire-formats/checksum-handshake-protocol/05-observed-packet-trace-stock-dedicated-server.md, Packet #25 msg [1]",
		dir:    ServerToClient,
		hex:    "00 00 00 05 42 61 00 25 00" + mission1Hex,
		check: checkSettings(Settings{GameTime: 33.25, CollisionDamage: true, PlayerSlot: 0,
			Map: "Multiplayer.Episode.Mission1.Mission1"}),
	})
	// The audit quotes `00 00 32 98 42 61 00 25 00 4D...31` and states the
	// elided part is the 37-byte map "Multiplayer.Episode.Mission1.Mission1"
	// (46 bytes in all); the map bytes are spelled out here from that
	// statement. 0x42983200 is 76.09766 (the audit rounds it to 76.10).
	_ = addReal(realCase{
		name:   "Settings/stock-dedi-packet-27",
		source: "OpenBC docs/network-flows/wire-format-audit/07-6-settings-0x00-payload.md, Packet #27",
		dir:    ServerToClient,
		hex:    "00 00 32 98 42 61 00 25 00" + mission1Hex,
		check: checkSettings(Settings{GameTime: 76.09766, CollisionDamage: true, PlayerSlot: 0,
			Map: "Multiplayer.Episode.Mission1.Mission1"}),
	})
	_ = addReal(realCase{
		name:   "GameInit/stock-dedi-packet-25",
		source: "OpenBC docs/wire-formats/checksum-handshake-protocol/05-observed-packet-trace-stock-dedicated-server.md, Packet #25 msg [2] (`32 06 80 07 00 01`)",
		dir:    ServerToClient,
		hex:    "01",
		check: func(t *testing.T, m Message) {
			if _, ok := m.(*GameInit); !ok {
				t.Fatalf("decoded as %T", m)
			}
		},
	})
	// The byte after 0x2A is a packed-bit group: count 1 (0x20 >> 5), value
	// bit 0 clear, i.e. one WriteBit(false).
	_ = addReal(realCase{
		name:   "NewPlayerInGame/stock-client-packet-30",
		source: "vectors/stock-datagrams.json \"Packet #30\" (020132078005002A20); wire-format-audit/09-8 Packet #30",
		dir:    ClientToServer,
		hex:    "2A 20",
		check: func(t *testing.T, m Message) {
			got, ok := m.(*NewPlayerInGame)
			if !ok {
				t.Fatalf("decoded as %T", m)
			}
			if got.Flag {
				t.Fatalf("flag = true, want false")
			}
		},
	})
)

// roundTrip encodes m, decodes the bytes and checks the result equals m and
// re-encodes to the same bytes.
func roundTrip(t *testing.T, m Message, dir Direction) Message {
	t.Helper()
	b := m.Append(nil)
	if Opcode(b[0]) != m.Opcode() {
		t.Fatalf("first byte %#02x, want opcode %#02x", b[0], uint8(m.Opcode()))
	}
	res := NewDecoder().Decode(b, dir)
	if res.Err != nil {
		t.Fatalf("decode % X: %v", b, res.Err)
	}
	if len(res.Unparsed) > 0 {
		t.Fatalf("decode % X: unparsed % X", b, res.Unparsed)
	}
	if !reflect.DeepEqual(normalizeMsg(res.Msg), normalizeMsg(m)) {
		t.Fatalf("round trip of % X\ngot  %#v\nwant %#v", b, res.Msg, m)
	}
	if again := res.Msg.Append(nil); !bytes.Equal(again, b) {
		t.Fatalf("re-encoded % X, want % X", again, b)
	}
	return res.Msg
}

// normalizeMsg maps empty slices to nil so a decoded empty list compares
// equal to a literal that left it out.
func normalizeMsg(m Message) Message {
	switch v := m.(type) {
	case *ChecksumResponse:
		c := *v
		c.Tree = normalizeTree(c.Tree)
		return &c
	case *ScoreChange:
		c := *v
		if len(c.Others) == 0 {
			c.Others = nil
		}
		return &c
	case *Settings:
		c := *v
		if len(c.CorrectionData) == 0 {
			c.CorrectionData = nil
		}
		return &c
	case *FileTransfer:
		c := *v
		if len(c.Data) == 0 {
			c.Data = nil
		}
		return &c
	case *Dead:
		c := *v
		if len(c.Data) == 0 {
			c.Data = nil
		}
		return &c
	}
	return m
}

func normalizeTree(t ChecksumTree) ChecksumTree {
	out := ChecksumTree{}
	if len(t.Files) > 0 {
		out.Files = t.Files
	}
	for _, s := range t.Subdirs {
		out.Subdirs = append(out.Subdirs, ChecksumSubdir{Name: s.Name, Tree: normalizeTree(s.Tree)})
	}
	return out
}

func TestSettingsVariants(t *testing.T) {
	for _, m := range []*Settings{
		{GameTime: 38.8125, PlayerSlot: 1, Map: "Multiplayer.Episode.Mission1.Mission1"},
		{GameTime: 0, CollisionDamage: true, FriendlyFire: true, PlayerSlot: 15, Map: "Multiplayer.Episode.Mission2.Mission2"},
		{GameTime: 1234.5, FriendlyFire: true, Map: ""},
		{GameTime: 5, CollisionDamage: true, PlayerSlot: 2, Map: "m", ChecksumCorrection: true, CorrectionData: HexData{1, 2, 3}},
		{GameTime: 5, Map: "m", ChecksumCorrection: true},
	} {
		roundTrip(t, m, ServerToClient)
		// All three bits share the first group byte, right after the float.
		b := m.Append(nil)
		want := byte(0x60)
		for i, v := range []bool{m.CollisionDamage, m.FriendlyFire, m.ChecksumCorrection} {
			if v {
				want |= 1 << i
			}
		}
		if b[5] != want {
			t.Errorf("%v: group byte %#02x, want %#02x", m, b[5], want)
		}
	}
}

func TestSettingsCorrectionWarns(t *testing.T) {
	m := &Settings{Map: "x", ChecksumCorrection: true, CorrectionData: HexData{0xAA}}
	res := NewDecoder().Decode(m.Append(nil), ServerToClient)
	if res.Err != nil || res.Warning == "" {
		t.Fatalf("want a warning about correction data, got %+v", res)
	}
	// Without the flag, trailing bytes are left unparsed, not swallowed.
	b := append((&Settings{Map: "x"}).Append(nil), 0xAA)
	res = NewDecoder().Decode(b, ServerToClient)
	if res.Err != nil || !bytes.Equal(res.Unparsed, []byte{0xAA}) {
		t.Fatalf("trailing byte: %+v", res)
	}
}

// A writer that stores count-1 (OpenBC before its fix) makes 0x41 for the
// stock Settings bits; that is not a stock message and must not decode. A
// stock reader takes the group as two bits and looks for the third in a new
// group byte after the map name: here there is none (truncated), and when
// one is there the first group fails the stock-encoding check.
func TestSettingsRejectsNonStockBitGroup(t *testing.T) {
	b := fixture.Unhex(t, "00 00 32 98 42 41 00 25 00"+mission1Hex)
	res := NewDecoder().Decode(b, ServerToClient)
	if res.Err == nil || !errors.Is(res.Err, dissect.ErrShort) {
		t.Fatalf("want a truncation error, got %+v", res)
	}
	if _, ok := res.Msg.(*Raw); !ok {
		t.Fatalf("failed message shown as %T, want *Raw", res.Msg)
	}
	res = NewDecoder().Decode(append(b, 0x20), ServerToClient)
	if res.Err == nil || !errors.Is(res.Err, dissect.ErrBadValue) {
		t.Fatalf("want a bad-value error, got %+v", res)
	}
	// Stray value bits beyond the count.
	for _, h := range []string{"2A 22", "2A 40", "16 23", "2A 00"} {
		if res := NewDecoder().Decode(fixture.Unhex(t, h), ServerToClient); res.Err == nil {
			t.Errorf("%s: decoded without error: %+v", h, res.Msg)
		}
	}
}

func TestSettingsTruncated(t *testing.T) {
	full := fixture.Unhex(t, "00 00 00 05 42 61 00 25 00"+mission1Hex)
	for n := 1; n < len(full); n++ {
		res := NewDecoder().Decode(full[:n], ServerToClient)
		if res.Err == nil {
			t.Fatalf("%d bytes: no error", n)
		}
		if !errors.Is(res.Err, dissect.ErrShort) {
			t.Fatalf("%d bytes: %v, want ErrShort", n, res.Err)
		}
	}
}

func TestUICollisionSynthetic(t *testing.T) {
	// Synthetic: no source quotes the bytes of a 0x16 message.
	for _, v := range []bool{false, true} {
		m := roundTrip(t, &UICollision{CollisionDamage: v}, ServerToClient)
		want := []byte{0x16, 0x20}
		if v {
			want[1] = 0x21
		}
		if b := m.Append(nil); !bytes.Equal(b, want) {
			t.Errorf("UICollision(%t) = % X, want % X", v, b, want)
		}
	}
}

func TestNewPlayerInGameVariants(t *testing.T) {
	roundTrip(t, &NewPlayerInGame{}, ClientToServer)
	// Server to client has the same layout.
	roundTrip(t, &NewPlayerInGame{}, ServerToClient)
	res := NewDecoder().Decode([]byte{0x2A, 0x21}, ClientToServer)
	if res.Err != nil || !res.Msg.(*NewPlayerInGame).Flag || res.Warning == "" {
		t.Fatalf("2A 21: %+v", res)
	}
}

func TestEmptyMessages(t *testing.T) {
	for _, m := range []Message{&GameInit{}, &ChecksumComplete{}, &FileTransferACK{}, &RestartGame{}} {
		b := roundTrip(t, m, ServerToClient).Append(nil)
		if len(b) != 1 {
			t.Errorf("%T encodes as % X, want the opcode alone", m, b)
		}
		// A trailing byte is reported, not swallowed.
		res := NewDecoder().Decode(append(b, 0x00), ServerToClient)
		if res.Err != nil || len(res.Unparsed) != 1 {
			t.Errorf("%T with a trailing byte: %+v", m, res)
		}
	}
}

func TestDeadOpcodes(t *testing.T) {
	// Synthetic: these slots were never seen on the wire.
	for _, op := range []Opcode{OpDead04, OpDead05, OpUnused24, OpUnused26} {
		for _, data := range [][]byte{nil, {0x04}, {1, 2, 3}} {
			b := append([]byte{byte(op)}, data...)
			res := NewDecoder().Decode(b, ServerToClient)
			if res.Err != nil || len(res.Unparsed) > 0 {
				t.Fatalf("% X: %+v", b, res)
			}
			d, ok := res.Msg.(*Dead)
			if !ok || d.Op != op || !bytes.Equal(d.Data, data) {
				t.Fatalf("% X decoded as %#v", b, res.Msg)
			}
			if res.Warning == "" {
				t.Fatalf("% X: no dead-slot warning", b)
			}
			if got := d.Append(nil); !bytes.Equal(got, b) {
				t.Fatalf("re-encoded % X, want % X", got, b)
			}
		}
	}
}

// connectionFuzzOps are the opcodes FuzzConnectionMessages prefixes.
var connectionFuzzOps = []Opcode{OpSettings, OpGameInit, OpUICollision, OpNewPlayerInGame,
	OpDead04, OpDead05, OpUnused24, OpUnused26}

func FuzzConnectionMessages(f *testing.F) {
	fuzzSeed(f, connectionFuzzOps)
	f.Add(uint8(0), []byte{0, 0, 0, 0, 0x41, 0, 0, 0})
	f.Add(uint8(0), []byte{0, 0, 0, 0, 0x64, 0, 1, 0, 'x', 1, 2})
	f.Fuzz(func(t *testing.T, sel uint8, body []byte) {
		fuzzOne(t, connectionFuzzOps[int(sel)%len(connectionFuzzOps)], body)
	})
}

// fuzzSeed adds every real case whose opcode is in ops as (index, body).
func fuzzSeed(f *testing.F, ops []Opcode) {
	for _, c := range realCases {
		b := fixture.Unhex(f, c.hex)
		for i, op := range ops {
			if Opcode(b[0]) == op {
				f.Add(uint8(i), b[1:])
			}
		}
	}
	for i := range ops {
		f.Add(uint8(i), []byte{})
	}
}

// fuzzOne decodes op+body: no panic, and an error-free, fully consumed
// decode must re-encode to exactly the input.
func fuzzOne(t *testing.T, op Opcode, body []byte) {
	in := append([]byte{byte(op)}, body...)
	d := NewDecoder()
	for _, dir := range []Direction{ClientToServer, ServerToClient} {
		res := d.Decode(in, dir)
		if res.Msg == nil {
			t.Fatalf("% X: nil message", in)
		}
		_ = res.Msg.String()
		// Every message answers to the opcode byte it was decoded from,
		// damaged (Raw) ones too: flow's Tracker reads the byte instead.
		if res.Msg.Opcode() != op {
			t.Fatalf("% X: decoded opcode %v", in, res.Msg.Opcode())
		}
		if res.Err != nil {
			if _, ok := res.Msg.(*Raw); !ok {
				t.Fatalf("% X: error %v but message %T", in, res.Err, res.Msg)
			}
			continue
		}
		if len(res.Unparsed) > 0 {
			continue
		}
		if got := res.Msg.Append(nil); !bytes.Equal(got, in) {
			t.Fatalf("re-encoded\n% X\nwant\n% X\n(%s)", got, in, res.Msg)
		}
	}
}

func BenchmarkConnectionDecode(b *testing.B) {
	msgs := [][]byte{
		fixture.Unhex(b, "00 00 00 05 42 61 00 25 00"+mission1Hex),
		fixture.Unhex(b, "01"),
		fixture.Unhex(b, "2A 20"),
		fixture.Unhex(b, "16 21"),
	}
	benchDecode(b, ServerToClient, msgs)
}
