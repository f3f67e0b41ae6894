package replay

import (
	"context"
	"fmt"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/server/transport"
)

// Adaptive mode, message by message.
//
// The client side follows the captured client datagram by datagram, so that
// against a server that behaves as captured it sends exactly the captured
// bytes; what it adapts is everything that depends on the server:
//
//   - ACKs: a captured ACK is sent only once the message it acknowledges
//     has actually arrived (else it is sent as soon as that message
//     arrives); a reliable message the captured client never acknowledged
//     is ACKed at once, with the flags stock peers use (transport.Conn).
//   - Numbering: the captured sequence numbers are kept, so the server sees
//     the client's reliable numbering as captured.
//   - Checksums: a captured checksum response for a round the server has
//     not asked for is replaced by the captured response for a round it has
//     asked for and not yet had (unfragmented responses).
//   - The peer id in byte 0 is the slot the server assigned.
//
// The server side is compared after transport decoding: every captured
// server message (the first copy of each reliable message, fragments
// reassembled, ACKs set aside) against the messages that arrive (duplicates
// dropped and fragments reassembled by a transport.Conn), in any bundling
// and with any sequence numbers. A message may be matched up to two client
// datagrams early or late.
//
// Captured server messages come in two sorts. Answers (the messages of a
// datagram that answered a client datagram, see Datagram.Answer) are
// awaited: the client sends its next datagram once they have arrived, or
// after the answer timeout. Paced messages - keepalives and StateUpdates,
// which a server sends on its own clock, and everything else it sent
// unprompted, such as other clients' relayed traffic - are never waited
// for: each arriving message that no answer accounts for is matched with
// the oldest outstanding paced message of the same kind that says the
// same, whatever window it is in. With capture timing a paced message not
// matched by its captured offset plus the answer timeout is missing (or
// different, when a message of its kind arrived and matched nothing).
// With asap timing the client runs ahead of the server's clock, so paced
// messages still outstanding when the session ends are "not due" rather
// than missing - unless a message of their kind arrived and matched
// nothing, which makes them different.

// ackKey names what an ACK acknowledges.
type ackKey struct {
	ch   dissect.Channel
	seq  uint16
	frag bool
	idx  uint8
}

func ackKeyOfAck(m *dissect.Message) ackKey {
	return ackKey{m.AckChannel(), m.Seq, m.AckFlags&dissect.AckFragment != 0, m.AckFragIndex}
}

func ackKeyOf(m *dissect.Message) ackKey {
	k := ackKey{ch: m.Type.Channel(), seq: m.Seq, frag: m.Fragment}
	if m.Fragment {
		k.idx = m.FragIndex
	}
	return k
}

// expMsg is one captured server message awaited.
type expMsg struct {
	step    int // script index of the datagram that completed it
	win     int // the client datagram (group) it follows
	typ     dissect.TransportType
	seq     uint16
	payload []byte
	due     time.Time
	done    bool
	paced   bool   // not an answer to the client: awaited only when the client ACKs it (see need)
	key     ackKey // reliable, unfragmented: what an ACK of it names
	rel     bool
	clock   bool   // paced by the server's clock or by another client: may be not due
	kind    string // see kindOf
}

// adaptive is the state of one adaptive session.
type adaptive struct {
	v        *verifier
	rx       *transport.Conn // receive side: duplicates, reassembly
	acker    *transport.Conn // builds ACK-only datagrams
	slot     byte
	haveSlot bool

	captured map[ackKey]bool // everything the captured client ACKs
	received map[ackKey]bool // reliable messages that arrived
	owed     map[ackKey]bool // captured ACKs held back until their message arrives

	requested map[byte]bool   // checksum rounds the server asked for
	answered  map[byte]bool   // checksum rounds answered
	responses map[byte][]byte // captured unfragmented checksum responses by round
	// replaced are the sequence numbers of fragmented checksum responses
	// sent whole from the manifest: their other fragments are dropped.
	replaced map[uint16]bool

	exp   []*expMsg // in window order
	extra []extraMsg
	// dec1 decodes the live exchange, dec2 the captured one: each learns
	// ship classes from its own side's ObjCreate messages, the client's
	// own included, so StateUpdate subsystems decode as that session's
	// ships (see learn).
	dec1, dec2 *game.Decoder
	win        int       // groups sent so far
	got        int       // messages received since the last window closed
	lastAnswer time.Time // when an awaited answer last arrived
	sentAt     time.Time // when the last client datagram went
	// need are the paced messages the client datagram about to be sent
	// ACKs in the capture: they are awaited for the answer timeout from
	// the last client datagram, except kinds that already failed to come
	// in time once (gaveUp), so a server that never sends a kind of
	// message does not stall the run at every one.
	need   []*expMsg
	gaveUp map[string]bool
	// lastSent is the script index of the last client datagram sent (-1:
	// none yet).
	lastSent int
}

type extraMsg struct {
	win     int // the window it arrived in
	at      time.Time
	typ     dissect.TransportType
	seq     uint16
	payload []byte
}

