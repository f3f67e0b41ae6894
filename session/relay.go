package session

import "time"

// relayTable remembers the recent game messages clients sent to one server,
// by hash, so that a server-to-client message with the same bytes can be
// recognised as the server relaying it. It holds at most RelayMemory
// entries and forgets them after RelayWindow.
type relayTable struct {
	byHash map[uint64]relayEntry
	queue  []relayQueued // insertion order, oldest first, from head
	head   int
}

type relayEntry struct {
	src    *live
	t      stamp
	copies int
}

type relayQueued struct {
	h uint64
	t stamp
}

func (rt *relayTable) put(h uint64, src *live, t stamp, opts *Options) {
	rt.expire(t, opts.RelayWindow)
	if rt.byHash == nil {
		rt.byHash = map[uint64]relayEntry{}
	}
	for len(rt.queue)-rt.head >= opts.RelayMemory {
		rt.pop()
	}
	rt.byHash[h] = relayEntry{src: src, t: t}
	rt.queue = append(rt.queue, relayQueued{h, t})
}

// match finds the client message with hash h sent within window before t,
// counts one more copy of it, and reports whether this is its first copy.
func (rt *relayTable) match(h uint64, t stamp, window time.Duration) (src *live, first bool) {
	rt.expire(t, window)
	e, ok := rt.byHash[h]
	if !ok || t.sub(e.t) > window || t.before(e.t) {
		return nil, false
	}
	e.copies++
	rt.byHash[h] = e
	return e.src, e.copies == 1
}

func (rt *relayTable) expire(now stamp, window time.Duration) {
	for rt.head < len(rt.queue) && now.sub(rt.queue[rt.head].t) > window {
		rt.pop()
	}
}

func (rt *relayTable) pop() {
	q := rt.queue[rt.head]
	rt.queue[rt.head] = relayQueued{}
	rt.head++
	if e, ok := rt.byHash[q.h]; ok && e.t == q.t {
		delete(rt.byHash, q.h)
	}
	if rt.head == len(rt.queue) {
		rt.queue, rt.head = rt.queue[:0], 0
	} else if rt.head > 1024 && rt.head > len(rt.queue)/2 {
		n := copy(rt.queue, rt.queue[rt.head:])
		rt.queue, rt.head = rt.queue[:n], 0
	}
}

// hash64 is FNV-1a, 64-bit.
func hash64(b []byte) uint64 {
	h := uint64(14695981039346656037)
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return h
}
