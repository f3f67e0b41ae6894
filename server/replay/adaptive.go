package replay

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"strings"
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
	return a.closeWindow(&silent)
}

// needFor lists the paced messages that client datagram d ACKs in the
// capture and that are still awaited.
func (a *adaptive) needFor(d *Datagram) {
	a.need = a.need[:0]
	if d.GameSpy {
		return
	}
	var dg dissect.Datagram
	if dg.Parse(d.Plain) != nil {
		return
	}
	for j := range dg.Messages {
		m := &dg.Messages[j]
		if m.Type != dissect.TypeAck {
			continue
		}
		k := ackKeyOfAck(m)
		for _, e := range a.exp {
			if !e.done && e.paced && e.rel && e.key == k && !a.gaveUp[e.kind] {
				a.need = append(a.need, e)
				break
			}
		}
	}
}

// prepare lists the captured server messages and the captured client's
// ACKs and checksum responses.
func (a *adaptive) prepare() {
	steps := a.v.script.Steps
	seenRel := map[ackKey]bool{}
	frags := map[uint16][][]byte{} // server fragments by sequence number
	fragTotal := map[uint16]int{}
	win := 0
	for i := range steps {
		d := &steps[i]
		if d.GameSpy {
			if d.IsClient() {
				win++
			} else {
				a.exp = append(a.exp, &expMsg{step: i, win: win, typ: 0xFF, payload: d.Plain, paced: !d.Answer, kind: "gamespy"})
			}
			continue
		}
		_, plain, _ := Rewrite(d, a.v.local)
		var dg dissect.Datagram
		_ = dg.Parse(plain)
		if d.IsClient() {
			win++
			for j := range dg.Messages {
				m := &dg.Messages[j]
				switch {
				case m.Type == dissect.TypeAck:
					a.captured[ackKeyOfAck(m)] = true
				case m.Type == dissect.TypeData && !m.Fragment:
					learn(a.dec2, m.Payload, game.ClientToServer)
				}
				switch {
				case m.Type == dissect.TypeData && len(m.Payload) > 1 && m.Payload[0] == byte(game.OpChecksumResponse):
					if _, ok := a.responses[m.Payload[1]]; !ok {
						a.responses[m.Payload[1]] = append([]byte(nil), m.Payload...)
					}
				}
			}
			continue
		}
		withMI := false
		for j := range dg.Messages {
			if m := &dg.Messages[j]; m.Type == dissect.TypeData && len(m.Payload) > 0 && game.Opcode(m.Payload[0]) == game.OpMissionInit {
				withMI = true
			}
		}
		for j := range dg.Messages {
			m := &dg.Messages[j]
			if m.Type == dissect.TypeAck {
				continue
			}
			if m.Reliable {
				k := ackKeyOf(m)
				if seenRel[k] {
					continue // the server sending it again
				}
				seenRel[k] = true
			}
			payload := m.Payload
			if m.Fragment {
				if payload = collect(frags, fragTotal, m); payload == nil {
					continue
				}
			}
			if m.Type == dissect.TypeData {
				learn(a.dec2, payload, game.ServerToClient)
			}
			a.exp = append(a.exp, &expMsg{step: i, win: win, typ: m.Type, seq: m.Seq, payload: append([]byte(nil), payload...),
				paced: !d.Answer || !answerKind(m.Type, payload, withMI), kind: kindOf(m.Type, payload),
				key: ackKeyOf(m), rel: m.Reliable && !m.Fragment,
				clock: pacedKind(m.Type, payload) || (m.Type == dissect.TypeData && a.v.others[string(payload)])})
		}
	}
}

// collect adds a fragment to its set and returns the whole message once
// every fragment is there.
func collect(sets map[uint16][][]byte, totals map[uint16]int, m *dissect.Message) []byte {
	set := sets[m.Seq]
	for len(set) <= int(m.FragIndex) {
		set = append(set, nil)
	}
	if set[m.FragIndex] == nil {
		set[m.FragIndex] = append([]byte{}, m.Payload...)
	}
	sets[m.Seq] = set
	if m.HasTotal() {
		totals[m.Seq] = int(m.FragTotal)
	}
	n := totals[m.Seq]
	if n == 0 || len(set) < n {
		return nil
	}
	var out []byte
	for _, p := range set[:n] {
		if p == nil {
			return nil
		}
		out = append(out, p...)
	}
	delete(sets, m.Seq)
	return out
}

