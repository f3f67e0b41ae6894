package session

import (
	"time"

	"github.com/bcwire/bcwire/dissect/flow"
)

// Relays is the one relay rule of bcwire: which client message a server's
// game message to a client is a copy of. Stock relays a client's game
// message unchanged to every other client (PROTOCOL.md: "The server relays
// game messages from one client to every other client unchanged", and
// relayed opcodes go one-for-one), so a message to client X is a copy of
// the OLDEST message with the same bytes (MessageHash) that
//   - another client sent at most Window before it (never after it), and
//   - has not been copied to X yet.
//
// Knowing which client each copy went to is what tells an identical
// payload sent twice (two messages, each copied once to every other client)
// from one message copied twice, and keeps a copy back to the sender from
// counting. The session package (stats, timeline) and diff both match
// relays with it, so they cannot disagree.
//
// C identifies a client (session uses its live sessions, diff its own).
// Relays remembers at most Memory client messages (0: 4096) and forgets
// them after Window (0: 2 s).
//
// It works as a queue in put order with the map made of the queue itself:
// the message with put number n is queue[n-base], and buckets chain the
// messages by hash, newest first, through next; a number below base ends a
// chain, since everything older has left too. (A Go map cost two map
// operations per message and a third per expiry.)
type Relays[C comparable] struct {
	Window time.Duration
	Memory int

	queue   []relayEntry[C]
	buf     []relayEntry[C] // the array queue lies in
	base    int
	buckets []int // per chain, the newest entry's put number + 1

	// The oldest message cannot expire up to keepUntil, when keepOK and
	// the window is keepWindow: most expiry checks are one comparison.
	keepUntil  stamp
	keepWindow time.Duration
	keepOK     bool

	// clients give each client a bit of relayEntry.to; a bit is reused,
	// least recently used first, only once 64 clients of one server were
	// seen (stock has at most 16 players at a time, and only clients seen
	// within one Window can collide).
	clients [64]C
	used    [64]stamp
	nclient int
	last    int // the index of the client looked up last
}

// RelayMatch is the client message a copy was matched to.
type RelayMatch[C comparable] struct {
	From  C         // the client that sent it
	Sent  time.Time // when
	First bool      // this is its first copy
}

type relayEntry[C comparable] struct {
	h      uint64
	src    C
	t      stamp
	to     uint64 // the clients (by bit) it was copied to
	copies int
	next   int // the previous entry in the same chain, as its put number + 1
}

const relayBuckets = 1024 // a power of two

// Sent remembers a game message a client sent to the server.
func (rt *Relays[C]) Sent(h uint64, from C, t time.Time) { rt.put(h, from, stampOf(t)) }

// Copied matches a game message the server sent to client to, with hash h,
// to the client message it copies; ok is false when it copies none. joined
// is when to entered the game (zero when unknown): the server relays only to
// clients in the game, so a message sent before then that reaches to later
// is the late joiner's replication (the ObjCreate of a ship in play, which
// an asap replay can send within the relay window), not a copy.
func (rt *Relays[C]) Copied(h uint64, to C, t, joined time.Time) (m RelayMatch[C], ok bool) {
	e := rt.match(h, to, stampOf(t), stampOf(joined))
	if e == nil {
		return m, false
	}
	return RelayMatch[C]{From: e.src, Sent: e.t.Time(), First: e.copies == 1}, true
}

func (rt *Relays[C]) window() time.Duration {
	if rt.Window <= 0 {
		return 2 * time.Second
	}
	return rt.Window
}

func (rt *Relays[C]) memory() int {
	if rt.Memory <= 0 {
		return 4096
	}
	return rt.Memory
}

