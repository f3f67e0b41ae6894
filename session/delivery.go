package session

import (
	"time"

	"github.com/bcwire/bcwire/dissect"
)

// Delivery follows the reliable delivery of one direction of a session
// message by message: the sender's messages on its two channels and the
// ACKs the other side sends for them. It is the engine a Session's
// Reliability is counted with, for packages that need its verdicts one
// message at a time (diff), so that they count what stats counts. The zero
// value is ready; it keeps no RTT samples.
type Delivery struct {
	ch [2]stream // by dissect.Channel
}

// Send notes a message of the sender's, seen at t in frame, and reports
// whether it was a retransmission (a copy of one already noted).
// Unreliable messages are only counted.
func (d *Delivery) Send(m *dissect.Message, t time.Time, frame int) (retransmit bool) {
	return d.ch[m.Type.Channel()&1].send(m, stampOf(t), frame)
}

// Ack notes an ACK from the other side (of one of this direction's
// messages) and returns what it acknowledged.
func (d *Delivery) Ack(a *dissect.Message, t time.Time) AckMatch {
	return ackStreams(&d.ch, a, stampOf(t))
}

// Unacked counts the messages on ch not ACKed (of the last few hundred a
// channel remembers) that were first sent at or before cutoff, and returns
// the first frame of them (0 when none).
func (d *Delivery) Unacked(ch dissect.Channel, cutoff time.Time) (n, firstFrame int) {
	c := stampOf(cutoff)
	for i := range d.ch[ch&1].recent {
		e := &d.ch[ch&1].recent[i]
		if e.acked || e.first.After(c) {
			continue
		}
		if n == 0 || int(e.frame) < firstFrame {
			firstFrame = int(e.frame)
		}
		n++
	}
	return n, firstFrame
}

// Sequence describes the sequence numbers of ch: whether any reliable
// message was seen, the first number and its frame, and the forward jumps
// (gaps) with the frame of the first.
type Sequence struct {
	Started         bool
	First           uint16
	FirstFrame      int
	Gaps, GapFrame  int
	Missing         int // numbers a gap skipped and that never came
	Reliable, Acked int // distinct reliable messages, and of them ACKed
}

// Sequence returns ch's sequence numbers so far.
func (d *Delivery) Sequence(ch dissect.Channel) Sequence {
	s := &d.ch[ch&1]
	w := &s.win
	return Sequence{Started: w.started, First: w.first, FirstFrame: int(w.firstFrame),
		Gaps: s.st.Gaps, GapFrame: int(w.gapFrame), Missing: s.st.Missing,
		Reliable: s.st.Reliable, Acked: s.st.Acked}
}
