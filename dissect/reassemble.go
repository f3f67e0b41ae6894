package dissect

import (
	"slices"
	"sort"
	"time"
)

// Fragment reassembly. All fragments of one message share its sequence
// number; fragment 0 carries the total. A set completes when fragments 0 to
// total-1 are all held, in whatever order they arrived. A retransmitted
// fragment (its index already held, or its set recently completed) is
// recognised and adds nothing. Unfinished sets are capped in number and
// bytes, checked for every fragment added (a set that grows fragment by
// fragment counts as much as many small ones); the oldest is evicted first.

// Reassembler collects fragments into whole messages. K identifies the
// message a fragment belongs to: at least its sequence number, plus whatever
// separates sequence spaces for the caller (flow, direction).
type Reassembler[K comparable] struct {
	maxSets, maxBytes int
	sets              map[K]*FragmentSet[K]
	order             []K // creation order, for evicting the oldest
	bytes             int
	done              map[K]struct{} // recently completed keys
	doneRing          []K
	doneNext          int
	out               []byte // the last completed message, reused
	// free holds the buffers of removed sets' fragments, reused for new
	// fragments, up to freeCap bytes of capacity (freeBytes): under a
	// flood of evicted sets the fragments then cost no garbage, which
	// would otherwise let the heap grow to a multiple of the cap between
	// collections.
	free      [][]byte
	freeBytes int
	spare     []*FragmentSet[K] // removed sets, their parts slices kept, for new sets
}

// maxSpareSets bounds Reassembler.spare.
const maxSpareSets = 64

// freeCap is the capacity a Reassembler keeps for reuse: a quarter of its
// byte cap.
func (r *Reassembler[K]) freeCap() int { return r.maxBytes / 4 }

// alloc returns an empty buffer of capacity at least n, a reused one when
// one of the last few freed fits without wasting more than half of it.
func (r *Reassembler[K]) alloc(n int) []byte {
	for i := len(r.free) - 1; i >= 0 && i >= len(r.free)-8; i-- {
		if b := r.free[i]; cap(b) >= n && cap(b) <= 2*n+64 {
			last := len(r.free) - 1
			r.free[i], r.free[last] = r.free[last], nil
			r.free = r.free[:last]
			r.freeBytes -= cap(b)
			return b[:0]
		}
	}
	return make([]byte, 0, n+1)
}

// recycle keeps s, a set being removed, and its fragment buffers for
// reuse.
func (r *Reassembler[K]) recycle(s *FragmentSet[K]) {
	for i, p := range s.parts {
		if p != nil && r.freeBytes+cap(p) <= r.freeCap() {
			r.free = append(r.free, p)
			r.freeBytes += cap(p)
		}
		s.parts[i] = nil
	}
	if len(r.spare) < maxSpareSets {
		*s = FragmentSet[K]{parts: s.parts[:0]}
		r.spare = append(r.spare, s)
	}
}

// newSet returns a new set, a recycled one when there is one.
func (r *Reassembler[K]) newSet(key K, frame int, ts time.Time) *FragmentSet[K] {
	if n := len(r.spare); n > 0 {
		s := r.spare[n-1]
		r.spare[n-1] = nil
		r.spare = r.spare[:n-1]
		s.Key, s.FirstFrame, s.FirstTime = key, frame, ts
		return s
	}
	return &FragmentSet[K]{Key: key, FirstFrame: frame, FirstTime: ts}
}

// FragmentSet is one unfinished message.
type FragmentSet[K comparable] struct {
	Key        K
	Total      int // from fragment 0; 0 until it arrives
	Have       int // fragments held
	Bytes      int // payload bytes held
	FirstFrame int
	FirstTime  time.Time
	parts      [][]byte // by fragment index; nil = not held
}

// FragmentResult is what adding one fragment did.
type FragmentResult struct {
	Complete  []byte // the reassembled game message; valid until the next Add
	Count     int    // fragments it was built from
	Duplicate bool   // the fragment was already held, or its message already completed
	// Evicted counts the unfinished sets dropped to make room, oldest
	// first. When that reached the fragment's own set (the oldest, and
	// alone over the byte cap), the fragment was dropped with it.
	Evicted int
}

// remembered completed keys, to recognise late retransmissions.
const doneMemory = 256