// bit is c's bit in relayEntry.to.
func (rt *Relays[C]) bit(c C, now stamp) uint64 {
	i := rt.last
	if i >= rt.nclient || rt.clients[i] != c {
		i = -1
		for j := range rt.nclient {
			if rt.clients[j] == c {
				i = j
				break
			}
		}
		if i < 0 && rt.nclient < len(rt.clients) {
			i = rt.nclient
			rt.nclient++
		} else if i < 0 {
			i = 0
			for j := range rt.clients {
				if rt.used[j].Before(rt.used[i]) {
					i = j
				}
			}
		}
		rt.clients[i] = c
		rt.last = i
	}
	if rt.used[i].Before(now) {
		rt.used[i] = now
	}
	return 1 << i
}

func (rt *Relays[C]) put(h uint64, src C, t stamp) {
	window := rt.window()
	rt.expire(t, window)
	rt.bit(src, t)
	if rt.buckets == nil {
		rt.buckets = make([]int, relayBuckets)
	}
	for len(rt.queue) >= rt.memory() {
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
	rt.queue = append(rt.queue, relayEntry[C]{h: h, src: src, t: t, next: rt.buckets[b]})
	rt.buckets[b] = n + 1
}

// grow makes room at the end of queue, in the same way as stream.grow.
func (rt *Relays[C]) grow() {
	if 2*len(rt.queue) > cap(rt.buf) {
		rt.buf = make([]relayEntry[C], max(16, 2*cap(rt.buf)))
	}
	n := copy(rt.buf, rt.queue)
	clear(rt.buf[n:])
	rt.queue = rt.buf[:n]
}

// match finds the client message a copy to client to with hash h sent at
// t copies (the rule above), and counts the copy; nil when none.
func (rt *Relays[C]) match(h uint64, to C, t, joined stamp) *relayEntry[C] {
	window := rt.window()
	rt.expire(t, window)
	if rt.buckets == nil {
		return nil
	}
	bit := rt.bit(to, t)
	var found *relayEntry[C]
	// The chain runs newest first: the last fit is the oldest.
	for n := rt.buckets[h&(relayBuckets-1)]; n > rt.base; {
		e := &rt.queue[n-1-rt.base]
		n = e.next
		if e.h != h || e.src == to || e.to&bit != 0 || t.Before(e.t) || e.t.Before(joined) {
			continue
		}
		if until, ok := e.t.Add(window); ok && t.After(until) || !ok && t.Sub(e.t) > window {
			continue
		}
		found = e
	}
	if found != nil {
		found.to |= bit
		found.copies++
	}
	return found
}

func (rt *Relays[C]) expire(now stamp, window time.Duration) {
	for len(rt.queue) > 0 {
		if rt.keepOK && window == rt.keepWindow && !now.After(rt.keepUntil) {
			return
		}
		t := rt.queue[0].t
		if now.Sub(t) > window {
			rt.pop()
			continue
		}
		rt.keepUntil, rt.keepOK = t.Add(window)
		rt.keepWindow = window
		return
	}
}

// forget makes c's messages and c's bit nobody's: what a copy of them
// matches still counts as copied (the rule above), but Copied reports no
// sender for it (From is C's zero value), and c, a client that is gone,
// may be a new client later. The session package calls it as a session
// closes, so that its live state can serve a later session.
func (rt *Relays[C]) forget(c C) {
	var none C
	for i := range rt.queue {
		if rt.queue[i].src == c {
			rt.queue[i].src = none
		}
	}
	for i := range rt.clients[:rt.nclient] {
		if rt.clients[i] == c {
			rt.clients[i] = none
		}
	}
}

// pop drops the oldest message.
func (rt *Relays[C]) pop() {
	rt.queue[0] = relayEntry[C]{}
	rt.queue = rt.queue[1:]
	rt.base++
	rt.keepOK = false
}

// MessageHash is the hash relays are matched by: flow.MessageHash, which a
// record computes once for every consumer (flow.Record.PayloadHash); other
// packages that match relays (diff) call it, so that a relay is
// recognised by one hash everywhere.
func MessageHash(b []byte) uint64 { return flow.MessageHash(b) }
