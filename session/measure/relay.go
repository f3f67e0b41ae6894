package measure

import (
	"encoding/binary"
	"math"
	"math/bits"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/internal/wallclock"
)

// The relay matrix: each client message is remembered for Window, and a
// message from the server to a client within it with the same payload
// counts as a copy of the oldest one not yet sent to that client. (This is
// not session.Relays' rule, which counts no copy back to the sender and
// none to a client that joined later, and leaves StateUpdates out; the
// matrix shows the echoes.)
//
// The messages wait in a queue in the order they came, numbered from 1 as
// they are put: message n is queue[n-1-base]. Buckets, by the payload
// hash's low bits, chain them newest first through next; a number not
// above the expired count ends a chain, since everything older has expired
// too. Expiring is moving on in the queue; nothing in it is a pointer, so
// the garbage collector has nothing to follow or mark in it. The
// messages' times lie apart, in ats (ats[i] is queue[i]'s): expire reads
// only them, four to a cache line where a pending took nearly one, and
// by then (Window later) the lines are long out of the L1 cache.

// pending is a client message waiting for its copies.
type pending struct {
	hash uint64 // of the payload
	next int64  // the bucket's previous message, by number (0: none)
	// The flows a copy went to: by bit those whose id is below 64 (all
	// but a capture of many clients' flows), in relays.sentTo the others.
	sentBits uint64
	from     int32       // the sender's flow, by id
	server   int32       // its server, by id
	op       game.Opcode // the row it counts in
}

// relayTally is a RelayRow's counts.
type relayTally struct{ messages, toSender, toOthers, expected int }

// relays follows client messages for the relay matrix.
type relays struct {
	// (The fields every record or message reads first, together: the
	// arrays by opcode last.)
	// keepUntil: no record up to it can expire the oldest message (see
	// keep); the latest time when there are no messages.
	keepUntil wallclock.Time
	head      int              // see queue
	base      int64            // the number of the message before queue[0]
	queue     []pending        // from queue[head] on, the messages within Window
	ats       []wallclock.Time // the queue's times, queue[i]'s at ats[i]; as long as its capacity
	buckets   []int64          // the newest message of each, by number (0: none); a power of two long
	// sentTo lists, by message number, the flows with an id from 64 on a
	// copy went to.
	sentTo map[int64][]int32
	rows   [256]*RelayRow // by opcode
	// tallies are the rows' counts, by opcode, until Finish copies them
	// (a row's are one line of this array, where the row pointer and the
	// row were two lines apart, out of L1 by the opcode's next message).
	// An opcode has a row once its tally counts a message.
	tallies [256]relayTally
}

// minBuckets is the least number of buckets: at the battle's rate of
// client messages (about 40 a second per player), some 25 players' Window
// of them before the chains lengthen.
const minBuckets = 2048

