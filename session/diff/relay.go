package diff

// Relay matching: a client's game message and the copies the server sends
// to the other clients.

import (
	"time"

	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/session"
)

type serverState struct {
	activity int // client game messages but StateUpdates, in rate windows
	sessions []*Session
	recent   map[uint64][]*sent
	queue    []*sent
	ships    map[game.ObjectID]*Session
}

type sent struct {
	hash     uint64
	from     *Session
	op       game.Opcode
	at       time.Time
	copies   int
	to       map[*Session]bool
	eligible int
}

// remember keeps a client's game message for relay matching.
func (b *Builder) remember(s *Session, r *flow.Record, op game.Opcode, eligible int) {
	h := session.MessageHash(b.payload(r))
	e := &sent{hash: h, from: s, op: op, at: r.Time, eligible: eligible}
	s.srv.recent[h] = append(s.srv.recent[h], e)
	s.srv.queue = append(s.srv.queue, e)
}

// relayCopy reports whether r, a game message to s, is a copy of another
// client's recent message.
func (b *Builder) relayCopy(s *Session, r *flow.Record) bool {
	h := session.MessageHash(b.payload(r))
	for _, e := range s.srv.recent[h] {
		if e.from == s || (e.to != nil && e.to[s]) {
			continue
		}
		if r.Time.Sub(e.at) > time.Duration(b.rules.RelayWindow) {
			continue
		}
		if e.to == nil {
			e.to = map[*Session]bool{}
		}
		e.to[s] = true
		e.copies++
		return true
	}
	return false
}

// expire tallies and forgets client messages older than the relay window.
func (b *Builder) expire(sv *serverState, now time.Time) {
	w := time.Duration(b.rules.RelayWindow)
	n := 0
	for _, e := range sv.queue {
		if now.Sub(e.at) <= w {
			break
		}
		b.tally(sv, e)
		n++
	}
	if n > 0 {
		copy(sv.queue, sv.queue[n:])
		for i := len(sv.queue) - n; i < len(sv.queue); i++ {
			sv.queue[i] = nil
		}
		sv.queue = sv.queue[:len(sv.queue)-n]
	}
}

func (b *Builder) tally(sv *serverState, e *sent) {
	t := &e.from.Relay[e.op]
	t.Messages++
	if e.copies > 0 {
		t.Relayed++
	}
	t.Copies += e.copies
	t.Expected += e.eligible
	list := sv.recent[e.hash]
	for i, x := range list {
		if x == e {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(sv.recent, e.hash)
	} else {
		sv.recent[e.hash] = list
	}
}
