package flow

import (
	"sort"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
)

// Fragment reassembly. All fragments of one message share its sequence
// number; fragment 0 carries the total. A set completes when fragments 0 to
// total-1 are all held, in whatever order they arrived. Retransmitted
// fragments are recognised (same index already held, or the set already
// completed) and add nothing.

type fragKey struct {
	flow flowKey
	dir  game.Direction
	seq  uint16
}

type fragSet struct {
	key        flowKey
	dir        game.Direction
	seq        uint16
	total      int      // from fragment 0; 0 until it arrives
	parts      [][]byte // by fragment index; nil = not yet held
	have       int
	bytes      int
	firstFrame int
	firstTime  time.Time
}

type reassembler struct {
	maxSets, maxBytes int
	sets              map[fragKey]*fragSet
	order             []fragKey // creation order, for evicting the oldest
	bytes             int
	out               []byte // the last completed message, reused
}

type addResult struct {
	complete  []byte // the reassembled game message, valid until the next add
	count     int    // fragments it was built from
	duplicate bool
	evicted   int
}

func (r *reassembler) init(maxSets, maxBytes int) {
	r.maxSets, r.maxBytes = maxSets, maxBytes
	r.sets = map[fragKey]*fragSet{}
}

// addAt stores fragment m, seen in frame at ts, and returns the whole
// message when m completes its set.
func (r *reassembler) addAt(flow flowKey, dir game.Direction, m *dissect.Message, done *seqRing, frame int, ts time.Time) addResult {
	var res addResult
	k := fragKey{flow, dir, m.Seq}
	s := r.sets[k]
	if s == nil {
		if done.contains(m.Seq) {
			res.duplicate = true
			return res
		}
		res.evicted = r.makeRoom(len(m.Payload))
		s = &fragSet{key: flow, dir: dir, seq: m.Seq, firstFrame: frame, firstTime: ts}
		r.sets[k] = s
		r.order = append(r.order, k)
	}
	idx := int(m.FragIndex)
	if idx < len(s.parts) && s.parts[idx] != nil {
		res.duplicate = true
		return res
	}
	for len(s.parts) <= idx {
		s.parts = append(s.parts, nil)
	}
	s.parts[idx] = append(make([]byte, 0, len(m.Payload)), m.Payload...)
	if len(m.Payload) == 0 {
		s.parts[idx] = []byte{} // held, even if empty
	}
	s.have++
	s.bytes += len(m.Payload)
	r.bytes += len(m.Payload)
	if idx == 0 {
		s.total = int(m.FragTotal)
	}
	if s.total == 0 || s.have < s.total {
		return res
	}
	for i := 0; i < s.total; i++ {
		if i >= len(s.parts) || s.parts[i] == nil {
			return res
		}
	}
	r.out = r.out[:0]
	for i := 0; i < s.total; i++ {
		r.out = append(r.out, s.parts[i]...)
	}
	res.complete, res.count = r.out, s.total
	r.remove(k, s)
	done.add(m.Seq)
	return res
}

func (r *reassembler) remove(k fragKey, s *fragSet) {
	delete(r.sets, k)
	r.bytes -= s.bytes
	if len(r.order) > 2*len(r.sets)+64 {
		kept := r.order[:0]
		for _, o := range r.order {
			if r.sets[o] != nil {
				kept = append(kept, o)
			}
		}
		r.order = kept
	}
}

// makeRoom evicts the oldest sets until one more set of n bytes fits.
func (r *reassembler) makeRoom(n int) int {
	evicted := 0
	for len(r.order) > 0 && (len(r.sets) >= r.maxSets || r.bytes+n > r.maxBytes) {
		k := r.order[0]
		r.order = r.order[1:]
		if s := r.sets[k]; s != nil {
			r.remove(k, s)
			evicted++
		}
	}
	return evicted
}

// drain removes and returns every unfinished set, oldest first.
func (r *reassembler) drain() []*fragSet {
	out := make([]*fragSet, 0, len(r.sets))
	for _, s := range r.sets {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].firstFrame != out[j].firstFrame {
			return out[i].firstFrame < out[j].firstFrame
		}
		return out[i].seq < out[j].seq
	})
	r.sets = map[fragKey]*fragSet{}
	r.order = r.order[:0]
	r.bytes = 0
	return out
}

// seqRing remembers the last 64 completed sequence numbers.
type seqRing struct {
	seqs [64]uint16
	n    int
	next int
}

func (s *seqRing) contains(seq uint16) bool {
	for i := 0; i < s.n; i++ {
		if s.seqs[i] == seq {
			return true
		}
	}
	return false
}

func (s *seqRing) add(seq uint16) {
	s.seqs[s.next] = seq
	s.next = (s.next + 1) % len(s.seqs)
	if s.n < len(s.seqs) {
		s.n++
	}
}
