package diff

// Per-direction handling of a session's records: the join steps a client
// message triggers, the answers that fill them, rates and StateUpdate flags.

import (
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
)

func (b *Builder) fromClient(s *Session, r *flow.Record, d int, connect bool) {
	m := r.Msg
	switch {
	case connect:
		if s.Connect.IsZero() {
			s.Connect = r.Time
		}
		b.trigger(s, r, "connect", PhaseHandshake)
	case m.Type == dissect.TypeDisconnect:
		if s.Disconnect.IsZero() {
			s.Disconnect = r.Time
			b.stopRates(s, r.Time)
		}
		if st := b.trigger(s, r, "disconnect", PhaseDisconnect); st != nil {
			b.dropShips(s)
			st.oDeadline = r.Time.Add(time.Duration(b.rules.ReplyWindow))
			st.reached = map[*Session]bool{}
			for _, o := range s.srv.sessions {
				if o != s && !o.ended && !o.NewPlayer.IsZero() && o.Disconnect.IsZero() {
					o.others = st
				}
			}
		}
	}
	if r.Game == nil {
		return
	}
	g := r.Game.Msg
	op := g.Opcode()
	s.anyData = true
	if s.Received[op] == 0 {
		s.ReceivedFrame[op] = r.Frame
		s.ReceivedPhase[op] = s.PhaseAt(r.Time)
	}
	s.Received[op]++
	switch op {
	case game.OpChecksumResponse:
		if c, ok := g.(*game.ChecksumResponse); ok {
			b.trigger(s, r, "checksum round "+c.Round.String(), PhaseHandshake)
		}
	case game.OpNewPlayerInGame:
		if s.NewPlayer.IsZero() {
			s.NewPlayer = r.Time
			s.RateStart = r.Time
			s.actStart = s.srv.activity
		}
		if st := b.trigger(s, r, "new player in game", PhaseLobby); st != nil {
			for _, owner := range s.srv.ships {
				if owner != s && !owner.ended {
					st.LiveShips++
				}
			}
		}
	case game.OpObjCreate, game.OpObjCreateTeam:
		if oc, ok := g.(*game.ObjCreate); ok && oc.Class == game.ClassShip {
			if s.InGame.IsZero() {
				s.InGame = r.Time
			}
			s.srv.ships[oc.Object] = s
			if s.ownShips == nil {
				s.ownShips = map[game.ObjectID]bool{}
			}
			s.ownShips[oc.Object] = true
		}
	case game.OpStateUpdate:
		b.stateFlags(s, r, d)
	}
	counted := b.counting(s, r.Time)
	if counted {
		s.Opcodes[d][op]++
		if op != game.OpStateUpdate {
			s.srv.activity++
		}
	}
	b.sent(s, r, op, counted, b.othersInGame(s))
}

func (b *Builder) toClient(s *Session, r *flow.Record, d int) {
	m := r.Msg
	if m.Type == dissect.TypeDisconnect || m.Type == dissect.TypeBoot {
		if s.Disconnect.IsZero() {
			s.Disconnect = r.Time
			b.stopRates(s, r.Time)
			b.dropShips(s)
		}
	}
	if r.Control != nil && r.Control.Kind == "peer-info" {
		return // a keepalive (counted in Add)
	}
	if r.Game == nil {
		if m.Type != dissect.TypeData { // control answers: slot assignment, boot
			b.answer(s, r)
		}
		return
	}
	g := r.Game.Msg
	op := g.Opcode()
	switch op {
	case game.OpChecksumComplete, game.OpSettings, game.OpGameInit:
		if s.Lobby.IsZero() {
			s.Lobby = r.Time
		}
	case game.OpDestroyObject:
		if do, ok := g.(*game.DestroyObject); ok {
			delete(s.srv.ships, do.Object)
		}
	case game.OpStateUpdate:
		b.stateFlags(s, r, d)
		if b.counting(s, r.Time) {
			s.Opcodes[d][op]++
		}
		return
	}
	if b.relayCopy(s, r, op) {
		if b.counting(s, r.Time) {
			s.Relayed[op]++
		}
		return
	}
	if s.Sent[op] == 0 {
		s.SentFrame[op] = r.Frame
		s.SentPhase[op] = s.PhaseAt(r.Time)
	}
	s.Sent[op]++
	// Answers are compared step by step; the rates are of the rest, which
	// follows the game rather than the joins and leaves.
	if !b.answer(s, r) {
		s.Unsolicited[op]++
		if b.counting(s, r.Time) {
			s.Opcodes[d][op]++
		}
	}
}

