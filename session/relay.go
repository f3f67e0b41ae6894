package session

import (
	"encoding/binary"
	"math/bits"
	"time"
)

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

	// The oldest message cannot expire up to keepUntil, when keepOK and
	// the window is keepWindow: most expiry checks are one comparison.
	keepUntil  stamp
	keepWindow time.Duration
	keepOK     bool
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
	if len(rt.queue) == 0 {
		rt.keepOK = false // a new oldest message
	}
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
	if e == nil || e.dropped || t.before(e.t) {
		return nil, false
	}
	if until, ok := e.t.add(window); ok && t.after(until) || !ok && t.sub(e.t) > window {
		return nil, false
	}
	e.copies++
	return e.src, e.copies == 1
}

func (rt *relayTable) expire(now stamp, window time.Duration) {
	for len(rt.queue) > 0 {
		if rt.keepOK && window == rt.keepWindow && !now.after(rt.keepUntil) {
			return
		}
		t := rt.queue[0].t
		if now.sub(t) > window {
			rt.pop()
			continue
		}
		rt.keepUntil, rt.keepOK = t.add(window)
		rt.keepWindow = window
		return
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
	rt.keepOK = false
}

// hash64 hashes a message eight bytes at a time (byte-wise FNV-1a cost
// three times the instructions): each word is mixed in by a multiplication
// and a rotation, the last one overlapping the one before when the length
// is not a multiple of eight, and a final avalanche makes the low bits,
// which pick the chain, depend on every byte.
func hash64(b []byte) uint64 {
	const m = 0x9E3779B97F4A7C15
	n := len(b)
	h := uint64(14695981039346656037) ^ uint64(n)*m
	i := 0
	for ; i+16 <= n; i += 16 {
		h = bits.RotateLeft64((h^binary.LittleEndian.Uint64(b[i:]))*m, 29)
		h = bits.RotateLeft64((h^binary.LittleEndian.Uint64(b[i+8:]))*m, 29)
	}
	if i+8 <= n {
		h = bits.RotateLeft64((h^binary.LittleEndian.Uint64(b[i:]))*m, 29)
		i += 8
	}
	if i < n {
		var w uint64
		switch {
		case n >= 8:
			w = binary.LittleEndian.Uint64(b[n-8:])
		case n >= 4:
			w = uint64(binary.LittleEndian.Uint32(b)) | uint64(binary.LittleEndian.Uint32(b[n-4:]))<<32
		default:
			w = uint64(b[0]) | uint64(b[n/2])<<8 | uint64(b[n-1])<<16
		}
		h = bits.RotateLeft64((h^w)*m, 29)
	}
	h ^= h >> 32
	h *= m
	return h ^ h>>29
}

// MessageHash is the hash relays are matched by, for other packages that
// match them (diff), so that a relay is recognised by one hash everywhere.
func MessageHash(b []byte) uint64 { return hash64(b) }
