// Package transport is the reliable-delivery layer of Bridge Commander's UDP
// protocol, for programs that speak it: the bundled server and the traffic
// generator. A Conn is one end of one connection. It numbers reliable
// messages per channel (control types 0x00-0x05 and data type 0x32 count
// separately), splits large game messages into fragments, bundles messages
// and ACKs into datagrams of at most 512 bytes, ACKs what it receives with
// the flag values stock peers use, drops duplicates, reassembles fragments
// and retransmits what the peer has not ACKed.
//
// Conn does no I/O and reads no clock: callers pass the current time, so the
// same code runs on a wall clock (server) and on simulated time (generator).
// Datagrams are plaintext; encrypt them with dissect.Encrypt before sending.
package transport

import (
	"time"

	"github.com/bcwire/bcwire/dissect"
)

// Options tune a Conn. Zero fields take the defaults.
type Options struct {
	// MaxDatagram is the largest datagram Flush builds (default 512, the
	// stock receive buffer).
	MaxDatagram int
	// MaxMessage is the largest data message sent whole; a game message
	// whose data message would be longer is fragmented (default 480).
	MaxMessage int
	// FragmentSize is the game bytes carried per fragment (default 400).
	FragmentSize int
	// RetransmitAfter is the first retransmission delay (default 1s); each
	// retry doubles it. MaxRetries (default 8) ends the connection.
	RetransmitAfter time.Duration
	MaxRetries      int

	// MaxFragSets and MaxFragBytes cap the unfinished fragmented messages
	// held from the peer (default 16 and 256 KiB; bytes are payload plus
	// a fixed overhead per fragment); Budget, when set, caps them over
	// every Conn sharing it. See limits.go.
	MaxFragSets  int
	MaxFragBytes int
	Budget       *FragmentBudget
	// MaxUnacked and MaxUnackedBytes cap the reliable messages sent and
	// not yet acknowledged (default 4096 and 1 MiB); past them the peer is
	// given up (Retransmit reports it dead).
	MaxUnacked      int
	MaxUnackedBytes int
}

func (o Options) withDefaults() Options {
	if o.MaxDatagram <= 0 {
		o.MaxDatagram = 512
	}
	if o.MaxMessage <= 0 {
		o.MaxMessage = 480
	}
	if o.FragmentSize <= 0 {
		o.FragmentSize = 400
	}
	if o.RetransmitAfter <= 0 {
		o.RetransmitAfter = time.Second
	}
	if o.MaxRetries <= 0 {
		o.MaxRetries = 8
	}
	if o.MaxFragSets <= 0 {
		o.MaxFragSets = DefaultMaxFragSets
	}
	if o.MaxFragBytes <= 0 {
		o.MaxFragBytes = DefaultMaxFragBytes
	}
	if o.MaxUnacked <= 0 {
		o.MaxUnacked = DefaultMaxUnacked
	}
	if o.MaxUnackedBytes <= 0 {
		o.MaxUnackedBytes = DefaultMaxUnackedBytes
	}
	return o
}

// Delivery is one message received from the peer, new (not a duplicate),
// with fragmented game messages already reassembled.
type Delivery struct {
	Type dissect.TransportType
	// Reliable is set when the message was sent reliably (fragments always
	// are); Seq is meaningful only then.
	Reliable bool
	Seq      uint16
	Payload  []byte // owned by the caller
	// Fragments is how many fragments the payload was rebuilt from (0 for
	// a message that came whole).
	Fragments int
}

type pending struct {
	msg     dissect.Message // Payload owned by the Conn
	sentAt  time.Duration
	due     time.Duration
	retries int
}

// Conn is one end of a connection.
type Conn struct {
	// LocalID is the peer id this end writes in byte 0 of its datagrams:
	// 0x01 for the server, the assigned wire slot (0x02 and up) for a
	// client, 0xFF for a client still connecting.
	LocalID byte

	opts     Options
	nextSeq  [2]uint16 // by dissect.Channel
	queue    []dissect.Message
	acks     []dissect.Message
	inflight []*pending
	seen     [2]seqWindow
	frags    *dissect.Reassembler[uint16]
	dg       dissect.Datagram

	fragSets     []fragSet // unfinished sets, oldest first
	fragBytes    int
	fragStats    FragStats
	unackedBytes int
	acksHeard    int

	// Retransmits counts messages sent again.
	Retransmits int
}