// within is the awaited messages of windows lo to hi.
func (a *adaptive) within(lo, hi int) []*expMsg {
	i := sort.Search(len(a.exp), func(i int) bool { return a.exp[i].win >= lo })
	j := sort.Search(len(a.exp), func(i int) bool { return a.exp[i].win > hi })
	if i >= j {
		return nil
	}
	return a.exp[i:j]
}

// setDue gives the messages of the window just opened their due time.
func (a *adaptive) setDue() {
	for _, e := range a.within(a.win, a.win) {
		if e.due.IsZero() {
			e.due = time.Now()
			if a.v.opts.Timing == TimingCapture {
				e.due = a.v.start.Add(a.v.script.Steps[e.step].At)
			}
		}
	}
}

// send sends captured client datagram i, adapted.
func (a *adaptive) send(i int) error {
	v := a.v
	d := &v.script.Steps[i]
	wire, plain, changed := Rewrite(d, v.local)
	st := Step{Step: i, Frame: d.Frame, Dir: "C->S", Status: StatusSent}
	var extra [][]byte // datagrams sent after it: fragments of a manifest's response
	for _, c := range changed {
		st.Rewritten = append(st.Rewritten, c.String())
	}
	if !d.GameSpy {
		var dg dissect.Datagram
		if err := dg.Parse(plain); err == nil {
			out := dissect.Datagram{Peer: dg.Peer}
			if a.haveSlot && dg.Peer != 0xFF {
				out.Peer = a.slot
			}
			for j := range dg.Messages {
				if dg.Messages[j].Type == dissect.TypeDisconnect {
					a.waitOthers()
					break
				}
			}
			held := 0
			var later []dissect.Message // fragments that go in datagrams of their own
			for j := range dg.Messages {
				m := dg.Messages[j]
				if m.Type == dissect.TypeAck {
					k := ackKeyOfAck(&m)
					if !a.received[k] {
						a.owed[k] = true
						held++
						continue
					}
				}
				if m.Type == dissect.TypeData && m.Fragment && a.replaced[m.Seq] {
					continue // the rest of a checksum response sent whole from the manifest
				}
				if m.Type == dissect.TypeData && len(m.Payload) > 1 && m.Payload[0] == byte(game.OpChecksumResponse) &&
					(!m.Fragment || m.FragIndex == 0) {
					var p []byte
					ok := false
					if m.Fragment {
						if p, ok = a.fromManifest(m.Payload[1], &st); ok {
							a.replaced[m.Seq] = true
						}
					} else {
						p, ok = a.checksumAnswer(m.Payload, &st), true
					}
					if ok {
						// Whole when it fits; else its first fragment here
						// and each other in a datagram of its own.
						frags := fragmentsOf(m, p)
						out.Messages = append(out.Messages, frags[0])
						later = append(later, frags[1:]...)
						continue
					}
				}
				out.Messages = append(out.Messages, m)
			}
			if held > 0 {
				st.Detail = fmt.Sprintf("%d captured ACKs held back: their messages have not arrived", held)
			}
			if len(out.Messages) == 0 {
				st.Status = "held"
				v.res.Steps = append(v.res.Steps, st)
				return nil
			}
			for j := range out.Messages {
				if m := &out.Messages[j]; m.Type == dissect.TypeData && !m.Fragment {
					learn(a.dec1, m.Payload, game.ClientToServer)
				}
			}
			p := out.Append(nil)
			if !bytes.Equal(p, plain) {
				wire = make([]byte, len(p))
				dissect.Encrypt(wire, p)
			}
			for _, f := range later {
				one := dissect.Datagram{Peer: out.Peer, Messages: []dissect.Message{f}}
				q := one.Append(nil)
				w := make([]byte, len(q))
				dissect.Encrypt(w, q)
				extra = append(extra, w)
			}
		}
	}
	for _, w := range append([][]byte{wire}, extra...) {
		if _, err := v.pc.WriteTo(w, v.target); err != nil {
			return fmt.Errorf("session %d: sending frame %d to %s: %w", v.script.Index+1, d.Frame, v.opts.Target, err)
		}
		v.observe(v.local, v.opts.Target, w)
	}
	st.AtMS = v.since()
	v.res.Steps = append(v.res.Steps, st)
	v.res.Sent++
	a.lastSent = i
	return nil
}

