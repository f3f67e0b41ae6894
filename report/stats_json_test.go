package report

import (
	"math"
	"testing"
	"time"

	"github.com/bcwire/bcwire/session"
)

// The hand-written session entry must be the bytes marshalJSON makes, and
// must step aside (ok false) exactly where marshalJSON fails.
func TestAppendSessionStatsMatchesMarshal(t *testing.T) {
	start := time.Date(2026, 1, 10, 20, 0, 0, 762454323, time.UTC)
	base := sessionStatsJSON{
		File: `dir/a "b" <c>&d.pcap`, Server: "10.0.0.1:22101", Client: "[fe80::1%eth0]:50000", Slot: -1,
		Name: "Cady\u2028\xff", Start: start, End: start.Add(64425 * time.Millisecond), Duration: 64.425,
		EndReason: session.EndTimeout,
		Opcodes: []session.OpcodeRow{
			{Dir: "C->S", Opcode: 3, Hex: "0x03", Name: "ObjCreateTeam", Count: 1, Bytes: 71, Share: 0.0013, ByteShare: 0.0033, PerMinute: 1.013, Per15Min: 15.201},
			{Dir: "S->C", Opcode: 0xFF, Hex: "0xFF", Name: "", Count: 1 << 40, Bytes: -1, Share: 1e-7, ByteShare: 1e21, PerMinute: 0, Per15Min: math.Copysign(0, -1)},
		},
		Transport: []session.TransportRow{{Dir: "S->C", Type: 0x32, Hex: "0x32", Name: "Reliable", Count: 7, Bytes: 700}},
	}
	empty := base
	empty.Opcodes, empty.Transport = []session.OpcodeRow{}, []session.TransportRow{}
	zone := base
	zone.Start = start.In(time.FixedZone("X", -(23*3600 + 59*60)))
	zero := base
	zero.Start, zero.End = time.Time{}, time.Time{}

	nonStock := base
	nonStock.NonStock = []session.NonStockRow{
		{Dir: "C->S", Name: "event-length", Count: 3, What: "an event-forward message <short>", Evidence: `stock-payloads.json "StartFiring … (VDAY)" & more`},
		{Dir: "S->C", Name: "unknown", Count: 1},
	}
	// The same codes and forms with other strings: a memo made from the
	// cases above must not write its bytes for these.
	renamed := nonStock
	renamed.Opcodes = []session.OpcodeRow{base.Opcodes[0], base.Opcodes[1]}
	renamed.Opcodes[0].Name, renamed.Opcodes[1].Hex = "Renamed", "0xff"
	renamed.Transport = []session.TransportRow{{Dir: "S->C", Type: 0x32, Hex: "0x32", Name: "Reliable\n", Count: 7, Bytes: 700}}
	renamed.NonStock = []session.NonStockRow{nonStock.NonStock[0], {Dir: "S->C", Name: "unknown", Count: 1, Evidence: "other"}}
	renamed.NonStock[0].What += "!"
	odd := base // a direction the memo does not keep
	odd.Opcodes = []session.OpcodeRow{base.Opcodes[0]}
	odd.Opcodes[0].Dir = "?"

	cases := []struct {
		name string
		v    sessionStatsJSON
	}{{"full", base}, {"empty rows", empty}, {"zone", zone}, {"zero times", zero}, {"non-stock", nonStock},
		{"renamed", renamed}, {"odd direction", odd}, {"full again", base}, {"non-stock again", nonStock}}
	memo := new(rowMemo) // one for all cases, in order, as a printer keeps it
	for _, c := range cases {
		want, err := marshalJSON(c.v)
		if err != nil {
			t.Fatalf("%s: marshalJSON: %v", c.name, err)
		}
		for _, m := range []*rowMemo{nil, memo, memo} {
			got, ok := appendSessionStats([]byte("prefix"), &c.v, m)
			if !ok || string(got) != "prefix"+string(want) {
				t.Errorf("%s (memo %v):\n got %s (ok %v)\nwant prefix%s", c.name, m != nil, got, ok, want)
			}
		}
	}
	if len(memo.nonStocks) != 4 {
		t.Errorf("memo holds %d non-stock rows, want 4", len(memo.nonStocks))
	}

	bad := map[string]func(*sessionStatsJSON){
		"year 10000":   func(v *sessionStatsJSON) { v.End = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) },
		"year -1":      func(v *sessionStatsJSON) { v.Start = time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC) },
		"zone 24h":     func(v *sessionStatsJSON) { v.Start = start.In(time.FixedZone("Y", 24*3600)) },
		"NaN share":    func(v *sessionStatsJSON) { v.Opcodes[0].Share = math.NaN() },
		"inf duration": func(v *sessionStatsJSON) { v.Duration = math.Inf(1) },
	}
	for name, spoil := range bad {
		v := base
		v.Opcodes = append([]session.OpcodeRow(nil), base.Opcodes...)
		spoil(&v)
		if _, err := marshalJSON(v); err == nil {
			t.Fatalf("%s: marshalJSON accepted it; the case tests nothing", name)
		}
		if _, ok := appendSessionStats(nil, &v, new(rowMemo)); ok {
			t.Errorf("%s: appendSessionStats wrote what marshalJSON refuses", name)
		}
	}
}