// NewConn returns a Conn whose datagrams carry localID.
func NewConn(localID byte, opts Options) *Conn {
	o := opts.withDefaults()
	// The Conn enforces its caps itself before each Add (limits.go), so
	// the Reassembler's own are set where they never bind.
	return &Conn{LocalID: localID, opts: o,
		frags: dissect.NewReassembler[uint16](o.MaxFragSets+1, 2*o.MaxFragBytes)}
}

// NextSeq is the sequence number the next reliable message on ch will get.
func (c *Conn) NextSeq(ch dissect.Channel) uint16 { return c.nextSeq[ch] }

// SetNextSeq sets the next sequence number on ch (for replaying a capture's
// numbering).
func (c *Conn) SetNextSeq(ch dissect.Channel, seq uint16) { c.nextSeq[ch] = seq }

// Queue adds a message to be sent by the next Flush and returns its
// sequence number (meaningful when reliable). The payload is copied. A data
// message too large to travel whole is split into reliable fragments that
// share one sequence number.
func (c *Conn) Queue(t dissect.TransportType, payload []byte, reliable, ordered bool) uint16 {
	m := dissect.Message{Type: t, Reliable: reliable, Ordered: ordered,
		Payload: append([]byte(nil), payload...)}
	if t == dissect.TypeData && 5+len(payload) > c.opts.MaxMessage {
		m.Reliable = true // fragments are always reliable
	}
	var seq uint16
	if m.Reliable {
		ch := t.Channel()
		seq = c.nextSeq[ch]
		c.nextSeq[ch]++
		m.Seq = seq
	}
	if t != dissect.TypeData || 5+len(payload) <= c.opts.MaxMessage {
		c.queue = append(c.queue, m)
		return seq
	}
	n := (len(payload) + c.opts.FragmentSize - 1) / c.opts.FragmentSize
	if n > 255 {
		n = 255 // the count is one byte; the last fragment takes the rest
	}
	for i := 0; i < n; i++ {
		lo := i * c.opts.FragmentSize
		hi := lo + c.opts.FragmentSize
		if i == n-1 {
			hi = len(payload)
		}
		f := m
		f.Fragment, f.FragIndex = true, uint8(i)
		if i == 0 {
			f.FragTotal = uint8(n)
		}
		f.Payload = m.Payload[lo:hi:hi]
		c.queue = append(c.queue, f)
	}
	return seq
}

// Ack queues the ACK stock peers send for a received reliable message:
// flags 0x02 for the control channel, 0x01 plus the fragment index for a
// fragment, 0x00 otherwise.
func (c *Conn) Ack(m *dissect.Message) {
	a := dissect.Message{Type: dissect.TypeAck, Seq: m.Seq}
	if m.Type.Channel() == dissect.ChannelControl {
		a.AckFlags |= dissect.AckControl
	}
	if m.Fragment {
		a.AckFlags |= dissect.AckFragment
		a.AckFragIndex = m.FragIndex
	}
	c.acks = append(c.acks, a)
}

// Pending reports whether anything waits to be flushed.
func (c *Conn) Pending() bool { return len(c.queue)+len(c.acks) > 0 }

// Flush packs the queued ACKs and then the queued messages, in order, into
// as few datagrams as fit MaxDatagram, and returns them as plaintext. Reliable
// messages start waiting for their ACK.
func (c *Conn) Flush(now time.Duration) [][]byte { return c.flush(now, true) }

// FlushMessages is Flush that keeps queued ACKs for a later datagram (the
// stock server sends its connect reply without the ACK of the connect).
func (c *Conn) FlushMessages(now time.Duration) [][]byte { return c.flush(now, false) }

func (c *Conn) flush(now time.Duration, withAcks bool) [][]byte {
	var out [][]byte
	var cur []dissect.Message
	size := 2
	emit := func() {
		if len(cur) > 0 {
			d := dissect.Datagram{Peer: c.LocalID, Messages: cur}
			out = append(out, d.Append(nil))
			cur, size = nil, 2
		}
	}
	add := func(m dissect.Message) {
		n := m.Len()
		if len(cur) == 255 || (len(cur) > 0 && size+n > c.opts.MaxDatagram) {
			emit()
		}
		cur = append(cur, m)
		size += n
	}
	if withAcks {
		for _, a := range c.acks {
			add(a)
		}
		c.acks = c.acks[:0]
	}
	for _, m := range c.queue {
		add(m)
		if m.Reliable && !c.isInflight(&m) {
			c.inflight = append(c.inflight, &pending{msg: m, sentAt: now, due: now + c.opts.RetransmitAfter})
			c.unackedBytes += len(m.Payload)
		}
	}
	c.queue = c.queue[:0]
	emit()
	return out
}