// waitOthers holds the session's disconnect until the sessions that
// connected before it in the capture have their slots, or have reached
// their own disconnect, or the run's context is done.
func (a *adaptive) waitOthers() {
	if a.v.slotted != nil {
		a.v.slotted() // no slot will come after this: never wait on each other
	}
	for _, ch := range a.v.beforeLeave {
		select {
		case <-ch:
		case <-a.v.done:
			return
		}
	}
}

// checksumAnswer is the checksum response to send in place of the
// captured one: the same when the server asked for that round, else the
// captured response to a round it asked for and has not had.
func (a *adaptive) checksumAnswer(p []byte, st *Step) []byte {
	if r, ok := a.fromManifest(p[1], st); ok {
		return r
	}
	round := p[1]
	if a.requested[round] || len(a.requested) == 0 {
		a.answered[round] = true
		return p
	}
	for r := range a.requested {
		if !a.answered[r] {
			if resp, ok := a.responses[r]; ok {
				a.answered[r] = true
				st.Detail = fmt.Sprintf("checksum round %d asked for instead of round %d: sent its captured response", r, round)
				return resp
			}
		}
	}
	return p
}

// fromManifest is the manifest's response to send in place of the
// captured response to round: to that round when the server asked for it
// (or has asked for nothing yet), else to a round it asked for and has not
// had. ok is false without a manifest or when it has no such round.
func (a *adaptive) fromManifest(round byte, st *Step) (p []byte, ok bool) {
	mf := a.v.opts.Manifest
	if mf == nil {
		return nil, false
	}
	r := round
	if !a.requested[r] && len(a.requested) > 0 {
		rounds := make([]int, 0, len(a.requested))
		for q := range a.requested {
			if !a.answered[q] {
				rounds = append(rounds, int(q))
			}
		}
		if len(rounds) == 0 {
			return nil, false
		}
		sort.Ints(rounds)
		r = byte(rounds[0])
	}
	p, ok = mf[game.ChecksumRound(r)]
	if !ok {
		return nil, false
	}
	a.answered[r] = true
	if r != round {
		st.Detail = fmt.Sprintf("checksum round %d asked for instead of round %d: sent the manifest's response", r, round)
	} else {
		st.Detail = fmt.Sprintf("checksum round %d: sent the manifest's response", r)
	}
	return p, true
}

// fragmentsOf is payload p sent with the sequence number of the captured
// fragment first: whole when it fits, else split as stock fragments are.
func fragmentsOf(first dissect.Message, p []byte) []dissect.Message {
	const maxWhole, fragSize = 480 - 5, 400 // transport.Options' defaults
	if len(p) <= maxWhole {
		m := first
		m.Fragment, m.FragIndex, m.FragTotal = false, 0, 0
		m.Payload = p
		return []dissect.Message{m}
	}
	n := (len(p) + fragSize - 1) / fragSize
	out := make([]dissect.Message, 0, n)
	for i := 0; i < n; i++ {
		m := first
		m.Fragment, m.FragIndex, m.FragTotal = true, uint8(i), 0
		if i == 0 {
			m.FragTotal = uint8(n)
		}
		m.Payload = p[i*fragSize : min(len(p), (i+1)*fragSize)]
		out = append(out, m)
	}
	return out
}

// await receives until the open window's messages have all arrived (or
// the answer timeout passed) and floor is reached.
func (a *adaptive) await(ctx context.Context, floor time.Time) error {
	v := a.v
	progress := time.Now()
	return v.awaitAnswers(ctx, floor, func() (bool, time.Time) {
		complete := true
		last := progress
		if a.lastAnswer.After(last) {
			last = a.lastAnswer // only awaited answers extend the wait
		}
		for _, e := range a.within(a.win, a.win) {
			if !e.done && !e.paced {
				complete = false
				if e.due.After(last) {
					last = e.due
				}
			}
		}
		for _, e := range a.need {
			if !e.done {
				complete = false
				if a.sentAt.After(last) {
					last = a.sentAt
				}
			}
		}
		return !complete, last.Add(v.opts.AnswerTimeout)
	}, a.receive)
}