// NewReassembler returns a Reassembler holding at most maxSets unfinished
// messages and maxBytes of fragment payload (defaults 1024 and 4 MiB).
func NewReassembler[K comparable](maxSets, maxBytes int) *Reassembler[K] {
	if maxSets <= 0 {
		maxSets = 1024
	}
	if maxBytes <= 0 {
		maxBytes = 4 << 20
	}
	return &Reassembler[K]{maxSets: maxSets, maxBytes: maxBytes,
		sets: map[K]*FragmentSet[K]{}, done: map[K]struct{}{}}
}

// Add stores fragment m (seen in frame at ts) under key and returns the
// whole message when m completes it.
func (r *Reassembler[K]) Add(key K, m *Message, frame int, ts time.Time) FragmentResult {
	var res FragmentResult
	idx := int(m.FragIndex)
	s := r.sets[key]
	if s == nil {
		if _, ok := r.done[key]; ok {
			res.Duplicate = true
			return res
		}
		res.Evicted = r.makeRoom(len(m.Payload), 1)
		s = r.newSet(key, frame, ts)
		r.sets[key] = s
		r.order = append(r.order, key)
	} else {
		if idx < len(s.parts) && s.parts[idx] != nil {
			res.Duplicate = true
			return res
		}
		if r.bytes+len(m.Payload) > r.maxBytes {
			res.Evicted = r.makeRoom(len(m.Payload), 0)
			if r.sets[key] != s {
				return res // its own set was evicted: the message cannot complete
			}
		}
	}
	if len(s.parts) <= idx {
		s.parts = slices.Grow(s.parts, idx+1-len(s.parts))[:idx+1]
	}
	s.parts[idx] = append(r.alloc(len(m.Payload)), m.Payload...)
	s.Have++
	s.Bytes += len(m.Payload)
	r.bytes += len(m.Payload)
	if idx == 0 {
		s.Total = int(m.FragTotal)
	}
	if s.Total == 0 || s.Have < s.Total {
		return res
	}
	for i := 0; i < s.Total; i++ {
		if s.parts[i] == nil {
			return res
		}
	}
	r.out = r.out[:0]
	for i := 0; i < s.Total; i++ {
		r.out = append(r.out, s.parts[i]...)
	}
	res.Complete, res.Count = r.out, s.Total
	r.remove(key, s)
	r.recycle(s)
	r.remember(key)
	return res
}

func (r *Reassembler[K]) remember(key K) {
	if len(r.doneRing) < doneMemory {
		r.doneRing = append(r.doneRing, key)
	} else {
		delete(r.done, r.doneRing[r.doneNext])
		r.doneRing[r.doneNext] = key
		r.doneNext = (r.doneNext + 1) % doneMemory
	}
	r.done[key] = struct{}{}
}

// Forget drops the memory that key completed, for sequence spaces that wrap
// or restart (a new connection reusing the numbers).
func (r *Reassembler[K]) Forget(key K) { delete(r.done, key) }

func (r *Reassembler[K]) remove(key K, s *FragmentSet[K]) {
	delete(r.sets, key)
	r.bytes -= s.Bytes
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

// makeRoom evicts the oldest sets until n more bytes fit, in newSets more
// sets (0 or 1).
func (r *Reassembler[K]) makeRoom(n, newSets int) int {
	evicted := 0
	for len(r.order) > 0 && (len(r.sets)+newSets > r.maxSets || r.bytes+n > r.maxBytes) {
		k := r.order[0]
		r.order = r.order[1:]
		if s := r.sets[k]; s != nil {
			r.remove(k, s)
			r.recycle(s)
			evicted++
		}
	}
	return evicted
}

// Pending is the number of unfinished sets and their bytes.
func (r *Reassembler[K]) Pending() (sets, bytes int) { return len(r.sets), r.bytes }

// Drain removes and returns every unfinished set, oldest first.
func (r *Reassembler[K]) Drain() []*FragmentSet[K] {
	out := make([]*FragmentSet[K], 0, len(r.sets))
	for _, s := range r.sets {
		out = append(out, s)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].FirstFrame < out[j].FirstFrame })
	r.sets = map[K]*FragmentSet[K]{}
	r.order = r.order[:0]
	r.bytes = 0
	return out
}

// Evict drops the unfinished set of key, if any, and reports whether there
// was one: for callers that budget fragment memory across reassemblers.
func (r *Reassembler[K]) Evict(key K) bool {
	s := r.sets[key]
	if s == nil {
		return false
	}
	r.remove(key, s)
	return true
}
