package transport

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
)

func TestStockAckBytes(t *testing.T) {
	// The server's ACKs as seen in stock traffic: 01 00 00 02 (control),
	// 01 03 00 00 (data), 01 02 00 01 01 (fragment 1 of data seq 2).
	c := NewConn(0x01, Options{})
	c.Ack(&dissect.Message{Type: dissect.TypeConnectAck, Reliable: true, Seq: 0})
	c.Ack(&dissect.Message{Type: dissect.TypeData, Reliable: true, Seq: 3})
	c.Ack(&dissect.Message{Type: dissect.TypeData, Reliable: true, Seq: 2, Fragment: true, FragIndex: 1})
	got := c.Flush(0)
	want := "0103" + "01000002" + "01030000" + "0102000101"
	if len(got) != 1 || hex.EncodeToString(got[0]) != want {
		t.Fatalf("got %x, want %s", got, want)
	}
}

// The stock connect reply: connect-ack (control seq 0, slot 2) and checksum
// round 0 (data seq 0) in one datagram, the connect's ACK held back.
func TestStockConnectReplyShape(t *testing.T) {
	c := NewConn(0x01, Options{})
	c.Ack(&dissect.Message{Type: dissect.TypeConnectAck, Reliable: true, Seq: 0})
	c.Queue(dissect.TypeConnectAck, []byte{0x02}, true, true)
	round0, _ := hex.DecodeString("20000800736372697074732F07004170702E70796320")
	c.Queue(dissect.TypeData, round0, true, false)
	got := c.FlushMessages(0)
	want := "01020306C0000002321B80000020000800736372697074732F07004170702E70796320"
	if len(got) != 1 || fmt.Sprintf("%X", got[0]) != want {
		t.Fatalf("got %X\nwant %s", got, want)
	}
	if !c.Pending() {
		t.Fatal("the held ACK was lost")
	}
}

func TestFragmentationAndBundling(t *testing.T) {
	c := NewConn(0x02, Options{})
	big := bytes.Repeat([]byte{0x21}, 1000)
	seq := c.Queue(dissect.TypeData, big, false, false)
	for i := 0; i < 30; i++ {
		c.Queue(dissect.TypeData, []byte{0x1C, byte(i), 0, 0, 0, 0, 0, 0, 0, 0, 0}, false, false)
	}
	dgs := c.Flush(0)
	var frags []dissect.Message
	total := 0
	for _, b := range dgs {
		if len(b) > 512 {
			t.Fatalf("datagram of %d bytes", len(b))
		}
		var d dissect.Datagram
		if err := d.Parse(b); err != nil {
			t.Fatal(err)
		}
		for _, m := range d.Messages {
			total++
			if m.Fragment {
				frags = append(frags, m)
			}
		}
	}
	if len(frags) != 3 || frags[0].FragTotal != 3 || frags[0].Seq != seq || !frags[0].Reliable || frags[2].FragIndex != 2 {
		t.Fatalf("fragments: %+v", frags)
	}
	if total != 33 {
		t.Fatalf("%d messages, want 33", total)
	}
}

// Two ends exchange reliable messages over a link that drops 20% of
// datagrams; every message arrives exactly once, in spite of retransmissions.
func TestReliableDeliveryUnderLoss(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	a, b := NewConn(0x02, Options{}), NewConn(0x01, Options{})
	const n = 200
	got := map[string]int{}
	for i := 0; i < n; i++ {
		p := []byte(fmt.Sprintf("\x2Cmessage %03d", i))
		if i%50 == 0 {
			p = append(p, bytes.Repeat([]byte{byte(i)}, 900)...) // fragmented
		}
		a.Queue(dissect.TypeData, p, true, true)
	}
	now := time.Duration(0)
	for step := 0; step < 2000 && (len(got) < n || a.Unacked() > 0); step++ {
		now += 100 * time.Millisecond
		if a.Retransmit(now) {
			t.Fatal("sender gave up")
		}
		for _, d := range a.Flush(now) {
			if rng.Float64() < 0.2 {
				continue
			}
			ds, err := b.Receive(d, now)
			if err != nil {
				t.Fatal(err)
			}
			for _, m := range ds {
				got[string(m.Payload[:12])]++
			}
		}
		for _, d := range b.Flush(now) {
			if rng.Float64() < 0.2 {
				continue
			}
			if _, err := a.Receive(d, now); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(got) != n {
		t.Fatalf("delivered %d distinct messages, want %d", len(got), n)
	}
	for k, v := range got {
		if v != 1 {
			t.Fatalf("%q delivered %d times", k, v)
		}
	}
	if a.Unacked() != 0 || a.Retransmits == 0 {
		t.Fatalf("unacked %d, retransmits %d", a.Unacked(), a.Retransmits)
	}
}

func TestGiveUpAfterMaxRetries(t *testing.T) {
	a := NewConn(0x01, Options{MaxRetries: 3, RetransmitAfter: time.Second})
	a.Queue(dissect.TypePeerInfo, nil, true, true)
	a.Flush(0)
	now := time.Duration(0)
	for i := 0; i < 100; i++ {
		now += time.Second
		if a.Retransmit(now) {
			if a.Retransmits != 3 {
				t.Fatalf("gave up after %d retransmits", a.Retransmits)
			}
			return
		}
		a.Flush(now)
	}
	t.Fatal("never gave up")
}