// receive takes one datagram from the server apart.
func (a *adaptive) receive(data []byte) error {
	if dissect.IsGameSpy(data) {
		a.got++
		a.match(extraMsg{typ: 0xFF, payload: data})
		return nil
	}
	plain := make([]byte, len(data))
	dissect.Decrypt(plain, data)
	var dg dissect.Datagram
	_ = dg.Parse(plain)
	var ackNow []dissect.Message
	for i := range dg.Messages {
		m := &dg.Messages[i]
		if m.Type == dissect.TypeAck || !m.Reliable {
			continue
		}
		k := ackKeyOf(m)
		a.received[k] = true
		if a.owed[k] || !a.captured[k] {
			delete(a.owed, k)
			ackNow = append(ackNow, *m)
		}
	}
	ds, _ := a.rx.Receive(plain, 0)
	a.rx.Flush(0) // its own ACKs are not sent: the captured ones are
	for _, d := range ds {
		a.got++
		if d.Type == dissect.TypeData {
			learn(a.dec1, d.Payload, game.ServerToClient)
			if a.v.others[string(d.Payload)] {
				a.v.res.Relayed++
			}
		}
		switch {
		case (d.Type == dissect.TypeConnectAck || d.Type == dissect.TypeConnect) && len(d.Payload) == 1:
			a.slot, a.haveSlot = d.Payload[0], true
			if a.v.slotted != nil {
				a.v.slotted()
			}
		case d.Type == dissect.TypeData && len(d.Payload) > 1 && d.Payload[0] == byte(game.OpChecksumRequest):
			a.requested[d.Payload[1]] = true
		case d.Type == dissect.TypeBoot || (d.Type == dissect.TypeData && len(d.Payload) > 0 &&
			(game.Opcode(d.Payload[0]) == game.OpVersionMismatch || game.Opcode(d.Payload[0]) == game.OpSystemChecksumFail)):
			a.refused(d.Type, d.Seq, d.Payload)
		}
		a.match(extraMsg{typ: d.Type, seq: d.Seq, payload: d.Payload})
	}
	if len(ackNow) > 0 {
		a.acker.LocalID = 0xFF
		if a.haveSlot {
			a.acker.LocalID = a.slot
		}
		for i := range ackNow {
			a.acker.Ack(&ackNow[i])
		}
		for _, p := range a.acker.Flush(0) {
			w := make([]byte, len(p))
			dissect.Encrypt(w, p)
			if _, err := a.v.pc.WriteTo(w, a.v.target); err != nil {
				return err
			}
			a.v.observe(a.v.local, a.v.opts.Target, w)
		}
	}
	return nil
}

// refused notes the server's first refusal of the client: it opens the
// session's report, naming the client step it answered.
func (a *adaptive) refused(typ dissect.TransportType, seq uint16, payload []byte) {
	v := a.v
	if v.refusal != nil {
		return
	}
	after := "before the client sent anything"
	if i := a.lastSent; i >= 0 {
		d := &v.script.Steps[i]
		after = fmt.Sprintf("after frame %d (%s)", d.Frame, clientSummary(d))
	}
	got := msgLines(typ, seq, payload, a.dec1)
	v.refusal = &Step{Step: -1, Dir: "S->C", Status: StatusRefused, AtMS: v.since(), Got: got,
		Detail: fmt.Sprintf("the server refused the client %s: %s", after, strings.TrimSpace(got[0]))}
	v.refusalMark = len(v.res.Steps)
}

