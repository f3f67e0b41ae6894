package inorder

import (
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/server/transport"
)

func d(seq uint16) transport.Delivery {
	return transport.Delivery{Type: dissect.TypeData, Reliable: true, Seq: seq, Payload: []byte{byte(seq)}}
}

func seqs(ds []transport.Delivery) []uint16 {
	var out []uint16
	for _, x := range ds {
		out = append(out, x.Seq)
	}
	return out
}

func TestReorders(t *testing.T) {
	var b Buffer
	t0 := time.Unix(0, 0)
	if got := b.Push(t0, []transport.Delivery{d(1), d(2)}); len(got) != 0 {
		t.Fatalf("delivered %v before seq 0", seqs(got))
	}
	unrel := transport.Delivery{Type: dissect.TypeData, Payload: []byte{0x1C}}
	got := b.Push(t0, []transport.Delivery{unrel, d(0), d(0), d(3)})
	want := []uint16{0, 0, 1, 2, 3} // the unreliable one (seq 0) first, the duplicate 0 dropped
	if len(got) != 5 || got[0].Reliable || seqs(got)[1] != 0 || seqs(got)[4] != 3 {
		t.Fatalf("got %v, want %v", seqs(got), want)
	}
	if b.Held() != 0 {
		t.Fatalf("held %d", b.Held())
	}
}

func TestGivesUpOnGap(t *testing.T) {
	b := Buffer{MaxWait: time.Second}
	t0 := time.Unix(0, 0)
	b.Push(t0, []transport.Delivery{d(5), d(6)})
	if got := b.Flush(t0.Add(500*time.Millisecond), nil); len(got) != 0 {
		t.Fatalf("gave up too early: %v", seqs(got))
	}
	got := b.Flush(t0.Add(2*time.Second), nil)
	if s := seqs(got); len(s) != 2 || s[0] != 5 || s[1] != 6 {
		t.Fatalf("got %v", s)
	}
	// A late arrival for a skipped number is dropped; the next one passes.
	if got := b.Push(t0.Add(3*time.Second), []transport.Delivery{d(2), d(7)}); len(got) != 1 || got[0].Seq != 7 {
		t.Fatalf("got %v", seqs(got))
	}
}

func TestMaxHeldAndWrap(t *testing.T) {
	b := Buffer{MaxHeld: 3}
	t0 := time.Unix(0, 0)
	b.ch[dissect.ChannelData].next = 0xFFFE
	got := b.Push(t0, []transport.Delivery{d(0xFFFE), d(0xFFFF), d(0), d(1)})
	if len(got) != 4 {
		t.Fatalf("wrap: got %v", seqs(got))
	}
	// Numbers more than MaxHeld ahead are dropped, not held.
	if got = b.Push(t0, []transport.Delivery{d(10), d(4)}); len(got) != 0 || b.Held() != 1 {
		t.Fatalf("far ahead: got %v, held %d", seqs(got), b.Held())
	}
	// A gap only counts as stalled while nothing arrives for next.
	b.MaxWait = time.Second
	got = b.Push(t0.Add(900*time.Millisecond), []transport.Delivery{d(2)})
	if len(got) != 1 || len(b.Flush(t0.Add(1500*time.Millisecond), nil)) != 0 {
		t.Fatalf("progress did not reset the stall timer")
	}
	if got := b.Flush(t0.Add(2*time.Second), nil); len(got) != 1 || got[0].Seq != 4 {
		t.Fatalf("stall: got %v", seqs(got))
	}
}

// Messages held behind a gap are capped in bytes: past MaxHeldBytes the
// gap is given up on at once and what was held is handed on in order.
func TestMaxHeldBytesGivesUpOnGap(t *testing.T) {
	b := Buffer{MaxHeldBytes: 1000}
	t0 := time.Unix(0, 0)
	big := func(seq uint16) transport.Delivery {
		x := d(seq)
		x.Payload = make([]byte, 300)
		return x
	}
	if got := b.Push(t0, []transport.Delivery{big(2), big(3), big(4)}); len(got) != 0 || b.Held() != 3 {
		t.Fatalf("900 bytes held: got %v, held %d", seqs(got), b.Held())
	}
	got := b.Push(t0, []transport.Delivery{big(5)})
	if s := seqs(got); len(s) != 4 || s[0] != 2 || s[3] != 5 || b.Held() != 0 || b.heldBytes != 0 {
		t.Fatalf("1200 bytes: got %v, held %d (%d bytes)", s, b.Held(), b.heldBytes)
	}
	// Seq 0 and 1 were given up on; 6 passes at once.
	if got := b.Push(t0, []transport.Delivery{d(0), d(6)}); len(got) != 1 || got[0].Seq != 6 {
		t.Fatalf("after the skip: got %v", seqs(got))
	}
}