// counting reports whether t is inside s's rate window.
func (b *Builder) counting(s *Session, t time.Time) bool {
	return !s.RateStart.IsZero() && !t.Before(s.RateStart) && (s.Disconnect.IsZero() || t.Before(s.Disconnect))
}

func (b *Builder) stopRates(s *Session, t time.Time) {
	if !s.RateStart.IsZero() && s.RateEnd.IsZero() {
		s.RateEnd = t
		s.Activity = s.srv.activity - s.actStart
	}
}

func (b *Builder) dropShips(s *Session) {
	for id, owner := range s.srv.ships {
		if owner == s {
			delete(s.srv.ships, id)
		}
	}
}

func (b *Builder) othersInGame(s *Session) int {
	n := 0
	for _, o := range s.srv.sessions {
		if o != s && !o.ended && !o.NewPlayer.IsZero() && o.Disconnect.IsZero() {
			n++
		}
	}
	return n
}

func (b *Builder) stateFlags(s *Session, r *flow.Record, d int) {
	su, ok := r.Game.Msg.(*game.StateUpdate)
	if !ok {
		return
	}
	if d == 1 && !s.ownShips[su.Object] {
		d = 2
	}
	s.StateUpdates[d]++
	for bit := 0; bit < 8; bit++ {
		if su.Flags&(1<<bit) != 0 {
			if s.StateFlags[d][bit] == 0 {
				s.FlagFrame[d][bit] = r.Frame
			}
			s.StateFlags[d][bit]++
		}
	}
	if r.Dir == game.ServerToClient && su.Flags&game.StateWeapons != 0 {
		b.find(s, Finding{Key: "stateupdate-flags S->C 0x80", Kind: "stateupdate-flags", Phase: s.PhaseAt(r.Time),
			Severity: Major, Summary: "server-to-client StateUpdates carry the weapons flag 0x80 (stock never sends it)"}, r.Frame, "")
	}
	if r.Dir == game.ClientToServer && su.Flags&game.StateSubsystems != 0 {
		b.find(s, Finding{Key: "stateupdate-flags C->S 0x20", Kind: "stateupdate-flags", Phase: s.PhaseAt(r.Time),
			Severity: Minor, Summary: "client-to-server StateUpdates carry the subsystem flag 0x20 (stock clients never send it)"}, r.Frame, "")
	}
}

// trigger opens the step key on s, unless it is already open (the client
// sent the message again).
func (b *Builder) trigger(s *Session, r *flow.Record, key string, ph Phase) *Step {
	if s.Step(key) != nil {
		return nil
	}
	st := &Step{Key: key, Phase: ph, Trigger: b.msg(r), trigCh: r.Msg.Type.Channel(), trigSeq: r.Msg.Seq,
		trigRel: r.Msg.Reliable, deadline: r.Time.Add(time.Duration(b.rules.ReplyWindow))}
	s.Steps = append(s.Steps, st)
	s.open = st
	return st
}

// closeExpired ends the collection of answers whose time is up.
func (b *Builder) closeExpired(s *Session, t time.Time) {
	if s.open != nil && t.After(s.open.deadline) {
		s.open = nil
	}
	if s.others != nil && t.After(s.others.oDeadline) {
		s.others = nil
	}
}

// answer adds r to the step s is answering, or to the disconnect step of
// another client, and reports whether it did.
func (b *Builder) answer(s *Session, r *flow.Record) bool {
	if st := s.open; st != nil {
		if st.first.IsZero() {
			st.first = r.Time
			st.Answered = true
			st.Latency = r.Time.Sub(st.Trigger.Time)
			st.deadline = r.Time.Add(time.Duration(b.rules.ReplyBurst))
		}
		if len(st.Reply) < maxReply {
			st.Reply = append(st.Reply, b.msg(r))
		}
		return true
	}
	if st := s.others; st != nil && r.Game != nil {
		if st.oFirst.IsZero() {
			st.oFirst = r.Time
			st.oDeadline = r.Time.Add(time.Duration(b.rules.ReplyBurst))
		}
		if !st.reached[s] {
			st.reached[s] = true
			st.Receivers++
		}
		if st.othersTo == nil {
			st.othersTo = s
		}
		if st.othersTo == s && len(st.Others) < maxReply {
			st.Others = append(st.Others, b.msg(r))
		}
		return true
	}
	return false
}