// match pairs an arriving message with an awaited one: identical (same
// bytes and number), equivalent (same decoded content), else held.
func (a *adaptive) match(m extraMsg) {
	var equiv *expMsg
	kind := kindOf(m.typ, m.payload)
	near := a.within(a.win-2, a.win+2)
	// The messages awaited around now, then the paced ones of the same
	// kind, oldest first.
	cands := make([]*expMsg, 0, len(near))
	for _, e := range near {
		if !e.done && e.typ == m.typ {
			cands = append(cands, e)
		}
	}
	for _, e := range a.exp {
		if !e.done && e.paced && e.kind == kind && (e.win < a.win-2 || e.win > a.win+2) {
			cands = append(cands, e)
		}
	}
	for _, e := range cands {
		if bytes.Equal(e.payload, m.payload) && e.seq == m.seq {
			a.record(e, StatusIdentical, m, "")
			return
		}
	}
	for _, e := range cands {
		if a.equivalent(m, e) {
			equiv = e
			break
		}
	}
	if equiv != nil {
		detail := ""
		if equiv.seq != m.seq {
			detail = fmt.Sprintf("sequence number %d, captured %d", m.seq, equiv.seq)
		}
		a.record(equiv, StatusEquivalent, m, detail)
		return
	}
	m.win, m.at = a.win, time.Now()
	a.extra = append(a.extra, m)
}

// equivalent reports whether m says what e says.
func (a *adaptive) equivalent(m extraMsg, e *expMsg) bool {
	if m.typ != e.typ {
		return false
	}
	if bytes.Equal(m.payload, e.payload) {
		return true
	}
	if m.typ == 0xFF {
		ok, _ := compareGameSpy(m.payload, e.payload, a.v.opts.Comparer)
		return ok
	}
	ok, _ := comparePayloads(m.typ, false, m.payload, e.payload, game.ServerToClient, a.v.opts.Comparer, a.dec1, a.dec2)
	return ok
}

// learn decodes a game message only for what dec learns from it: the ship
// classes of ObjCreate messages.
func learn(dec *game.Decoder, payload []byte, dir game.Direction) {
	if len(payload) > 0 && (game.Opcode(payload[0]) == game.OpObjCreate || game.Opcode(payload[0]) == game.OpObjCreateTeam) {
		_ = dec.Decode(payload, dir)
	}
}

// msgLines is the one-line form of a server message, decoded with dec.
func msgLines(typ dissect.TransportType, seq uint16, payload []byte, dec *game.Decoder) []string {
	if typ == 0xFF {
		return []string{describeGameSpy(payload)}
	}
	m := dissect.Message{Type: typ, Seq: seq, Payload: payload}
	if typ != dissect.TypeData {
		c, err := dissect.ParseControl(&m)
		if err != nil {
			return []string{fmt.Sprintf("%s seq=%d raw % X", typ, seq, payload)}
		}
		return []string{fmt.Sprintf("%s seq=%d  %s", typ, seq, c.String())}
	}
	return []string{fmt.Sprintf("%s seq=%d  %s", typ, seq, gameString(payload, game.ServerToClient, dec))}
}

func (a *adaptive) record(e *expMsg, status string, m extraMsg, detail string) {
	e.done = true
	if !e.paced {
		a.lastAnswer = time.Now()
	}
	st := Step{Step: e.step, Frame: a.v.script.Steps[e.step].Frame, Dir: "S->C", Status: status, AtMS: a.v.since(), Detail: detail}
	if status != StatusIdentical {
		st.Expected = msgLines(e.typ, e.seq, e.payload, a.dec2)
		st.Got = msgLines(m.typ, m.seq, m.payload, a.dec1)
	}
	a.v.res.Steps = append(a.v.res.Steps, st)
}

