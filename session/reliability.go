package session

import (
	"encoding/json"
	"math"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/internal/wallclock"
)

// Reliable delivery as the capture shows it. Each direction of a session
// has two sequence spaces (control: types 0x00-0x05; data: type 0x32), and
// the other side ACKs each reliable message, each fragment separately
// (ACK flags bit 0 plus the fragment index). A stream follows one sender on
// one channel: what it sent, what came back ACKed, how long the ACK took,
// and what was sent again. Its memory is bounded: it remembers the last
// recentCap reliable messages and a 1024-number window of sequence numbers.

// Reliability is what a session's reliable delivery looked like, by
// direction (who sent the messages) and channel.
type Reliability struct {
	ClientToServer Channels `json:"C->S"`
	ServerToClient Channels `json:"S->C"`
}

// Channels holds one direction's two sequence spaces.
type Channels struct {
	Data    ChannelStats `json:"data"`
	Control ChannelStats `json:"control"`
}

// ChannelStats describes one sender's messages on one channel.
type ChannelStats struct {
	Reliable   int `json:"reliable"`   // distinct reliable messages; each fragment counts
	Fragments  int `json:"fragments"`  // of Reliable, fragments
	Unreliable int `json:"unreliable"` // unreliable messages (StateUpdates, mostly)

	Retransmissions int `json:"retransmissions"` // copies of a reliable message sent again
	// Duplicates counts retransmissions of a message the receiver had
	// already ACKed: the ACK was lost or late and the receiver got it twice.
	Duplicates    int `json:"duplicates"`
	Acked         int `json:"acked"`          // messages ACKed at least once
	DuplicateAcks int `json:"duplicate_acks"` // further ACKs of an ACKed message
	UnmatchedAcks int `json:"unmatched_acks"` // ACKs of messages the capture never showed
	// Unacked counts messages never ACKed: still waiting when the session
	// ended, or forgotten unACKed after recentCap newer messages.
	Unacked int `json:"unacked"`

	Gaps       int `json:"gaps"`         // forward jumps in the sequence numbers
	Missing    int `json:"missing"`      // numbers skipped by a gap and never seen later
	OutOfOrder int `json:"out_of_order"` // messages older than one already seen, seen for the first time

	RTT RTT `json:"rtt"` // send to ACK, as seen at the capture point
}

// Total adds the two channels.
func (c *Channels) Total() ChannelStats {
	a, b := c.Data, c.Control
	a.Reliable += b.Reliable
	a.Fragments += b.Fragments
	a.Unreliable += b.Unreliable
	a.Retransmissions += b.Retransmissions
	a.Duplicates += b.Duplicates
	a.Acked += b.Acked
	a.DuplicateAcks += b.DuplicateAcks
	a.UnmatchedAcks += b.UnmatchedAcks
	a.Unacked += b.Unacked
	a.Gaps += b.Gaps
	a.Missing += b.Missing
	a.OutOfOrder += b.OutOfOrder
	a.RTT = RTT{}
	return a
}

// RTT summarises ACK round-trip times. Samples is how many ACKs gave one
// (only messages sent once do: a retransmitted message's ACK cannot be tied
// to one copy). Min and Max are exact; Median and P95 come from a bounded
// sample of at most Options.RTTSamples values.
type RTT struct {
	Samples int           `json:"samples"`
	Min     time.Duration `json:"-"`
	Median  time.Duration `json:"-"`
	P95     time.Duration `json:"-"`
	Max     time.Duration `json:"-"`
}

// MarshalJSON writes the times as milliseconds.
func (r RTT) MarshalJSON() ([]byte, error) {
	if r.Samples == 0 {
		return []byte(`{"samples":0}`), nil
	}
	return json.Marshal(struct {
		Samples int     `json:"samples"`
		Min     float64 `json:"min_ms"`
		Median  float64 `json:"median_ms"`
		P95     float64 `json:"p95_ms"`
		Max     float64 `json:"max_ms"`
	}{r.Samples, ms(r.Min), ms(r.Median), ms(r.P95), ms(r.Max)})
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/1e3) / 1e3 }

// recentCap bounds the reliable messages a stream remembers.
const recentCap = 512

type sentKey struct {
	seq  uint16
	frag int16 // fragment index, -1 for a whole message
}

// sentBuckets is the number of hash chains over a stream's recent messages
// (a power of two). Sequence numbers mostly go up by one, so recentCap
// messages spread one to a chain, and the chain of a new number mostly
// ends at once: its head, sentBuckets messages back, is forgotten, and
// find reads no message to know. (With 256 chains, every new message read
// the two sent 256 and 512 before it, long out of the cache: most of
// send's time went there.)
const sentBuckets = 1024

func (k sentKey) bucket() int {
	return int((uint32(k.seq) ^ uint32(uint16(k.frag))<<6) & (sentBuckets - 1))
}

// sentMsg is a reliable message a stream remembers. (32 bytes: next and
// frame are 32-bit, which holds for 2^31 messages a stream.)
type sentMsg struct {
	first  stamp // first sent
	key    sentKey
	resent bool  // sent more than once
	acked  bool  //
	frame  int32 // capture frame it was first sent in
	next   int32 // the previous message in the same chain, as its send number + 1
}

