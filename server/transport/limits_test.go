package transport

import (
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
)

// fragDatagram is one plaintext datagram holding fragment idx of the
// message seq (total is carried by fragment 0), with size payload bytes.
func fragDatagram(seq uint16, idx, total uint8, size int) []byte {
	m := dissect.Message{Type: dissect.TypeData, Reliable: true, Seq: seq, Fragment: true, FragIndex: idx,
		Payload: bytes.Repeat([]byte{0x20 + idx}, size)}
	if idx == 0 {
		m.FragTotal = total
	}
	d := dissect.Datagram{Peer: 0x02, Messages: []dissect.Message{m}}
	return d.Append(nil)
}

// floodSeqs are the sequence numbers of the report: out of order
// and far apart, so that nothing is ever recognised as a retransmission.
func floodSeqs(n int) []uint16 {
	out := make([]uint16, n)
	for i := range out {
		out[i] = uint16(i * 65000 % 65536 * 7 % 65536)
	}
	out[0], out[1], out[2] = 0, 65000, 30000
	return out
}

// flood sends c fragment sets that never complete: fragment 0 says 255,
// fragments 1 to n-1 follow, the rest never comes. The scenario
// is n 254, each fragment as large as the server's 2,048-byte read allows.
// interleaved sends fragment 0 of every set, then fragment 1 of every set,
// and so on (so that every set exists before it grows, which defeated the
// old cap); otherwise set after set.
func flood(t *testing.T, c *Conn, seqs []uint16, n, size int, interleaved bool) {
	t.Helper()
	add := func(seq uint16, idx int) {
		ds, err := c.Receive(fragDatagram(seq, uint8(idx), 255, size), 0)
		if err != nil || len(ds) != 0 {
			t.Fatalf("seq %d frag %d: delivered %d, err %v", seq, idx, len(ds), err)
		}
	}
	if interleaved {
		for idx := 0; idx < n; idx++ {
			for _, seq := range seqs {
				add(seq, idx)
			}
			c.Flush(0) // the ACKs go, as the server's would
		}
		return
	}
	for _, seq := range seqs {
		for idx := 0; idx < n; idx++ {
			add(seq, idx)
		}
		c.Flush(0)
	}
}

func heapInUse() uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapInuse
}

// The first server scenario, against one Conn: 64 never-completed
// sets of 254 large fragments would hold 33 MB; the caps hold the Conn
// under MaxFragBytes, by its own accounting and by the heap, and a
// legitimate fragmented message after the flood still arrives.
func TestFragmentFloodStaysUnderCaps(t *testing.T) {
	for _, interleaved := range []bool{true, false} {
		t.Run(fmt.Sprint("interleaved ", interleaved), func(t *testing.T) { fragmentFlood(t, interleaved) })
	}
}

func fragmentFlood(t *testing.T, interleaved bool) {
	before := heapInUse()
	c := NewConn(0x01, Options{})
	flood(t, c, floodSeqs(64), 254, 2030, interleaved)
	st := c.FragStats()
	if st.Bytes > DefaultMaxFragBytes || st.Sets > DefaultMaxFragSets {
		t.Fatalf("holding %d sets, %d bytes; caps %d, %d", st.Sets, st.Bytes, DefaultMaxFragSets, DefaultMaxFragBytes)
	}
	if st.Evicted < 64 {
		// A set of 254 such fragments is larger than the cap by itself.
		t.Errorf("evicted %d sets, want more than the 64 sent", st.Evicted)
	}
	sets, held := c.frags.Pending()
	if sets != st.Sets || held > st.Bytes {
		t.Errorf("reassembler holds %d sets, %d payload bytes; the Conn counts %d, %d", sets, held, st.Sets, st.Bytes)
	}
	// Go's heap: the cap plus slack for the Conn's fixed tables.
	if grew := int64(heapInUse()) - int64(before); grew > 2*DefaultMaxFragBytes {
		t.Errorf("heap grew %d bytes, cap %d", grew, DefaultMaxFragBytes)
	}
	runtime.KeepAlive(c)

	// A legitimate three-fragment message completes.
	var got []Delivery
	for i := uint8(0); i < 3; i++ {
		ds, err := c.Receive(fragDatagram(7, i, 3, 400), 0)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ds...)
	}
	if len(got) != 1 || len(got[0].Payload) != 1200 || got[0].Fragments != 3 {
		t.Fatalf("legitimate message after the flood: %+v", got)
	}
}