// closeWindow settles what can be settled now. Answers awaited two client
// datagrams ago (all of them after the last one), so that a server that
// sends later than captured is still matched; paced messages once their
// captured offset plus the answer timeout has passed (capture timing) or
// at the session's end. Each is paired with a message of its kind that
// arrived and matched nothing (different), else it is missing (not due:
// paced, asap timing). Messages that matched nothing and are as old are
// unexpected.
func (a *adaptive) closeWindow(silent *int) error {
	v := a.v
	expectedHere := false
	for _, e := range a.within(a.win, a.win) {
		if !e.paced {
			expectedHere = true
		}
	}
	if expectedHere && a.got == 0 {
		*silent++
		if v.first && v.received == 0 {
			return fmt.Errorf("%w: no answer from %s within %s to session %d's first datagrams: is a Bridge Commander server listening there?",
				ErrUnreachable, v.opts.Target, v.opts.AnswerTimeout, v.script.Index+1)
		}
	} else if a.got > 0 {
		*silent = 0
	}
	a.got = 0
	v.startedOnce()
	final := a.final()
	now := time.Now()
	at := v.since()
	capture := v.opts.Timing == TimingCapture
	for _, e := range a.exp {
		if e.done {
			continue
		}
		switch {
		case final:
		case e.paced && capture:
			if now.Before(v.start.Add(v.script.Steps[e.step].At).Add(v.opts.AnswerTimeout)) {
				continue
			}
		case e.paced:
			continue
		case e.win > a.win-2:
			continue
		}
		e.done = true
		st := Step{Step: e.step, Frame: v.script.Steps[e.step].Frame, Dir: "S->C", AtMS: at, Expected: msgLines(e.typ, e.seq, e.payload, a.dec2)}
		if j := a.extraOf(e.kind); j >= 0 {
			m := a.extra[j]
			a.extra = append(a.extra[:j], a.extra[j+1:]...)
			st.Got = msgLines(m.typ, m.seq, m.payload, a.dec1)
			var vd verdict
			if m.typ == 0xFF {
				vd = judgeGameSpyBytes(m.payload, e.payload, v.opts.Comparer)
			} else {
				vd = judgePayloads(m.typ, m.payload, e.payload, game.ServerToClient, v.opts.Comparer, a.dec1, a.dec2)
			}
			st.Status, st.Detail, st.Config = vd.status()
		} else if e.clock && !capture {
			st.Status = StatusNotDue
			st.Detail = "sent on the server's clock or unprompted; the session ended first (asap timing)"
		} else {
			st.Status = StatusMissing
			st.Detail = "not received"
		}
		v.res.Steps = append(v.res.Steps, st)
	}
	kept := a.extra[:0]
	for _, m := range a.extra {
		old := m.win <= a.win-2 && (!capture || now.Sub(m.at) >= v.opts.AnswerTimeout)
		if final || (old && !a.awaitsKind(m)) {
			v.res.Steps = append(v.res.Steps, Step{Step: -1, Dir: "S->C", Status: StatusUnexpected, AtMS: at, Got: msgLines(m.typ, m.seq, m.payload, a.dec1)})
			continue
		}
		kept = append(kept, m)
	}
	a.extra = kept
	return nil
}

// extraOf is the index of the oldest unmatched arrival of kind, or -1.
func (a *adaptive) extraOf(kind string) int {
	for j, m := range a.extra {
		if kindOf(m.typ, m.payload) == kind {
			return j
		}
	}
	return -1
}

// awaitsKind reports whether a paced message of m's kind is still
// outstanding: m waits to be paired with it when it settles (at its
// captured offset plus the answer timeout, or at the end with asap
// timing).
func (a *adaptive) awaitsKind(m extraMsg) bool {
	k := kindOf(m.typ, m.payload)
	for _, e := range a.exp {
		if !e.done && e.paced && e.kind == k {
			return true
		}
	}
	return false
}

// final reports whether every client datagram has been sent.
func (a *adaptive) final() bool { return a.win >= a.v.script.Clients() }

// abandon stops the session at client step i: what is still awaited is
// not reached, the client datagrams left are not sent.
func (a *adaptive) abandon(i int, why string) {
	v := a.v
	v.res.Abandoned = why
	for ; i < len(v.script.Steps); i++ {
		if v.script.Steps[i].IsClient() {
			v.res.NotSent++
		}
	}
	for _, e := range a.exp {
		if !e.done {
			e.done = true
			v.res.Steps = append(v.res.Steps, Step{Step: e.step, Frame: v.script.Steps[e.step].Frame, Dir: "S->C",
				Status: StatusNotReached, Detail: "session abandoned", Expected: msgLines(e.typ, e.seq, e.payload, a.dec2)})
		}
	}
	if v.opts.Logf != nil {
		v.opts.Logf("session %d: abandoned: %s", v.script.Index+1, why)
	}
}