// stream follows one sender's reliable messages on one channel.
//
// It remembers the last recentCap of them, oldest first, in recent: the
// message with send number n (counted from the stream's first) is
// recent[n-base]. buckets chains them by key hash, newest first, through
// sentMsg.next; a number below base ends a chain, since everything older
// is forgotten too. Forgetting the oldest message is thus only moving the
// start of recent, and a lookup a few comparisons (a map did the same with
// ten times the instructions, and grew anew for every session).
type stream struct {
	// st is counted here, where send and ack find it with the rest of
	// the stream, and copied to out by finish: in the Session, 18 KB
	// with what surrounds it, its line is out of the cache by the
	// stream's next message.
	st      ChannelStats
	out     *ChannelStats
	recent  []sentMsg
	buf     []sentMsg // the array recent lies in
	base    int
	buckets []int // per chain, the newest message's send number + 1
	win     seqWindow
	rtt     reservoir
	spare   *spare // of the Builder; may be nil
}

// find returns the remembered message k, or nil.
func (s *stream) find(k sentKey) *sentMsg {
	if s.buckets == nil {
		return nil
	}
	for n := s.buckets[k.bucket()]; n > s.base; {
		e := &s.recent[n-1-s.base]
		if e.key == k {
			return e
		}
		n = int(e.next)
	}
	return nil
}

// remember adds a message sent for the first time (in frame), forgetting
// the oldest one beyond recentCap.
func (s *stream) remember(k sentKey, t stamp, frame int) {
	if s.buckets == nil {
		if s.buckets = s.spare.takeBuckets(); s.buckets == nil {
			s.buckets = make([]int, sentBuckets)
		}
	}
	if len(s.recent) == cap(s.recent) {
		s.grow()
	}
	b := k.bucket()
	n := s.base + len(s.recent)
	s.recent = append(s.recent, sentMsg{first: t, key: k, frame: int32(frame), next: int32(s.buckets[b])})
	s.buckets[b] = n + 1
	if len(s.recent) > recentCap {
		if !s.recent[0].acked {
			s.st.Unacked++
		}
		s.recent = s.recent[1:]
		s.base++
	}
}

// grow makes room at the end of recent: it moves recent to the start of
// buf when forgetting has freed at least half of buf, or else to a buf
// twice the size. (recent never holds more than recentCap+1 messages, so
// buf stops growing at 1024.)
func (s *stream) grow() {
	if 2*len(s.recent) > cap(s.buf) {
		// A stream takes a finished stream's array, of the size it needs
		// or more, rather than growing through every size again: a
		// capture of short sessions (OpenBC's clients reconnect; each
		// copy of battle x40 is three new sessions) grew every stream
		// from 16 messages, the largest part of what the Builder
		// allocated.
		n := max(16, 2*len(s.recent))
		s.buf = s.spare.takeBuf(n)
		if s.buf == nil {
			s.buf = make([]sentMsg, n)
		}
	}
	n := copy(s.buf, s.recent)
	s.recent = s.buf[:n]
}

// send notes a message sent by the stream's owner in frame and reports
// whether it was a retransmission.
func (s *stream) send(m *dissect.Message, t stamp, frame int) (retransmit bool) {
	if !m.Reliable {
		s.st.Unreliable++
		return false
	}
	k := sentKey{m.Seq, -1}
	if m.Fragment {
		k.frag = int16(m.FragIndex)
	}
	if e := s.find(k); e != nil {
		s.st.Retransmissions++
		if e.acked {
			s.st.Duplicates++
		}
		e.resent = true
		return true
	}
	seen := s.win.seen(m.Seq)
	if seen && !m.Fragment {
		// Older than anything remembered, but the number was used: a late
		// copy of a message long since forgotten.
		s.st.Retransmissions++
		return true
	}
	s.st.Reliable++
	if m.Fragment {
		s.st.Fragments++
	}
	if w := &s.win; w.started && m.Seq == w.highest+1 {
		// arrive's usual case, the next number: no gap, nothing to clear.
		w.highest = m.Seq
		w.set(m.Seq, true)
	} else if !seen {
		s.win.arrive(m.Seq, &s.st, frame)
	}
	s.remember(k, t, frame)
	return false
}

// AckMatch is what an ACK acknowledged.
type AckMatch struct {
	// Acked is set when the ACK acknowledged a message for the first
	// time, Duplicate when that message was already ACKed; neither, when
	// the capture never showed the message.
	Acked, Duplicate bool
	Channel          dissect.Channel // the message's
	Fragment         bool            // the message was a fragment
}