// kindOf names the kind of a message for pairing: GameSpy, a control
// type, a game opcode, and for StateUpdates the object too.
func kindOf(typ dissect.TransportType, payload []byte) string {
	switch {
	case typ == 0xFF:
		return "gamespy"
	case typ != dissect.TypeData || len(payload) == 0:
		return typ.String()
	case game.Opcode(payload[0]) == game.OpStateUpdate && len(payload) >= 5:
		return fmt.Sprintf("%02X:% X", payload[0], payload[1:5])
	}
	return fmt.Sprintf("%02X", payload[0])
}

// answerKind reports whether a message in a datagram that answered a
// client datagram is an answer to it: control messages other than
// keepalives, GameSpy replies, and the game messages of the join
// (checksum rounds, the 0x28 + Settings + GameInit bundle, MISSION_INIT
// and what comes with it). Game traffic in such a datagram - relayed
// messages, the host's own events - happens to follow the client datagram
// but answers nothing.
func answerKind(typ dissect.TransportType, payload []byte, withMissionInit bool) bool {
	switch {
	case typ == 0xFF:
		return true
	case typ == dissect.TypePeerInfo:
		return false
	case typ != dissect.TypeData:
		return true
	case len(payload) == 0:
		return false
	}
	switch game.Opcode(payload[0]) {
	case game.OpSettings, game.OpGameInit, game.OpChecksumRequest, game.OpSystemChecksumFail, game.OpVersionMismatch,
		game.OpChecksumComplete, game.OpMissionInit:
		return true
	case game.OpDeletePlayerUI, game.OpScore:
		// "new player in game" and the roster come with MISSION_INIT;
		// elsewhere they are about other players.
		return withMissionInit
	}
	return false
}

// pacedKind reports whether messages of this kind follow the server's
// clock whatever datagram they travel in: keepalives and StateUpdates.
func pacedKind(typ dissect.TransportType, payload []byte) bool {
	return typ == dissect.TypePeerInfo || (typ == dissect.TypeData && len(payload) > 0 && game.Opcode(payload[0]) == game.OpStateUpdate)
}

func newAdaptive(v *verifier) *adaptive {
	a := &adaptive{v: v, rx: transport.NewConn(0xFF, transport.Options{}), acker: transport.NewConn(0xFF, transport.Options{}),
		captured: map[ackKey]bool{}, received: map[ackKey]bool{}, owed: map[ackKey]bool{},
		requested: map[byte]bool{}, answered: map[byte]bool{}, responses: map[byte][]byte{}, gaveUp: map[string]bool{},
		replaced: map[uint16]bool{}, dec1: game.NewDecoder(), dec2: game.NewDecoder(), lastSent: -1}
	a.prepare()
	return a
}

func (v *verifier) runAdaptive(ctx context.Context) error {
	a := newAdaptive(v)
	steps := v.script.Steps
	silent := 0
	for i := 0; i < len(steps); i++ {
		d := &steps[i]
		if !d.IsClient() {
			continue
		}
		var floor time.Time
		if v.opts.Timing == TimingCapture {
			floor = v.start.Add(d.At)
		}
		if a.win == 0 {
			_ = sleepCtx(ctx, time.Until(floor))
		} else {
			a.needFor(d)
			if err := a.await(ctx, floor); err != nil {
				return err
			}
			for _, e := range a.need {
				if !e.done {
					a.gaveUp[e.kind] = true
				}
			}
			mark, before := len(v.res.Steps), silent
			if err := a.closeWindow(&silent); err != nil {
				return err
			}
			v.noteSilence(mark, before, silent, i)
			if silent >= v.opts.GiveUp {
				a.abandon(i, fmt.Sprintf("no answer at all to %d client datagrams in a row (the last was capture frame %d)",
					silent, lastClientFrame(steps, i)))
				return nil
			}
		}
		if err := a.send(i); err != nil {
			return err
		}
		a.sentAt = time.Now()
		a.win++
		a.setDue()
	}
	var floor time.Time
	if v.opts.Timing == TimingCapture {
		// Paced messages after the last client datagram: until the last
		// one's offset and the answer timeout.
		for _, e := range a.exp {
			if !e.done && e.paced {
				if t := v.start.Add(steps[e.step].At).Add(v.opts.AnswerTimeout); t.After(floor) {
					floor = t
				}
			}
		}
	}
	if err := a.await(ctx, floor); err != nil {
		return err
	}
	if err := a.closeWindow(&silent); err != nil {
		return err
	}
	return a.linger(ctx)
}

// linger keeps a session the capture does not disconnect receiving and
// ACKing until every session's script has been played, and AnswerTimeout
// after: a client still connected hears the others leave, and a server
// running late is still answered, so that the live exchange holds what the
// server's own capture of the run holds.
func (a *adaptive) linger(ctx context.Context) error {
	v := a.v
	if v.scripted == nil {
		return nil
	}
	v.scripted()
	if _, leave := controlTimes(v.script); !leave.IsZero() || a.v.res.Abandoned != "" {
		return nil
	}
	var until time.Time
	return v.awaitAnswers(ctx, time.Time{}, func() (bool, time.Time) {
		if until.IsZero() {
			select {
			case <-v.allScripted:
				until = time.Now().Add(v.opts.AnswerTimeout)
			default:
				return true, time.Now().Add(100 * time.Millisecond)
			}
		}
		return true, until
	}, a.receive)
}