// A Budget shared by eight Conns (the eight clients, each sending
// sets that fit a Conn's own cap two at a time) caps their total: the
// Conns that come last make room by evicting their own oldest sets.
func TestFragmentBudgetSharedByConns(t *testing.T) {
	budget := &FragmentBudget{MaxBytes: 1 << 20}
	total, evicted := 0, 0
	for i := 0; i < 8; i++ {
		c := NewConn(0x01, Options{Budget: budget})
		flood(t, c, floodSeqs(64), 100, 1000, false)
		st := c.FragStats()
		total += st.Bytes
		evicted += st.Evicted
		if st.Bytes > DefaultMaxFragBytes {
			t.Errorf("one Conn holds %d bytes", st.Bytes)
		}
		if i == 7 && st.Bytes >= 100*1064 {
			t.Errorf("the last Conn holds a whole set (%d bytes) in a full budget", st.Bytes)
		}
	}
	if total != budget.Used() || total > budget.MaxBytes || total < budget.MaxBytes/2 {
		t.Fatalf("conns hold %d bytes, budget says %d, cap %d", total, budget.Used(), budget.MaxBytes)
	}
	if evicted < 8*62 {
		t.Errorf("%d sets evicted", evicted)
	}
}

// A fragment that finds no room in the Budget and nothing of its own Conn
// to evict is refused and not ACKed, so that a real peer sends it again;
// it is taken once another Conn gives its share back.
func TestFragmentRefusedWhenBudgetFull(t *testing.T) {
	budget := &FragmentBudget{MaxBytes: 10000}
	hog := NewConn(0x01, Options{Budget: budget})
	flood(t, hog, []uint16{1}, 9, 1000, false) // 9 × 1064 charged
	late := NewConn(0x01, Options{Budget: budget})
	if _, err := late.Receive(fragDatagram(1, 0, 2, 1500), 0); err != nil {
		t.Fatal(err)
	}
	if late.Pending() || late.FragStats().Refused != 1 || budget.Used() != 9*1064 {
		t.Fatalf("refused fragment: ACK pending %v, %+v, budget %d", late.Pending(), late.FragStats(), budget.Used())
	}
	hog.Close()
	if budget.Used() != 0 || hog.FragStats().Bytes != 0 {
		t.Fatalf("Close left %d bytes charged", budget.Used())
	}
	if _, err := late.Receive(fragDatagram(1, 0, 2, 1500), 0); err != nil || !late.Pending() {
		t.Fatalf("fragment not taken after room was made (err %v)", err)
	}
	if budget.Used() != 1500+fragOverhead {
		t.Fatalf("budget %d", budget.Used())
	}
}

// A peer that never ACKs is given up once too much waits for its ACKs,
// long before MaxRetries would.
func TestUnackedCap(t *testing.T) {
	c := NewConn(0x01, Options{MaxUnackedBytes: 64 << 10})
	msg := bytes.Repeat([]byte{0x2C}, 400)
	now := time.Duration(0)
	for i := 0; i < 1000; i++ {
		c.Queue(dissect.TypeData, msg, true, false)
		c.Flush(now)
		if c.Retransmit(now) {
			if got := c.Unacked() * len(msg); got < 64<<10 || got > 64<<10+len(msg) {
				t.Fatalf("gave up at %d unacked bytes", got)
			}
			return
		}
		now += 10 * time.Millisecond
	}
	t.Fatal("never gave up on a peer that ACKs nothing")
}

func TestAcksHeard(t *testing.T) {
	a, b := NewConn(0x01, Options{}), NewConn(0x02, Options{})
	a.Queue(dissect.TypeConnectAck, []byte{2}, true, true)
	for _, d := range a.Flush(0) {
		if _, err := b.Receive(d, 0); err != nil {
			t.Fatal(err)
		}
	}
	if a.AcksHeard() != 0 {
		t.Fatal("ACK counted before any")
	}
	for _, d := range b.Flush(0) {
		if _, err := a.Receive(d, 0); err != nil {
			t.Fatal(err)
		}
	}
	if a.AcksHeard() != 1 || a.Unacked() != 0 {
		t.Fatalf("acks heard %d, unacked %d", a.AcksHeard(), a.Unacked())
	}
}
