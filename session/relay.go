package session

import "time"

// relayTable remembers the recent game messages clients sent to one server,
// by hash, so that a server-to-client message with the same bytes can be
// recognised as the server relaying it. It holds at most RelayMemory
// entries and forgets them after RelayWindow.
//
// It works as a map from hash to the latest message put with it, emptied
// as the messages leave a queue in put order, but with the map made of the
// queue itself: the message with put number n is queue[n-base], and
// buckets chain the messages by hash, newest first, through next; a number
// below base ends a chain, since everything older has left too. (A Go map
// cost two map operations per message and a third per expiry.)
type relayTable struct {
	queue   []relayEntry
	buf     []relayEntry // the array queue lies in
	base    int
	buckets []int // per chain, the newest entry's put number + 1
}

type relayEntry struct {
	h      uint64
	src    *live
	t      stamp
	copies int
	// dropped marks the latest message with its hash as no longer
	// matching: an older one with the same hash and time left the queue
	// (the map entry they shared was deleted then).
	dropped bool
	next    int // the previous entry in the same chain, as its put number + 1
}

const relayBuckets = 1024 // a power of two

// latest returns the newest message in the queue with hash h, or nil.
func (rt *relayTable) latest(h uint64) *relayEntry {
	if rt.buckets == nil {
		return nil
	}
	for n := rt.buckets[h&(relayBuckets-1)]; n > rt.base; {
		e := &rt.queue[n-1-rt.base]
		if e.h == h {
			return e
		}
		n = e.next
	}
	return nil
}

func (rt *relayTable) put(h uint64, src *live, t stamp, opts *Options) {
	rt.expire(t, opts.RelayWindow)
	if rt.buckets == nil {
		rt.buckets = make([]int, relayBuckets)
	}
	for len(rt.queue) >= opts.RelayMemory {
		rt.pop()
	}
	if len(rt.queue) == cap(rt.queue) {
		rt.grow()
	}
	b := h & (relayBuckets - 1)
	n := rt.base + len(rt.queue)
	rt.queue = append(rt.queue, relayEntry{h: h, src: src, t: t, next: rt.buckets[b]})
	rt.buckets[b] = n + 1
}

// grow makes room at the end of queue, in the same way as stream.grow.
func (rt *relayTable) grow() {
	if 2*len(rt.queue) > cap(rt.buf) {
		rt.buf = make([]relayEntry, max(16, 2*cap(rt.buf)))
	}
	n := copy(rt.buf, rt.queue)
	clear(rt.buf[n:])
	rt.queue = rt.buf[:n]
}

// match finds the client message with hash h sent within window before t,
// counts one more copy of it, and reports whether this is its first copy.
func (rt *relayTable) match(h uint64, t stamp, window time.Duration) (src *live, first bool) {
	rt.expire(t, window)
	e := rt.latest(h)
	if e == nil || e.dropped || t.sub(e.t) > window || t.before(e.t) {
		return nil, false
	}
	e.copies++
	return e.src, e.copies == 1
}

func (rt *relayTable) expire(now stamp, window time.Duration) {
	for len(rt.queue) > 0 && now.sub(rt.queue[0].t) > window {
		rt.pop()
	}
}

// pop drops the oldest message.
func (rt *relayTable) pop() {
	q := &rt.queue[0]
	if e := rt.latest(q.h); e != nil && e.t == q.t {
		e.dropped = true
	}
	*q = relayEntry{}
	rt.queue = rt.queue[1:]
	rt.base++
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
