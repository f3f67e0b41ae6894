package diff

// Reliability as the diff sees it: ACKs matched to reliable messages,
// retransmissions and sequence numbers, followed with the session
// package's engine (session.Delivery), so that the diff counts what stats
// counts; the diff adds its checks (ACK flags by category, sequence start
// and gaps, messages never ACKed).

import (
	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/session"
)

type ackUseKey struct {
	dir int    // direction index of the ACK's sender
	cat string // "control", "data", "fragment"
}

type usage struct {
	flags map[uint8]int
	frame map[uint8]int
}

const maxReply = 64

func (b *Builder) ack(s *Session, r *flow.Record, d int) {
	m := r.Msg
	// The ACKed message was sent the other way; session.Delivery matches
	// it as the flags say or, when they do not fit, as they could have
	// meant (the other channel, the whole message).
	am := s.delivery[1-d].Ack(m, r.Time)
	if !am.Acked {
		// A repeated ACK, or one of a message sent before the capture.
		if r.Dir == game.ServerToClient && s.open != nil && s.open.trigRel && m.Seq == s.open.trigSeq {
			b.answer(s, r)
		}
		return
	}
	cat := "data"
	switch {
	case am.Channel == dissect.ChannelControl:
		cat = "control"
	case am.Fragment:
		cat = "fragment"
	}
	u := s.ackUse[ackUseKey{d, cat}]
	if u == nil {
		u = &usage{flags: map[uint8]int{}, frame: map[uint8]int{}}
		s.ackUse[ackUseKey{d, cat}] = u
	}
	if u.flags[m.AckFlags] == 0 {
		u.frame[m.AckFlags] = r.Frame
	}
	u.flags[m.AckFlags]++
	if r.Dir == game.ServerToClient && s.open != nil && s.open.trigRel && am.Channel == s.open.trigCh && m.Seq == s.open.trigSeq &&
		!earlierFragment(am, m, &s.open.Trigger) {
		b.answer(s, r)
	}
}

// earlierFragment reports whether an ACK is of a fragment of the trigger
// before its last: it answers the datagram that carried that fragment, not
// the message, and whether it arrives before or after the message is
// complete is a race between the client sending the next fragments and the
// server answering - a capture at the client and one at the server see it
// on different sides of the trigger.
func earlierFragment(am session.AckMatch, m *dissect.Message, trig *Msg) bool {
	return am.Fragment && trig.Fragment && m.AckFlags&dissect.AckFragment != 0 && m.AckFragIndex < trig.FragIndex
}

// reliable notes a reliable message with session.Delivery and reports
// whether it is new (not a retransmission).
func (b *Builder) reliable(s *Session, r *flow.Record, d int) bool {
	m := r.Msg
	ch := m.Type.Channel()
	del := &s.delivery[d]
	started := del.Sequence(ch).Started
	if del.Send(m, r.Time, r.Frame) {
		return false
	}
	if !started && del.Sequence(ch).Started {
		s.fromStart[d][ch] = !s.Connect.IsZero() || (r.Dir == game.ClientToServer && r.Control != nil && r.Control.Kind == "connect-request")
	}
	return true
}
