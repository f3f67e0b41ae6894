package measure

import (
	"hash/maphash"
	"time"

	"github.com/bcwire/bcwire/dissect/game"
)

// The relay matrix: each client message is remembered for Window, and a
// message from the server to a client within it with the same payload
// counts as a copy of the oldest one not yet sent to that client.

// windowSec is Window in whole seconds: a time less than windowSec whole
// seconds after another is less than Window after it.
const windowSec = int64(Window / time.Second)

// pending is a client message waiting for its copies.
type pending struct {
	key    uint64       // the payload's hash: its key in relays.recent
	from   *clientState // the sender's flow
	at     instant
	row    *RelayRow
	next   *pending       // the next (younger) message of the same key
	tail   *pending       // on the first of a key: the last of the key
	sentTo []*clientState // the flows a copy went to
}

// relays follows client messages for the relay matrix.
type relays struct {
	rows   [256]*RelayRow // by opcode
	recent table          // by payload hash
	seed   maphash.Seed   // of the payload hashes (collisions are negligible)
	free   []*pending
	queue  []*pending // oldest first, from queue[head] on
	head   int
}

// sent remembers a client's message (payload holds the opcode byte
// first).
func (rl *relays) sent(cs *clientState, op game.Opcode, payload []byte, now instant) {
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
	if i := rl.recent.find(key); rl.recent.slots[i].first != nil {
		first := rl.recent.slots[i].first
		first.tail.next, first.tail = p, p
	} else {
		p.tail = p
		rl.recent.insert(i, key, p)
	}
	rl.queue = append(rl.queue, p)
}

// received counts a message from the server to client cs as the copy of
// the oldest identical client message not yet sent to it.
func (rl *relays) received(cs *clientState, payload []byte) {
	if rl.recent.n == 0 {
		return
	}
	for p := rl.recent.slots[rl.recent.find(maphash.Bytes(rl.seed, payload))].first; p != nil; p = p.next {
		// (The flows of one server share its count of players: the same
		// pointer is the same server.)
		if p.from.playing != cs.playing || sentTo(p, cs) {
			continue
		}
		p.sentTo = append(p.sentTo, cs)
		if p.from == cs {
			p.row.ToSender++
		} else {
			p.row.ToOthers++
		}
		return
	}
}

func sentTo(p *pending, cs *clientState) bool {
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

// expire forgets the client messages older than Window.
func (rl *relays) expire(now instant) {
	for rl.head < len(rl.queue) {
		p := rl.queue[rl.head]
		// Most records come less than two whole seconds after the oldest
		// message (capture seconds of one sign subtract exactly), which
		// is not past Window; sub decides the others.
		if ds := now.sec - p.at.sec; ds < windowSec && now.sec^p.at.sec >= 0 || now.sub(p.at) <= Window {
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
			rl.recent.slots[i].first = p.next
		}
		p.from, p.row, p.next, p.tail, p.sentTo = nil, nil, nil, nil, p.sentTo[:0]
		rl.free = append(rl.free, p)
	}
	if rl.head > 64 && rl.head >= len(rl.queue)/2 {
		n := copy(rl.queue, rl.queue[rl.head:])
		clear(rl.queue[n:])
		rl.queue, rl.head = rl.queue[:n], 0
	}
}

// table maps payload hashes to the first pending message of each: open
// addressing with linear probing on the hash's low bits. A maphash value
// is uniform already, which a Go map would hash again; the map's work was
// half the measures' time on OpenBC's battle, where every client message
// is relayed.
type table struct {
	slots []slot // a power of two long, at most half full
	n     int
}

type slot struct {
	key   uint64
	first *pending // nil: empty
}

const minTableSlots = 64

// find is the index of key's slot, or of the empty slot where it goes.
func (t *table) find(key uint64) int {
	if t.slots == nil {
		t.slots = make([]slot, minTableSlots)
	}
	mask := len(t.slots) - 1
	for i := int(key) & mask; ; i = (i + 1) & mask {
		if s := &t.slots[i]; s.first == nil || s.key == key {
			return i
		}
	}
}

// insert puts key in the empty slot i that find gave.
func (t *table) insert(i int, key uint64, first *pending) {
	t.slots[i] = slot{key, first}
	t.n++
	if 2*t.n > len(t.slots) {
		old := t.slots
		t.slots = make([]slot, 2*len(old))
		for _, s := range old {
			if s.first != nil {
				t.slots[t.find(s.key)] = s
			}
		}
	}
}

// remove empties slot i, moving back the entries after it that it would
// otherwise cut off from their home slot (backward-shift deletion).
func (t *table) remove(i int) {
	mask := len(t.slots) - 1
	for j := (i + 1) & mask; t.slots[j].first != nil; j = (j + 1) & mask {
		home := int(t.slots[j].key) & mask
		if (j-home)&mask >= (j-i)&mask { // i lies on j's probe path
			t.slots[i] = t.slots[j]
			i = j
		}
	}
	t.slots[i] = slot{}
	t.n--
}