func (c *Conn) isInflight(m *dissect.Message) bool {
	for _, p := range c.inflight {
		if sameMessage(&p.msg, m) {
			return true
		}
	}
	return false
}

func sameMessage(a, b *dissect.Message) bool {
	return a.Type.Channel() == b.Type.Channel() && a.Seq == b.Seq && a.Fragment == b.Fragment && a.FragIndex == b.FragIndex
}

// Retransmit queues again every reliable message whose ACK is overdue and
// reports whether the peer should be given up (a message exceeded
// MaxRetries, or more than MaxUnacked messages or MaxUnackedBytes wait for
// their ACK).
func (c *Conn) Retransmit(now time.Duration) (dead bool) {
	if len(c.inflight) > c.opts.MaxUnacked || c.unackedBytes > c.opts.MaxUnackedBytes {
		dead = true
	}
	for _, p := range c.inflight {
		if p.due > now {
			continue
		}
		if p.retries >= c.opts.MaxRetries {
			dead = true
			continue
		}
		p.retries++
		p.due = now + c.opts.RetransmitAfter<<p.retries
		c.queue = append(c.queue, p.msg)
		c.Retransmits++
	}
	return dead
}

// Unacked is the number of reliable messages still waiting for an ACK.
func (c *Conn) Unacked() int { return len(c.inflight) }

// AcksHeard is the number of the peer's ACKs that acknowledged something
// this end sent: zero for a peer that has shown no sign of receiving
// anything (a spoofed source address).
func (c *Conn) AcksHeard() int { return c.acksHeard }

// Receive handles one plaintext datagram from the peer: it clears what the
// peer ACKs, queues ACKs for what the peer sent reliably, and returns the
// new messages (duplicates dropped, fragments reassembled). A framing error
// is returned with the messages that preceded it.
func (c *Conn) Receive(plain []byte, now time.Duration) ([]Delivery, error) {
	err := c.dg.Parse(plain)
	var out []Delivery
	for i := range c.dg.Messages {
		m := &c.dg.Messages[i]
		if m.Type == dissect.TypeAck {
			c.acked(m)
			continue
		}
		if m.Fragment {
			res, ok := c.admitFragment(m)
			if !ok {
				continue // refused for want of room: not ACKed, so sent again
			}
			if m.Reliable {
				c.Ack(m)
			}
			if res.Complete == nil {
				continue
			}
			out = append(out, Delivery{Type: m.Type, Reliable: true, Seq: m.Seq, Payload: append([]byte(nil), res.Complete...), Fragments: res.Count})
			continue
		}
		if m.Reliable {
			c.Ack(m)
			ch := m.Type.Channel()
			if c.seen[ch].has(m.Seq) {
				continue
			}
			c.seen[ch].add(m.Seq)
		}
		out = append(out, Delivery{Type: m.Type, Reliable: m.Reliable, Seq: m.Seq, Payload: append([]byte(nil), m.Payload...)})
	}
	return out, err
}

func (c *Conn) acked(a *dissect.Message) {
	ch := a.AckChannel()
	frag := a.AckFlags&dissect.AckFragment != 0
	kept := c.inflight[:0]
	for _, p := range c.inflight {
		m := &p.msg
		if m.Type.Channel() == ch && m.Seq == a.Seq && m.Fragment == frag && (!frag || m.FragIndex == a.AckFragIndex) {
			c.unackedBytes -= len(m.Payload)
			c.acksHeard++
			continue
		}
		kept = append(kept, p)
	}
	for i := len(kept); i < len(c.inflight); i++ {
		c.inflight[i] = nil
	}
	c.inflight = kept
}

// seqWindow remembers the last 1024 sequence numbers seen on a channel.
type seqWindow struct {
	set  map[uint16]struct{}
	ring [1024]uint16
	n    int
	next int
}

func (w *seqWindow) has(s uint16) bool { _, ok := w.set[s]; return ok }

func (w *seqWindow) add(s uint16) {
	if w.set == nil {
		w.set = map[uint16]struct{}{}
	}
	if w.n == len(w.ring) {
		delete(w.set, w.ring[w.next])
	} else {
		w.n++
	}
	w.ring[w.next] = s
	w.next = (w.next + 1) % len(w.ring)
	w.set[s] = struct{}{}
}
