package session_test

import (
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/session"
)

// An ACK is matched as its flags say, and when they do not fit a message
// the capture showed (a non-stock peer's: OpenBC's test quirk of control
// ACKs with flags 0x00), as they could have meant; a second ACK is a
// duplicate, one of nothing unmatched.
func TestDeliveryMatchesAcks(t *testing.T) {
	var d session.Delivery
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ctl := dissect.Message{Type: dissect.TypeConnectAck, Reliable: true, Seq: 0}
	data := dissect.Message{Type: dissect.TypeData, Reliable: true, Seq: 0}
	frag := dissect.Message{Type: dissect.TypeData, Reliable: true, Fragment: true, Seq: 1, FragIndex: 2}
	for i, m := range []*dissect.Message{&ctl, &data, &frag} {
		if d.Send(m, t0, i+1) {
			t.Fatalf("message %d taken for a retransmission", i)
		}
	}
	if !d.Send(&data, t0.Add(time.Second), 9) {
		t.Fatal("a copy of the data message not taken for a retransmission")
	}
	for i, c := range []struct {
		ack  dissect.Message
		want session.AckMatch
	}{
		{dissect.Message{Type: dissect.TypeAck, Seq: 0}, session.AckMatch{Acked: true, Channel: dissect.ChannelData}},
		// Flags 0x00 for the control message: data seq 0 is ACKed already.
		{dissect.Message{Type: dissect.TypeAck, Seq: 0}, session.AckMatch{Acked: true, Channel: dissect.ChannelControl}},
		{dissect.Message{Type: dissect.TypeAck, Seq: 0, AckFlags: dissect.AckControl}, session.AckMatch{Duplicate: true, Channel: dissect.ChannelControl}},
		{dissect.Message{Type: dissect.TypeAck, Seq: 1, AckFlags: dissect.AckFragment, AckFragIndex: 2}, session.AckMatch{Acked: true, Channel: dissect.ChannelData, Fragment: true}},
		{dissect.Message{Type: dissect.TypeAck, Seq: 7}, session.AckMatch{}},
	} {
		if got := d.Ack(&c.ack, t0.Add(50*time.Millisecond)); got != c.want {
			t.Errorf("ACK %d: %+v, want %+v", i, got, c.want)
		}
	}
	if n, _ := d.Unacked(dissect.ChannelData, t0.Add(time.Hour)); n != 0 {
		t.Errorf("%d data messages unACKed", n)
	}
	if sq := d.Sequence(dissect.ChannelData); !sq.Started || sq.First != 0 || sq.FirstFrame != 2 || sq.Reliable != 2 || sq.Acked != 2 {
		t.Errorf("data sequence %+v", sq)
	}
}
