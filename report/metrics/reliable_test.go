package metrics

import (
	"net/netip"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
)

// TestObserveRetransmissionsAndRTT feeds a Dissector the records of a few
// reliable messages and their ACKs and checks what it counts: a message
// sent twice is one retransmission and gives no round-trip time (which
// copy was ACKed cannot be known); a message sent once gives its ACK's
// delay; a duplicate ACK and an ACK of an unknown message give nothing;
// fragments are told apart.
func TestObserveRetransmissionsAndRTT(t *testing.T) {
	server := netip.MustParseAddrPort("10.0.0.1:22101")
	client := netip.MustParseAddrPort("10.0.1.10:50000")
	t0 := time.Date(2026, 1, 10, 20, 0, 0, 0, time.UTC)
	rec := func(at time.Duration, dir game.Direction, m dissect.Message) *flow.Record {
		return &flow.Record{Kind: flow.KindMessage, Time: t0.Add(at), Server: server, Client: client, Dir: dir, Msg: &m}
	}
	data := func(seq uint16) dissect.Message {
		return dissect.Message{Type: dissect.TypeData, Reliable: true, Seq: seq}
	}
	frag := func(seq uint16, i uint8) dissect.Message {
		m := data(seq)
		m.Fragment, m.FragIndex = true, i
		return m
	}
	ack := func(seq uint16) dissect.Message { return dissect.Message{Type: dissect.TypeAck, Seq: seq} }
	ackFrag := func(seq uint16, i uint8) dissect.Message {
		return dissect.Message{Type: dissect.TypeAck, Seq: seq, AckFlags: dissect.AckFragment, AckFragIndex: i}
	}
	d := NewDissector()
	for _, r := range []*flow.Record{
		rec(0, game.ServerToClient, data(5)),
		rec(20*time.Millisecond, game.ClientToServer, ack(5)), // 20 ms
		rec(25*time.Millisecond, game.ClientToServer, ack(5)), // duplicate ACK
		rec(30*time.Millisecond, game.ServerToClient, data(6)),
		rec(530*time.Millisecond, game.ServerToClient, data(6)), // retransmission
		rec(600*time.Millisecond, game.ClientToServer, ack(6)),  // of a resent message: no time
		rec(700*time.Millisecond, game.ClientToServer, ack(77)), // never seen
		rec(800*time.Millisecond, game.ClientToServer, frag(9, 0)),
		rec(800*time.Millisecond, game.ClientToServer, frag(9, 1)),
		rec(803*time.Millisecond, game.ServerToClient, ackFrag(9, 1)), // 3 ms
		rec(1000*time.Millisecond, game.ClientToServer, frag(9, 0)),   // retransmission of fragment 0
	} {
		d.Observe(r)
	}
	c := d.live
	if c.retransmissions != [2]uint64{1, 1} {
		t.Errorf("retransmissions C->S, S->C = %v, want [1 1]", c.retransmissions)
	}
	if c.rttCount != 2 {
		t.Fatalf("%d round-trip times, want 2 (20 ms and 3 ms)", c.rttCount)
	}
	if want := 0.023; c.rttSum < want-1e-9 || c.rttSum > want+1e-9 {
		t.Errorf("round-trip sum %v s, want %v", c.rttSum, want)
	}
	// 3 ms falls in the 5 ms bucket (index 2), 20 ms in the 25 ms one (4).
	if c.rttBuckets[2] != 1 || c.rttBuckets[4] != 1 {
		t.Errorf("buckets %v", c.rttBuckets)
	}
}
