package game

import (
	"fmt"
	"strings"
	"testing"
)

// stringMessages are messages of every type that carries a string, one
// each, as decoded and as bytes.
func stringMessages() []Message {
	return []Message{
		&Chat{Op: OpChat, SenderID: 2, Text: "gg all"},
		&Chat{Op: OpTeamChat, SenderID: 3, Text: "flank left"},
		&ObjCreate{HasTeam: true, Owner: 1, Team: 2, Class: ClassShip, Object: PlayerObjectID(1),
			Species: 5, PlayerName: "Picard", SetName: "Multi1", SubsystemData: []byte{}},
		&DeletePlayerAnim{Name: "Picard"},
		&Settings{GameTime: 12.5, PlayerSlot: 1, Map: "Multiplayer.Episode.Mission1.Mission1"},
		&ChecksumRequest{Round: 1, Dir: "scripts/ships", Filter: "*.pyc", Recursive: true},
		&ChecksumFail{Op: OpSystemChecksumFail, File: "scripts/App.pyc"},
		&FileTransfer{Name: "scripts/Custom/x.py", Data: HexData{1, 2, 3}},
		&EnterSet{Object: PlayerObjectID(1), SetName: "Multi1"},
	}
}

// TestRepeatedStringsDecodeWithoutAllocating decodes the same string-carrying
// messages twice: the second time, every string comes from the intern
// table and nothing is allocated.
func TestRepeatedStringsDecodeWithoutAllocating(t *testing.T) {
	var wire [][]byte
	var want []string
	for _, m := range stringMessages() {
		wire = append(wire, m.Append(nil))
		want = append(want, m.String())
	}
	d := NewDecoder()
	decodeAll := func() {
		for i, b := range wire {
			res := d.Decode(b, ServerToClient)
			if res.Err != nil || len(res.Unparsed) > 0 {
				t.Fatalf("% X: %v, unparsed % X", b, res.Err, res.Unparsed)
			}
			if got := res.Msg.String(); got != want[i] {
				t.Fatalf("decoded %s, want %s", got, want[i])
			}
		}
	}
	decodeAll()
	// The check above formats strings; count only the decoding.
	allocs := testing.AllocsPerRun(100, func() {
		for _, b := range wire {
			d.Decode(b, ServerToClient)
		}
	})
	if allocs != 0 {
		t.Fatalf("decoding messages seen before allocates %v times", allocs)
	}
	decodeAll()
}

// TestInternTableStaysBounded feeds endless distinct chat lines and names:
// the table never holds more than maxInterned strings, and every message
// still decodes to its own text, including ones whose string was evicted.
func TestInternTableStaysBounded(t *testing.T) {
	d := NewDecoder()
	for i := range 20 * maxInterned {
		text := fmt.Sprintf("spam line %d", i)
		res := d.Decode((&Chat{Op: OpChat, SenderID: 2, Text: text}).Append(nil), ClientToServer)
		if got := res.Msg.(*Chat).Text; got != text {
			t.Fatalf("line %d decoded as %q", i, got)
		}
		name := fmt.Sprintf("player%d", i)
		res = d.Decode((&DeletePlayerAnim{Name: name}).Append(nil), ServerToClient)
		if got := res.Msg.(*DeletePlayerAnim).Name; got != name {
			t.Fatalf("name %d decoded as %q", i, got)
		}
		if n := len(d.strs.m); n > maxInterned || len(d.strs.order) > maxInterned {
			t.Fatalf("after %d messages the table holds %d strings (ring %d), limit %d",
				2*i+2, n, len(d.strs.order), maxInterned)
		}
	}
	// Long strings are returned but not kept.
	long := strings.Repeat("x", maxInternLen+1)
	res := d.Decode((&Chat{Op: OpChat, Text: long}).Append(nil), ClientToServer)
	if res.Msg.(*Chat).Text != long {
		t.Fatal("a long chat line decoded wrongly")
	}
	if _, kept := d.strs.m[long]; kept {
		t.Fatal("a string longer than maxInternLen was kept")
	}
	// An evicted string comes back intact.
	res = d.Decode((&Chat{Op: OpChat, Text: "spam line 0"}).Append(nil), ClientToServer)
	if got := res.Msg.(*Chat).Text; got != "spam line 0" {
		t.Fatalf("re-decoded an evicted line as %q", got)
	}
}
