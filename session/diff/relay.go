package diff

// Relay matching: a client's game message and the copies the server sends
// to the other clients, by the session package's one relay rule
// (session.Relays), so that diff and stats/timeline match the same copies;
// what diff adds is the tally by opcode over the rate window.

import (
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/session"
)

type serverState struct {
	activity int // client game messages but StateUpdates, in rate windows
	sessions []*Session
	relays   session.Relays[*Session]
	ships    map[game.ObjectID]*Session
}

// sent remembers a client's game message for relay matching and, when it
// was sent in the rate window with others in the game (eligible of them),
// counts it.
func (b *Builder) sent(s *Session, r *flow.Record, op game.Opcode, counted bool, eligible int) {
	if counted && eligible > 0 {
		t := &s.Relay[op]
		t.Messages++
		t.Expected += eligible
	}
	if op != game.OpStateUpdate { // never relayed as is: the session package skips them too
		s.srv.relays.Sent(session.MessageHash(r.Payload), s, r.Time)
	}
}

// relayCopy reports whether r, a game message to s, is a copy of another
// client's recent message, and counts it for the sender.
func (b *Builder) relayCopy(s *Session, r *flow.Record, op game.Opcode) bool {
	m, ok := s.srv.relays.Copied(session.MessageHash(r.Payload), s, r.Time, s.NewPlayer)
	if !ok {
		return false
	}
	if b.counting(m.From, m.Sent) {
		t := &m.From.Relay[op] // the same bytes: the same opcode
		if m.First {
			t.Relayed++
		}
		t.Copies++
	}
	return true
}
