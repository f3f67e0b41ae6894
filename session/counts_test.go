package session

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
)

func TestCounts(t *testing.T) {
	h := newHarness(t, Options{})
	c, s := testClient, testServer
	h.peer(c).id = 2
	// One minute: 600 StateUpdates each way, 60 reliable chats C->S (ACKed),
	// a fragmented checksum request S->C, two GameSpy queries and a reply.
	for i := range 600 {
		h.send(c, s, unreliable(stateUpdate(game.PlayerObjectID(0), float32(i))))
		h.send(s, c, unreliable(stateUpdate(game.PlayerObjectID(0), float32(i))))
		if i%10 == 0 {
			h.deliver(c, s, h.gameMsgs(c, &game.Chat{Op: game.OpChat, SenderID: 2, Text: "0123456789"})...)
			h.step(60 * time.Millisecond)
		} else {
			h.step(100 * time.Millisecond)
		}
	}
	big := (&game.ChecksumRequest{Round: 2, Dir: strings.Repeat("d", 600), Filter: "*.pyc"}).Append(nil)
	m := h.reliable(s, dissect.TypeData, nil)
	f0, f1 := m, m
	f0.Fragment, f0.FragTotal, f0.Payload = true, 2, big[:300]
	f1.Fragment, f1.FragIndex, f1.Payload = true, 1, big[300:]
	h.send(s, c, f0, f1)
	browser := testClient2
	for _, q := range []string{`\status\`, `\basic\`} {
		h.frame++
		h.tr.Datagram(h.frame, h.now, browser, s, []byte(q), h.b.Add)
	}
	h.frame++
	h.tr.Datagram(h.frame, h.now, s, browser, []byte(`\hostname\x\final\`), h.b.Add)
	h.finish()

	tot := h.b.Totals()
	if got := tot.Duration(); got < 59*time.Second || got > 61*time.Second {
		t.Errorf("duration %v", got)
	}
	su := tot.Opcodes[0][game.OpStateUpdate]
	if su.Count != 600 || su.Bytes != 600*10 {
		t.Errorf("C->S StateUpdate %+v", su)
	}
	chat := tot.Opcodes[0][game.OpChat]
	if chat.Count != 60 || chat.Bytes != 60*(1+4+2+10) {
		t.Errorf("chat %+v", chat)
	}
	if req := tot.Opcodes[1][game.OpChecksumRequest]; req.Count != 1 || req.Bytes != len(big) {
		t.Errorf("reassembled request %+v, want 1 message of %d bytes", req, len(big))
	}
	if d := tot.Transport[1][dissect.TypeData]; d.Count != 602 {
		t.Errorf("S->C data messages %d, want 602 (600 updates, 2 fragments)", d.Count)
	}
	if a := tot.Transport[1][dissect.TypeAck]; a.Count != 60 || a.Bytes != 60*4 {
		t.Errorf("S->C ACKs %+v", a)
	}
	if tot.GameSpy["status"] != 1 || tot.GameSpy["basic"] != 1 || tot.GameSpy["reply"] != 1 {
		t.Errorf("gamespy %v", tot.GameSpy)
	}

	rows := tot.OpcodeRows()
	var prev OpcodeRow
	for i, r := range rows {
		if i > 0 && (r.Dir < prev.Dir || (r.Dir == prev.Dir && r.Opcode <= prev.Opcode)) {
			t.Errorf("rows out of order: %+v after %+v", r, prev)
		}
		prev = r
		if r.Dir == "C->S" && r.Opcode == game.OpStateUpdate {
			if r.Share != 0.9091 || r.PerMinute < 595 || r.PerMinute > 605 || r.Per15Min != r.PerMinute*15 && abs(r.Per15Min-r.PerMinute*15) > 0.1 {
				t.Errorf("StateUpdate row %+v", r)
			}
		}
	}
	if len(rows) != 4 {
		t.Errorf("%d rows: %+v", len(rows), rows)
	}

	// The session counts the same as the totals, minus GameSpy.
	ss := h.only()
	if ss.Traffic.Opcodes != tot.Opcodes || ss.Traffic.Transport != tot.Transport || ss.Traffic.GameSpy != nil {
		t.Errorf("session traffic differs from the totals")
	}
	var merged Counts
	merged.Merge(tot)
	merged.Merge(&ss.Traffic)
	if merged.Opcodes[0][game.OpChat].Count != 120 || merged.GameSpy["status"] != 1 || !merged.First.Equal(tot.First) {
		t.Errorf("merge: %+v", merged.Opcodes[0][game.OpChat])
	}
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

func TestCountsDamage(t *testing.T) {
	var c Counts
	c.Add(&flow.Record{Kind: flow.KindDamaged, Frame: 3}) // a capture record: no direction
	c.Add(&flow.Record{Kind: flow.KindDamaged, Dir: game.ServerToClient, Time: testStart})
	c.Add(&flow.Record{Kind: flow.KindLost, Dir: game.ClientToServer})
	if c.Unplaced != 1 || c.Damaged[1] != 1 || c.Datagrams[1] != 1 || c.Lost != 1 || !c.First.Equal(testStart) {
		t.Errorf("%+v %+v %d %d", c.Damaged, c.Datagrams, c.Unplaced, c.Lost)
	}
}

// BenchmarkBuilder measures the steady state: StateUpdates and ACKed
// reliable messages of one session.
func BenchmarkBuilder(b *testing.B) {
	h := newHarness(&testing.T{}, Options{})
	c, s := testClient, testServer
	h.peer(c).id = 2
	var recs []flow.Record
	collect := func(r *flow.Record) {
		cp := *r
		msg := *r.Msg // the tracker reuses its buffers: keep copies
		msg.Raw = append([]byte(nil), msg.Raw...)
		msg.Payload = append([]byte(nil), msg.Payload...)
		cp.Msg = &msg
		if r.Game != nil {
			g := *r.Game
			cp.Game, cp.Payload = &g, append([]byte(nil), r.Payload...)
		}
		recs = append(recs, cp)
	}
	tr := flow.New(flow.Options{})
	for i := range 1000 {
		var msgs []dissect.Message
		msgs = append(msgs, unreliable(stateUpdate(game.PlayerObjectID(0), float32(i))))
		if i%10 == 0 {
			msgs = append(msgs, h.reliable(c, dissect.TypeData, (&game.Chat{Op: game.OpChat, SenderID: 2, Text: "x"}).Append(nil)))
		}
		d := dissect.Datagram{Peer: 2, Messages: msgs}
		plain := d.Append(nil)
		dissect.Encrypt(plain, plain)
		tr.Datagram(i+1, testStart.Add(time.Duration(i)*100*time.Millisecond), c, s, plain, collect)
	}
	b.ReportAllocs()
	b.ResetTimer()
	n := 0
	for b.Loop() {
		bl := NewBuilder(Options{}, nil)
		for i := range recs {
			r := recs[i]
			r.Time = r.Time.Add(time.Duration(n) * time.Hour)
			bl.Add(&r)
		}
		bl.Finish()
		n++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
}

// Totals counts the records of open sessions in the sessions alone and adds
// them up when asked: at any point it must equal Counts.Add over every
// record so far.
func TestTotalsMidCapture(t *testing.T) {
	br := loadBattleRecords(t)
	b := NewBuilder(Options{Timeout: 5 * time.Second}, nil)
	var want Counts
	for i := range br.recs {
		r := &br.recs[i]
		b.Add(r)
		want.Add(r)
		if i%997 == 0 || i == len(br.recs)-1 {
			if got := sessionsJSON(t, nil, b.Totals()); string(got) != string(sessionsJSON(t, nil, &want)) {
				t.Fatalf("after %d records (%d open): totals\n%s\nwant\n%s", i+1, b.Live(), got, sessionsJSON(t, nil, &want))
			}
		}
	}
	b.Finish()
	if got := sessionsJSON(t, nil, b.Totals()); string(got) != string(sessionsJSON(t, nil, &want)) {
		t.Fatalf("after Finish: totals\n%s\nwant\n%s", got, sessionsJSON(t, nil, &want))
	}
}

func TestHexByte(t *testing.T) {
	for b := range 256 {
		if got, want := hexByte(uint8(b)), fmt.Sprintf("0x%02X", b); got != want {
			t.Fatalf("hexByte(%d) = %q, want %q", b, got, want)
		}
	}
}

// Merge adds every tally, whichever of the four in a group is set (it
// skips groups of zeros), and the rows and their reused forms agree.
func TestMergeAddsEveryTally(t *testing.T) {
	var a, b, want Counts
	for d := range 2 {
		for i := range 256 {
			if (i*7+d)%5 == 0 { // sparse, at every place in a group of four
				a.Opcodes[d][i] = Tally{Count: i + 1, Bytes: 3 * i}
				want.Opcodes[d][i].add(a.Opcodes[d][i])
			}
			if (i*3+d)%11 == 0 {
				b.Opcodes[d][i] = Tally{Count: 2, Bytes: -i} // a negative sum still counts
				b.Transport[d][i] = Tally{Bytes: i + 1}      // bytes without a count too
				want.Opcodes[d][i].add(b.Opcodes[d][i])
				want.Transport[d][i].add(b.Transport[d][i])
			}
		}
	}
	var got Counts
	got.Merge(&a)
	got.Merge(&b)
	if got.Opcodes != want.Opcodes || got.Transport != want.Transport {
		t.Errorf("Merge lost tallies")
	}
	reused := make([]OpcodeRow, 3)
	if rows := got.AppendOpcodeRows(reused[:0]); !reflect.DeepEqual(rows, got.OpcodeRows()) {
		t.Errorf("AppendOpcodeRows differs from OpcodeRows")
	}
	if rows := got.AppendTransportRows(nil); !reflect.DeepEqual(rows, got.TransportRows()) || len(rows) != 0 {
		t.Errorf("transport rows of counts without a count: %v", rows) // a type is listed for its count
	}
}
