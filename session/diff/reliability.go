package diff

// Reliability as the diff sees it: ACKs matched to reliable messages,
// retransmissions, and sequence gaps.

import (
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
)

type pendKey struct {
	dir  int // direction index of the sender
	ch   dissect.Channel
	seq  uint16
	frag int16 // -1 for a whole message
}

type pendVal struct {
	at    time.Time
	frame int
}

type seqTrack struct {
	started   bool
	first     uint16
	max       uint16
	firstAt   int
	gaps      int
	gapFrame  int
	fromStart bool // the session's connect was seen
}

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
	ch := m.AckChannel()
	frag := int16(-1)
	if m.AckFlags&dissect.AckFragment != 0 {
		frag = int16(m.AckFragIndex)
	}
	// The ACKed message was sent the other way. Try the channel and
	// fragment the flags name first, then the other channel (the flags may
	// be wrong), then the whole message.
	var k pendKey
	ok := false
	for _, c := range []pendKey{{1 - d, ch, m.Seq, frag}, {1 - d, 1 - ch, m.Seq, frag},
		{1 - d, ch, m.Seq, -1}, {1 - d, 1 - ch, m.Seq, -1}} {
		if _, ok = s.pend[c]; ok {
			k = c
			break
		}
	}
	if !ok {
		// A repeated ACK, or one of a message sent before the capture.
		if r.Dir == game.ServerToClient && s.open != nil && s.open.trigRel && m.Seq == s.open.trigSeq {
			b.answer(s, r)
		}
		return
	}
	delete(s.pend, k)
	s.rememberAcked(k)
	cat := "data"
	switch {
	case k.ch == dissect.ChannelControl:
		cat = "control"
	case k.frag >= 0:
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
	if r.Dir == game.ServerToClient && s.open != nil && s.open.trigRel && k.ch == s.open.trigCh && m.Seq == s.open.trigSeq {
		b.answer(s, r)
	}
}

// reliable tracks a reliable message until its ACK and reports whether it
// is new (not a retransmission).
func (b *Builder) reliable(s *Session, r *flow.Record, d int) bool {
	m := r.Msg
	ch := m.Type.Channel()
	k := pendKey{d, ch, m.Seq, -1}
	if m.Fragment {
		k.frag = int16(m.FragIndex)
	}
	if _, ok := s.pend[k]; ok {
		return false
	}
	if s.seenSeq(k) {
		return false // sent again after its ACK (the ACK was lost)
	}
	s.pend[k] = pendVal{at: r.Time, frame: r.Frame}
	if m.Fragment && m.FragIndex != 0 {
		return true
	}
	t := &s.seq[d][ch]
	switch {
	case !t.started:
		t.started, t.first, t.max, t.firstAt = true, m.Seq, m.Seq, r.Frame
		t.fromStart = !s.Connect.IsZero() || (r.Dir == game.ClientToServer && r.Control != nil && r.Control.Kind == "connect-request")
	case m.Seq == t.max+1:
		t.max = m.Seq
	case m.Seq-t.max < 0x8000 && m.Seq != t.max:
		if t.gaps == 0 {
			t.gapFrame = r.Frame
		}
		t.gaps++
		t.max = m.Seq
	}
	return true
}

// ackedMemory is how many ACKed messages a session remembers, to know a
// copy sent again after its ACK.
const ackedMemory = 1024

func (s *Session) seenSeq(k pendKey) bool { return s.acked[k] }

func (s *Session) rememberAcked(k pendKey) {
	if s.acked == nil {
		s.acked = map[pendKey]bool{}
		s.ackedRing = make([]pendKey, 0, ackedMemory)
	}
	if len(s.ackedRing) == ackedMemory {
		delete(s.acked, s.ackedRing[s.ackedNext])
		s.ackedRing[s.ackedNext] = k
		s.ackedNext = (s.ackedNext + 1) % ackedMemory
	} else {
		s.ackedRing = append(s.ackedRing, k)
	}
	s.acked[k] = true
}