// ackStreams notes an ACK of the messages of streams, a sender's two channels,
// and returns what it acknowledged. The ACK's flags name the channel and,
// for a fragment, its index; an ACK whose flags do not fit a message the
// capture showed, or only one already ACKed (a non-stock peer's flags), is
// matched as the flags could have meant: the other channel, then the whole
// message, of a message not yet ACKed.
func ackStreams(streams *[2]stream, a *dissect.Message, t stamp) AckMatch {
	ch := a.AckChannel() & 1
	k := sentKey{a.Seq, -1}
	if a.AckFlags&dissect.AckFragment != 0 {
		k.frag = int16(a.AckFragIndex)
	}
	s := &streams[ch]
	e := s.find(k)
	if e == nil || e.acked {
		// Not as flagged, or already ACKed: a message not yet ACKed the
		// flags could have meant comes first.
		if f, fs, fch := ackFallback(streams, k, ch); f != nil {
			e, s, ch = f, fs, fch
		} else if e == nil {
			s.st.UnmatchedAcks++
			return AckMatch{}
		}
	}
	m := AckMatch{Channel: dissect.Channel(ch), Fragment: e.key.frag >= 0}
	if e.acked {
		s.st.DuplicateAcks++
		m.Duplicate = true
		return m
	}
	s.ack(e, t)
	m.Acked = true
	return m
}

// ackFallback finds the message an ACK of k on channel ch meant when its
// flags do not fit: k on the other channel, then the whole message on
// either.
func ackFallback(streams *[2]stream, k sentKey, ch dissect.Channel) (*sentMsg, *stream, dissect.Channel) {
	tries := [3]struct {
		ch dissect.Channel
		k  sentKey
	}{{1 - ch, k}, {ch, sentKey{k.seq, -1}}, {1 - ch, sentKey{k.seq, -1}}}
	for i, try := range tries {
		if i > 0 && k.frag < 0 {
			break // the whole message was what was tried
		}
		if e := streams[try.ch].find(try.k); e != nil && !e.acked {
			return e, &streams[try.ch], try.ch
		}
	}
	return nil, nil, 0
}

// ack marks e, a message not yet ACKed, ACKed at t.
func (s *stream) ack(e *sentMsg, t stamp) {
	e.acked = true
	s.st.Acked++
	if !e.resent && !t.Before(e.first) {
		if s.rtt.vals == nil {
			s.rtt.vals = s.spare.takeSamples()
		}
		// t.sub(e.first), its usual case inlined: t is not before
		// e.first, so a difference in range is not negative (one that
		// overflowed is).
		var rtt time.Duration
		if ds := t.Sec - e.first.Sec; ds >= 0 && ds < wallclock.MaxExactSec {
			rtt = time.Duration(ds)*time.Second + time.Duration(t.Nsec-e.first.Nsec)
		} else {
			rtt = t.Sub(e.first)
		}
		s.rtt.add(rtt)
	}
}

// finish counts what was never ACKed and summarises the round-trip times.
func (s *stream) finish() {
	for _, e := range s.recent {
		if !e.acked {
			s.st.Unacked++
		}
	}
	s.st.RTT = s.rtt.summary()
	*s.out = s.st
	s.spare.keep(s)
	s.recent, s.buf, s.buckets, s.rtt.vals = nil, nil, nil, nil
}

// seqWindow remembers which of the last 1024 sequence numbers below the
// highest one were seen.
type seqWindow struct {
	started bool
	first   uint16 // the first number seen: anything older predates the capture
	highest uint16
	// firstFrame is the frame of the first number, gapFrame that of the
	// first forward jump (0 while there is none).
	firstFrame, gapFrame int32
	bits                 [1024 / 64]uint64
}

const winSize = 1024

func (w *seqWindow) seen(seq uint16) bool {
	if !w.started {
		return false
	}
	d := int16(seq - w.highest)
	if d > 0 || int(d) <= -winSize {
		return false
	}
	return w.bit(seq)
}

func (w *seqWindow) bit(seq uint16) bool {
	i := seq % winSize
	return w.bits[i/64]&(1<<(i%64)) != 0
}

func (w *seqWindow) set(seq uint16, on bool) {
	i := seq % winSize
	if on {
		w.bits[i/64] |= 1 << (i % 64)
	} else {
		w.bits[i/64] &^= 1 << (i % 64)
	}
}

// arrive records the first sight of seq (in frame) and counts gaps and
// late arrivals.
func (w *seqWindow) arrive(seq uint16, st *ChannelStats, frame int) {
	if !w.started {
		w.started, w.first, w.highest = true, seq, seq
		w.firstFrame = int32(frame)
		w.set(seq, true)
		return
	}
	d := int16(seq - w.highest)
	switch {
	case d > 0:
		if d > 1 {
			if st.Gaps == 0 {
				w.gapFrame = int32(frame)
			}
			st.Gaps++
			st.Missing += int(d) - 1
		}
		if int(d) >= winSize {
			w.bits = [winSize / 64]uint64{}
		} else {
			for s := w.highest + 1; s != seq; s++ {
				w.set(s, false)
			}
		}
		w.highest = seq
		w.set(seq, true)
	default:
		st.OutOfOrder++
		if int(d) > -winSize {
			if int16(seq-w.first) > 0 && st.Missing > 0 {
				st.Missing-- // a number a gap skipped, arriving late
			}
			w.set(seq, true)
		}
	}
}
