package session

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
)

// mapStream is the obvious form of stream's memory, a map plus the send
// order, to check the hash chains against.
type mapStream struct {
	st     ChannelStats
	recent map[sentKey]*sentMsg
	order  []sentKey
	win    seqWindow
	rtt    reservoir
}

func (s *mapStream) send(m *dissect.Message, t stamp) bool {
	if !m.Reliable {
		s.st.Unreliable++
		return false
	}
	k := sentKey{m.Seq, -1}
	if m.Fragment {
		k.frag = int16(m.FragIndex)
	}
	if e := s.recent[k]; e != nil {
		s.st.Retransmissions++
		if e.acked {
			s.st.Duplicates++
		}
		e.resent = true
		return true
	}
	seen := s.win.seen(m.Seq)
	if seen && !m.Fragment {
		s.st.Retransmissions++
		return true
	}
	s.st.Reliable++
	if m.Fragment {
		s.st.Fragments++
	}
	if !seen {
		s.win.arrive(m.Seq, &s.st, 0)
	}
	s.recent[k] = &sentMsg{first: t}
	s.order = append(s.order, k)
	if len(s.order) > recentCap {
		if !s.recent[s.order[0]].acked {
			s.st.Unacked++
		}
		delete(s.recent, s.order[0])
		s.order = s.order[1:]
	}
	return false
}

func (s *mapStream) ack(a *dissect.Message, t stamp) {
	k := sentKey{a.Seq, -1}
	if a.AckFlags&dissect.AckFragment != 0 {
		k.frag = int16(a.AckFragIndex)
	}
	e := s.recent[k]
	if (e == nil || e.acked) && k.frag >= 0 {
		// The flags may be wrong: the whole message, if not yet ACKed,
		// comes before a duplicate.
		if w := s.recent[sentKey{k.seq, -1}]; w != nil && !w.acked {
			e = w
		}
	}
	switch {
	case e == nil:
		s.st.UnmatchedAcks++
	case e.acked:
		s.st.DuplicateAcks++
	default:
		e.acked = true
		s.st.Acked++
		if !e.resent && !t.Before(e.first) {
			s.rtt.add(t.Sub(e.first))
		}
	}
}