// take takes a game message of opcode op on flow cs, of direction dir,
// into the matrix: a client's is remembered, a server's is counted as the
// copy to its client of the oldest identical client message not yet sent
// to it. h is the message's payload hash, or, when m is not nil, m's
// payload is hashed here: StateUpdates', which session's relay rule leaves
// out, so that no other consumer has hashed them. (Their
// flow.MessageHash, TestStateHashIsMessageHash, the usual 16 to 32 bytes,
// a client's StateUpdate some 28, without a call, and the usual cases of
// both sides inline: Add takes every StateUpdate here, and each call cost
// the values saved around it and loaded again.)
func (rl *relays) take(cs *clientState, dir game.Direction, op game.Opcode, h uint64, m *dissect.Message, now wallclock.Time) {
	// (m, not its payload: a slice's three words took the arguments past
	// the registers they are passed in.)
	if m != nil {
		if p, n := m.Payload, len(m.Payload); n < 16 || n > 32 {
			h = flow.MessageHash(p)
		} else {
			const mul = 0x9E3779B97F4A7C15
			h = uint64(14695981039346656037) ^ uint64(n)*mul
			h = bits.RotateLeft64((h^binary.LittleEndian.Uint64(p))*mul, 29)
			h = bits.RotateLeft64((h^binary.LittleEndian.Uint64(p[8:]))*mul, 29)
			h = bits.RotateLeft64((h^binary.LittleEndian.Uint64(p[n-16:]))*mul, 29)
			h = bits.RotateLeft64((h^binary.LittleEndian.Uint64(p[n-8:]))*mul, 29)
			h ^= h >> 32
			h *= mul
			h ^= h >> 29
		}
	}
	if dir != game.ServerToClient {
		t := &rl.tallies[op]
		if t.messages == 0 || len(rl.queue) == cap(rl.queue) || rl.head == len(rl.queue) {
			// The opcode's first message, a full queue or an empty one
			// (the message becomes the oldest): the calls apart, so that
			// the usual case saves nothing around them.
			rl.sentFirst(cs, op, h, now)
			return
		}
		t.messages++
		others := cs.srv.playing
		if cs.inGame && !cs.gone {
			others-- // the sender itself
		}
		t.expected += others
		n := len(rl.queue)
		rl.queue = rl.queue[:n+1]
		rl.ats[n] = now
		p := &rl.queue[n]
		b := &rl.buckets[h&uint64(len(rl.buckets)-1)]
		p.hash, p.next, p.sentBits = h, *b, 0
		p.from, p.server, p.op = cs.id, cs.srv.id, op
		*b = rl.base + int64(n) + 1
		return
	}
	if rl.head == len(rl.queue) {
		return // none within Window
	}
	if cs.id >= 64 {
		rl.receivedFar(cs, h)
		return
	}
	// (The flows past the 64 with a bit apart: the map they need is a
	// call in the loop, around which everything live was saved.)
	bit := uint64(1) << cs.id
	var found *pending
	expired := rl.base + int64(rl.head)
	// The chain runs newest first: the last fit is the oldest.
	for n := rl.buckets[h&uint64(len(rl.buckets)-1)]; n > expired; {
		p := &rl.queue[n-1-rl.base]
		if p.hash == h && p.server == cs.srv.id && p.sentBits&bit == 0 {
			found = p
		}
		n = p.next
	}
	if found == nil {
		return
	}
	found.sentBits |= bit
	if found.from == cs.id {
		rl.tallies[found.op].toSender++
	} else {
		rl.tallies[found.op].toOthers++
	}
}

// sentFirst is take's client message in its rarer cases.
func (rl *relays) sentFirst(cs *clientState, op game.Opcode, h uint64, now wallclock.Time) {
	if rl.rows[op] == nil {
		rl.rows[op] = &RelayRow{Opcode: op.String(), op: op}
	}
	t := &rl.tallies[op]
	t.messages++
	others := cs.srv.playing
	if cs.inGame && !cs.gone {
		others-- // the sender itself
	}
	t.expected += others
	if len(rl.queue) == cap(rl.queue) {
		rl.grow()
	}
	n := len(rl.queue)
	rl.queue = rl.queue[:n+1]
	rl.ats[n] = now
	p := &rl.queue[n]
	b := &rl.buckets[h&uint64(len(rl.buckets)-1)]
	p.hash, p.next, p.sentBits = h, *b, 0
	p.from, p.server, p.op = cs.id, cs.srv.id, op
	*b = rl.base + int64(n) + 1
	if rl.head == len(rl.queue)-1 {
		rl.keep() // a new oldest message
	}
}

// grow makes room at the end of the queue: moves the messages within
// Window to its start, or to a queue twice as long, with as many buckets
// again as it holds messages (at least minBuckets).
func (rl *relays) grow() {
	live, liveAt := rl.queue[rl.head:], rl.ats[rl.head:]
	rl.base += int64(rl.head)
	if cap(rl.queue) == 0 || 2*len(live) > cap(rl.queue) {
		q := make([]pending, len(live), max(64, 2*cap(rl.queue)))
		copy(q, live)
		rl.queue = q
		ats := make([]wallclock.Time, cap(q))
		copy(ats, liveAt[:len(live)])
		rl.ats = ats
	} else {
		n := copy(rl.queue, live)
		rl.queue = rl.queue[:n]
		copy(rl.ats, liveAt[:n])
	}
	rl.head = 0
	if nb := max(minBuckets, cap(rl.queue)); nb > len(rl.buckets) {
		// Rechain every message in the new buckets, oldest first.
		rl.buckets = make([]int64, nb)
		mask := uint64(nb - 1)
		for i := range rl.queue {
			p := &rl.queue[i]
			b := &rl.buckets[p.hash&mask]
			p.next, *b = *b, rl.base+int64(i)+1
		}
	}
}

