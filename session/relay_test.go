package session

import (
	"math/rand/v2"
	"testing"
	"time"
)

// mapRelay is the obvious form of relayTable, a map plus a queue, to check
// the chained queue against.
type mapRelay struct {
	byHash map[uint64]*relayEntry
	queue  []relayEntry
}

func (rt *mapRelay) put(h uint64, src *live, t stamp, opts *Options) {
	rt.expire(t, opts.RelayWindow)
	for len(rt.queue) >= opts.RelayMemory {
		rt.pop()
	}
	rt.byHash[h] = &relayEntry{src: src, t: t}
	rt.queue = append(rt.queue, relayEntry{h: h, t: t})
}

func (rt *mapRelay) match(h uint64, t stamp, window time.Duration) (*live, bool) {
	rt.expire(t, window)
	e := rt.byHash[h]
	if e == nil || t.sub(e.t) > window || t.before(e.t) {
		return nil, false
	}
	e.copies++
	return e.src, e.copies == 1
}

func (rt *mapRelay) expire(now stamp, window time.Duration) {
	for len(rt.queue) > 0 && now.sub(rt.queue[0].t) > window {
		rt.pop()
	}
}

func (rt *mapRelay) pop() {
	q := rt.queue[0]
	rt.queue = rt.queue[1:]
	if e := rt.byHash[q.h]; e != nil && e.t == q.t {
		delete(rt.byHash, q.h)
	}
}

// Random puts and matches over few hashes, with repeated times, times going
// back and a small memory: every match must come out as with the map.
func TestRelayTableMatchesMap(t *testing.T) {
	srcs := []*live{{}, {}, {}}
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 11))
		opts := &Options{RelayWindow: 2 * time.Second, RelayMemory: 1 + rng.IntN(300)}
		var rt relayTable
		ref := mapRelay{byHash: map[uint64]*relayEntry{}}
		now := stampOf(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		hashes := 1 + rng.IntN(500)
		for i := range 30000 {
			switch r := rng.IntN(100); {
			case r < 40: // same time
			case r < 42: // back
				now.sec -= int64(rng.IntN(3))
			case r < 44: // a long silence
				now.sec += int64(rng.IntN(5))
			default:
				now.nsec += int32(rng.IntN(60)) * 1e6
				if now.nsec >= 1e9 {
					now.sec, now.nsec = now.sec+1, now.nsec-1e9
				}
			}
			h := uint64(rng.IntN(hashes)) * 0x9E3779B97F4A7C15
			if rng.IntN(3) == 0 {
				src := srcs[rng.IntN(len(srcs))]
				rt.put(h, src, now, opts)
				ref.put(h, src, now, opts)
			} else {
				src, first := rt.match(h, now, opts.RelayWindow)
				wsrc, wfirst := ref.match(h, now, opts.RelayWindow)
				if src != wsrc || first != wfirst {
					t.Fatalf("seed %d step %d: match %p %v, want %p %v", seed, i, src, first, wsrc, wfirst)
				}
			}
			if len(rt.queue) != len(ref.queue) {
				t.Fatalf("seed %d step %d: %d queued, want %d", seed, i, len(rt.queue), len(ref.queue))
			}
		}
	}
}

// hash64 must tell apart messages that differ in one byte or in length,
// including the bytes its overlapping last word reads twice.
func TestHash64Distinct(t *testing.T) {
	seen := map[uint64][]byte{}
	add := func(b []byte) {
		h := hash64(b)
		if o, ok := seen[h]; ok && string(o) != string(b) {
			t.Fatalf("% X and % X both hash to %x", o, b, h)
		}
		seen[h] = append([]byte(nil), b...)
	}
	for n := range 40 {
		b := make([]byte, n)
		add(b)
		for i := range n {
			for _, v := range []byte{1, 0x80, 0xFF} {
				b[i] = v
				add(b)
				b[i] = 0
			}
		}
	}
}
