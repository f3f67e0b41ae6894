package replay

// Adaptive mode, the client side: which captured datagrams are due, and
// sending them with the ACKs and checksum answers the server has earned.

import (
	"bytes"
	"fmt"
	"sort"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
)

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
		v.observe(v.local, v.opts.Target, w) // stamped before it can be answered
		if _, err := v.pc.WriteTo(w, v.target); err != nil {
			return fmt.Errorf("session %d: sending frame %d to %s: %w", v.script.Index+1, d.Frame, v.opts.Target, err)
		}
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