// Random traffic, mostly in order with losses, retransmissions, fragments,
// late and duplicate ACKs and sequence wrap-around: the stream's figures
// must be the map's. Streams of every length, short ones too, pass their
// arrays on to the next through the spare.
func TestStreamMatchesMap(t *testing.T) {
	var sp spare // passed on from seed to seed
	lengths := []int{20000, 30, 200, 7, 20000, 90, 400, 1500}
	for seed := range uint64(24) {
		msgs := lengths[seed%uint64(len(lengths))]
		rng := rand.New(rand.NewPCG(seed, 7))
		var st ChannelStats
		var streams [2]stream // control unused: the map has one channel
		s := &streams[dissect.ChannelData]
		*s = stream{out: &st, rtt: reservoir{cap: 16}, spare: &sp}
		ref := mapStream{recent: map[sentKey]*sentMsg{}, rtt: reservoir{cap: 16}}
		now := stampOf(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		seq := uint16(65000 - rng.IntN(2000))
		var sent []dissect.Message
		for i := range msgs {
			now.Nsec += int32(rng.IntN(3)) * 1e6
			if now.Nsec >= 1e9 {
				now.Sec, now.Nsec = now.Sec+1, now.Nsec-1e9
			}
			var m dissect.Message
			switch r := rng.IntN(100); {
			case r < 45 || len(sent) == 0: // a new message, maybe fragmented
				m = dissect.Message{Type: dissect.TypeData, Reliable: rng.IntN(10) > 0, Seq: seq}
				if rng.IntN(20) == 0 {
					m.Fragment, m.FragIndex = true, uint8(rng.IntN(6))
				}
				seq += uint16(1 + rng.IntN(2)*rng.IntN(3))
				sent = append(sent, m)
			case r < 55: // a retransmission, recent or long ago
				m = sent[len(sent)-1-min(len(sent)-1, rng.IntN(1+rng.IntN(2000)))]
			default: // an ACK of something sent, or of nothing
				o := sent[len(sent)-1-min(len(sent)-1, rng.IntN(1+rng.IntN(1500)))]
				m = dissect.Message{Type: dissect.TypeAck, Seq: o.Seq + uint16(rng.IntN(40)/39)}
				if o.Fragment {
					m.AckFlags, m.AckFragIndex = dissect.AckFragment, o.FragIndex
				}
			}
			if m.Type == dissect.TypeAck {
				ackStreams(&streams, &m, now)
				ref.ack(&m, now)
			} else if got, want := s.send(&m, now, i+1), ref.send(&m, now); got != want {
				t.Fatalf("seed %d message %d: retransmission %v, want %v", seed, i, got, want)
			}
			if len(s.recent) != len(ref.order) || len(s.rtt.vals) != len(ref.rtt.vals) {
				t.Fatalf("seed %d message %d: %d remembered, want %d", seed, i, len(s.recent), len(ref.order))
			}
		}
		s.finish()
		for _, e := range ref.recent {
			if !e.acked {
				ref.st.Unacked++
			}
		}
		ref.st.RTT = ref.rtt.summary()
		if st != ref.st {
			t.Fatalf("seed %d:\n got %+v\nwant %+v", seed, st, ref.st)
		}
	}
}

// The summary's median and 95th percentile must be those of the sorted
// sample, for any size and with many equal values.
func TestReservoirSummaryMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := range 600 {
		spread := 1 + rng.IntN(1+n)
		r := reservoir{cap: 256}
		for range n {
			r.add(time.Duration(rng.IntN(spread)) * time.Millisecond)
		}
		want := slices.Clone(r.vals)
		slices.Sort(want)
		got := r.summary()
		if n == 0 {
			if got != (RTT{}) {
				t.Fatalf("empty: %+v", got)
			}
			continue
		}
		q := func(p float64) time.Duration {
			i := int(math.Ceil(p*float64(len(want)))) - 1
			return want[max(0, min(i, len(want)-1))]
		}
		if got.Median != q(0.5) || got.P95 != q(0.95) || got.Min > want[0] || got.Max < want[len(want)-1] {
			t.Fatalf("n %d: %+v, want median %v p95 %v", n, got, q(0.5), q(0.95))
		}
	}
	// Sorted and reversed input, the classic bad cases for a pivot.
	for _, rev := range []bool{false, true} {
		r := reservoir{cap: 1000}
		for i := range 1000 {
			d := time.Duration(i)
			if rev {
				d = time.Duration(1000 - i)
			}
			r.add(d)
		}
		want := slices.Clone(r.vals)
		slices.Sort(want)
		if got := r.summary(); got.Median != want[499] || got.P95 != want[949] {
			t.Fatalf("reversed %v: %+v", rev, got)
		}
	}
}

// The spare keeps arrays of every size past the first, a larger one in
// place of the smallest when full, and hands out the smallest that holds
// what is asked.
func TestSpareArraySizes(t *testing.T) {
	var sp spare
	give := func(n int) { sp.keep(&stream{buf: make([]sentMsg, n)}) }
	give(16) // the first size: not kept
	for _, n := range []int{64, 32, 1024, 128} {
		give(n)
	}
	if len(sp.bufs) != 4 {
		t.Fatalf("kept %d arrays, want 4", len(sp.bufs))
	}
	for _, c := range []struct{ ask, want int }{{100, 128}, {33, 64}, {2000, 0}, {16, 32}, {16, 1024}, {16, 0}} {
		if got := cap(sp.takeBuf(c.ask)); got != c.want {
			t.Fatalf("takeBuf(%d) has room for %d, want %d", c.ask, got, c.want)
		}
	}
	for range maxSpare {
		give(32)
	}
	give(64) // full: takes the place of a 32
	if len(sp.bufs) != maxSpare || cap(sp.takeBuf(33)) != 64 {
		t.Fatalf("a full spare did not keep the larger array in place of a smaller one")
	}
}
