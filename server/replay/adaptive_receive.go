package replay

// Adaptive mode, the server side: what arrives, matched against the
// captured server messages of the window, and the steps it records.

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
)

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
			a.v.observe(a.v.local, a.v.opts.Target, w)
			if _, err := a.v.pc.WriteTo(w, a.v.target); err != nil {
				return err
			}
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
