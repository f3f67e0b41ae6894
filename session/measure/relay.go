package measure

import (
	"hash/maphash"
	"math"

	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/internal/wallclock"
)

// The relay matrix: each client message is remembered for Window, and a
// message from the server to a client within it with the same payload
// counts as a copy of the oldest one not yet sent to that client. (This is
// not session.Relays' rule, which counts no copy back to the sender and
// none to a client that joined later; the matrix shows the echoes.)

// pending is a client message waiting for its copies.
type pending struct {
	key  uint64       // the payload's hash: its key in relays.recent
	from *clientState // the sender's flow
	at   wallclock.Time
	row  *RelayRow
	next *pending // the next (younger) message of the same key
	tail *pending // on the first of a key: the last of the key
	// The flows a copy went to: by bit those whose id is below 64 (all
	// but a capture of many clients' flows), in sentTo the others.
	sentBits uint64
	sentTo   []*clientState
}

// relays follows client messages for the relay matrix.
type relays struct {
	rows   [256]*RelayRow // by opcode
	recent table[pending] // by payload hash
	seed   maphash.Seed   // of the payload hashes (collisions are negligible)
	free   []*pending
	queue  []*pending // oldest first, from queue[head] on
	head   int
	// keepUntil: no record up to it can expire the oldest message (see
	// keep).
	keepUntil wallclock.Time
	keepAll   bool // keepUntil holds for every record (no messages)
}

// sent remembers a client's message (payload holds the opcode byte
// first).
func (rl *relays) sent(cs *clientState, op game.Opcode, payload []byte, now wallclock.Time) {
	row := rl.rows[op]
	if row == nil {
		row = &RelayRow{Opcode: op.String(), op: op}
		rl.rows[op] = row
	}
	row.Messages++
	others := *cs.playing
	if cs.inGame && !cs.gone {
		others-- // the sender itself
	}
	row.Expected += others
	key := maphash.Bytes(rl.seed, payload)
	p := rl.newPending()
	p.key, p.from, p.at, p.row = key, cs, now, row
	if i := rl.recent.find(key); rl.recent.slots[i].v != nil {
		first := rl.recent.slots[i].v
		first.tail.next, first.tail = p, p
	} else {
		p.tail = p
		rl.recent.insert(i, key, p)
	}
	rl.queue = append(rl.queue, p)
	if rl.head == len(rl.queue)-1 {
		rl.keep() // a new oldest message
	}
}

// received counts a message from the server to client cs as the copy of
// the oldest identical client message not yet sent to it.
func (rl *relays) received(cs *clientState, payload []byte) {
	if rl.recent.n == 0 {
		return
	}
	for p := rl.recent.slots[rl.recent.find(maphash.Bytes(rl.seed, payload))].v; p != nil; p = p.next {
		// (The flows of one server share its count of players: the same
		// pointer is the same server.)
		if p.from.playing != cs.playing || p.wasSentTo(cs) {
			continue
		}
		if cs.id < 64 {
			p.sentBits |= 1 << cs.id
		} else {
			p.sentTo = append(p.sentTo, cs)
		}
		if p.from == cs {
			p.row.ToSender++
		} else {
			p.row.ToOthers++
		}
		return
	}
}

// wasSentTo reports whether a copy of p went to cs.
func (p *pending) wasSentTo(cs *clientState) bool {
	if cs.id < 64 {
		return p.sentBits&(1<<cs.id) != 0
	}
	for _, o := range p.sentTo {
		if o == cs {
			return true
		}
	}
	return false
}

// newPending is a pending entry, reused when one has expired.
func (rl *relays) newPending() *pending {
	if n := len(rl.free); n > 0 {
		p := rl.free[n-1]
		rl.free = rl.free[:n-1]
		return p
	}
	return &pending{}
}

// due reports whether a record at now may expire the oldest message: a
// comparison on most records (expire decides).
func (rl *relays) due(now wallclock.Time) bool { return !rl.keepAll && now.After(rl.keepUntil) }

// keep sets keepUntil for the oldest message: Window after it, or, when
// that time does not fit (a far-off time from a damaged capture), the
// earliest time, and expire looks on every record.
func (rl *relays) keep() {
	if rl.keepAll = rl.head == len(rl.queue); rl.keepAll {
		return
	}
	var ok bool
	if rl.keepUntil, ok = rl.queue[rl.head].at.Add(Window); !ok {
		rl.keepUntil = wallclock.Time{Sec: math.MinInt64}
	}
}

// expire forgets the client messages older than Window.
func (rl *relays) expire(now wallclock.Time) {
	for rl.head < len(rl.queue) {
		p := rl.queue[rl.head]
		if now.Sub(p.at) <= Window {
			break
		}
		rl.queue[rl.head] = nil
		rl.head++
		// Messages expire in the order they came, so p is the first of
		// its key.
		if i := rl.recent.find(p.key); p.next == nil {
			rl.recent.remove(i)
		} else {
			p.next.tail = p.tail
			rl.recent.slots[i].v = p.next
		}
		p.from, p.row, p.next, p.tail, p.sentBits, p.sentTo = nil, nil, nil, nil, 0, p.sentTo[:0]
		rl.free = append(rl.free, p)
	}
	if rl.head > 64 && rl.head >= len(rl.queue)/2 {
		n := copy(rl.queue, rl.queue[rl.head:])
		clear(rl.queue[n:])
		rl.queue, rl.head = rl.queue[:n], 0
	}
	rl.keep()
}