// receivedFar is take's copy to a flow with an id from 64 on.
func (rl *relays) receivedFar(cs *clientState, h uint64) {
	var found *pending
	var num int64
	expired := rl.base + int64(rl.head)
	for n := rl.buckets[h&uint64(len(rl.buckets)-1)]; n > expired; {
		p := &rl.queue[n-1-rl.base]
		if p.hash == h && p.server == cs.srv.id && !rl.wasSentToFar(n, cs.id) {
			found, num = p, n
		}
		n = p.next
	}
	if found == nil {
		return
	}
	rl.sentToFar(num, cs.id)
	if found.from == cs.id {
		rl.tallies[found.op].toSender++
	} else {
		rl.tallies[found.op].toOthers++
	}
}

// sentToFar notes that a copy of message n went to flow id (from 64 on).
func (rl *relays) sentToFar(n int64, id int32) {
	if rl.sentTo == nil {
		rl.sentTo = map[int64][]int32{}
	}
	rl.sentTo[n] = append(rl.sentTo[n], id)
}

// wasSentToFar reports whether a copy of message n went to flow id
// (from 64 on).
func (rl *relays) wasSentToFar(n int64, id int32) bool {
	for _, o := range rl.sentTo[n] {
		if o == id {
			return true
		}
	}
	return false
}

// due reports whether a record at now may expire the oldest message: a
// comparison on most records (expire decides).
func (rl *relays) due(now wallclock.Time) bool { return now.After(rl.keepUntil) }

// keepNone is keepUntil when there are no messages: no time is after it.
var keepNone = wallclock.Time{Sec: math.MaxInt64, Nsec: 1e9 - 1}

// keep sets keepUntil for the oldest message: Window after it, or, when
// that time does not fit (a far-off time from a damaged capture), the
// earliest time, and expire looks on every record.
func (rl *relays) keep() {
	if rl.head == len(rl.queue) {
		rl.keepUntil = keepNone
		return
	}
	var ok bool
	if rl.keepUntil, ok = rl.ats[rl.head].Add(Window); !ok {
		rl.keepUntil = wallclock.Time{Sec: math.MinInt64}
	}
}

// expire forgets the client messages older than Window.
func (rl *relays) expire(now wallclock.Time) {
	// A message is older than Window when it came before now - Window: a
	// comparison a message instead of a subtraction. (For a Window of
	// whole seconds; wallclock's Sub saturates only far past it, keeping
	// the sign, so the two tests agree on every time.)
	const windowSec = int64(Window / time.Second)
	if Window%time.Second != 0 || now.Sec < math.MinInt64+windowSec {
		rl.expireFar(now)
		return
	}
	limit := wallclock.Time{Sec: now.Sec - windowSec, Nsec: now.Nsec}
	for rl.head < len(rl.queue) && rl.ats[rl.head].Before(limit) {
		if len(rl.sentTo) > 0 {
			delete(rl.sentTo, rl.base+int64(rl.head)+1)
		}
		rl.head++
	}
	rl.keep()
}

// expireFar is expire for a time within Window of the earliest one
// (a damaged capture's), by subtraction.
func (rl *relays) expireFar(now wallclock.Time) {
	for rl.head < len(rl.queue) {
		at := rl.ats[rl.head]
		if d, ok := now.SubNear(at); ok && d <= Window || !ok && now.Sub(at) <= Window {
			break
		}
		if len(rl.sentTo) > 0 {
			delete(rl.sentTo, rl.base+int64(rl.head)+1)
		}
		rl.head++
	}
	rl.keep()
}
