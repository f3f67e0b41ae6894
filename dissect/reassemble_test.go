package dissect

import (
	"testing"
	"time"
)

func frag(seq uint16, idx, total uint8, payload string) *Message {
	return &Message{Type: TypeData, Reliable: true, Fragment: true, Seq: seq, FragIndex: idx, FragTotal: total, Payload: []byte(payload)}
}

func TestReassemblyOrderDuplicatesAndLateRetransmits(t *testing.T) {
	r := NewReassembler[uint16](0, 0)
	// Arrival order 2, 0, 2 (retransmitted), 1.
	steps := []struct {
		m        *Message
		complete string
		dup      bool
	}{
		{frag(7, 2, 0, "EF"), "", false},
		{frag(7, 0, 3, "AB"), "", false},
		{frag(7, 2, 0, "EF"), "", true},
		{frag(7, 1, 0, "CD"), "ABCDEF", false},
		{frag(7, 1, 0, "CD"), "", true}, // after completion: a late retransmission
	}
	for i, s := range steps {
		res := r.Add(s.m.Seq, s.m, i+1, time.Time{})
		if string(res.Complete) != s.complete || res.Duplicate != s.dup {
			t.Fatalf("step %d: complete %q dup %v, want %q %v", i, res.Complete, res.Duplicate, s.complete, s.dup)
		}
		if s.complete != "" && res.Count != 3 {
			t.Fatalf("count %d", res.Count)
		}
	}
	if n, b := r.Pending(); n != 0 || b != 0 {
		t.Fatalf("pending %d sets %d bytes after completion", n, b)
	}
}

func TestReassemblyCapsEvictOldestAndDrainReports(t *testing.T) {
	r := NewReassembler[uint16](2, 1<<20)
	r.Add(1, frag(1, 1, 0, "x"), 10, time.Time{})
	r.Add(2, frag(2, 1, 0, "y"), 11, time.Time{})
	res := r.Add(3, frag(3, 1, 0, "z"), 12, time.Time{})
	if res.Evicted != 1 {
		t.Fatalf("evicted %d, want 1", res.Evicted)
	}
	left := r.Drain()
	if len(left) != 2 || left[0].Key != 2 || left[1].Key != 3 || left[0].FirstFrame != 11 {
		t.Fatalf("drain: %+v", left)
	}
	// Byte cap.
	r = NewReassembler[uint16](100, 10)
	r.Add(1, frag(1, 1, 0, "123456"), 1, time.Time{})
	if res := r.Add(2, frag(2, 1, 0, "123456"), 2, time.Time{}); res.Evicted != 1 {
		t.Fatalf("byte cap did not evict: %+v", res)
	}
	if _, b := r.Pending(); b != 6 {
		t.Fatalf("bytes %d", b)
	}
}

func TestReassemblyFloodStaysUnderCap(t *testing.T) {
	r := NewReassembler[uint32](64, 4096)
	evicted := 0
	for i := 0; i < 100000; i++ {
		res := r.Add(uint32(i), frag(uint16(i), 1, 0, "0123456789"), i, time.Time{})
		evicted += res.Evicted
		if n, b := r.Pending(); n > 64 || b > 4096 {
			t.Fatalf("at %d: %d sets, %d bytes", i, n, b)
		}
	}
	if evicted < 99000 {
		t.Fatalf("evicted only %d", evicted)
	}
	if len(r.order) > 2*64+64+1 {
		t.Fatalf("order queue grew to %d", len(r.order))
	}
}

// The byte cap holds for fragments added to sets that already exist, not
// only for new sets (issue 23 point 1: sets that each grew past a MiB, one
// fragment at a time, were never evicted).
func TestReassemblyByteCapCountsEveryFragment(t *testing.T) {
	const maxBytes = 100
	r := NewReassembler[uint16](100, maxBytes)
	big := string(make([]byte, 30))
	evicted := 0
	// Three sets, each fragment 0 of 255 with one byte, then growing in
	// turn by 30 bytes a fragment.
	for seq := uint16(1); seq <= 3; seq++ {
		evicted += r.Add(seq, frag(seq, 0, 255, "x"), int(seq), time.Time{}).Evicted
	}
	frame := 3
	for idx := uint8(1); idx <= 5; idx++ {
		for seq := uint16(1); seq <= 3; seq++ {
			frame++
			res := r.Add(seq, frag(seq, idx, 0, big), frame, time.Time{})
			evicted += res.Evicted
			if _, b := r.Pending(); b > maxBytes {
				t.Fatalf("fragment %d of set %d: %d bytes pending, cap %d", idx, seq, b, maxBytes)
			}
		}
	}
	if evicted == 0 {
		t.Fatal("nothing evicted")
	}
	// Oldest first: the set created last survives the longest.
	left := r.Drain()
	if len(left) == 0 {
		t.Fatal("no set left")
	}
	if left[len(left)-1].Key != 3 {
		t.Fatalf("%d sets left, the newest %+v", len(left), *left[len(left)-1])
	}

	// A set alone over the cap is evicted with the fragment that would
	// take it over; a set beside it that fits is kept.
	r = NewReassembler[uint16](100, maxBytes)
	r.Add(1, frag(1, 0, 9, big), 1, time.Time{})
	r.Add(1, frag(1, 1, 0, big), 2, time.Time{})
	r.Add(2, frag(2, 0, 2, "y"), 3, time.Time{})
	res := r.Add(1, frag(1, 2, 0, big+big), 4, time.Time{})
	if res.Evicted != 1 || res.Complete != nil {
		t.Fatalf("over the cap: %+v", res)
	}
	if n, b := r.Pending(); n != 1 || b != 1 {
		t.Fatalf("pending %d sets, %d bytes; want set 2 alone", n, b)
	}
	if res := r.Add(2, frag(2, 1, 0, "z"), 5, time.Time{}); string(res.Complete) != "yz" {
		t.Fatalf("set 2: %+v", res)
	}
}
