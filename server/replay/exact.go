package replay

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/bcwire/bcwire/dissect/game"
)

// Exact mode: every captured server datagram is awaited whole, in the
// window that follows the client datagram before it.

// expected is one captured server datagram awaited in a window.
type expected struct {
	step  int
	wire  []byte // rewritten for the live client
	plain []byte
	due   time.Time
	done  bool
}

// window is the set of server datagrams expected after one client
// datagram, and what arrived meanwhile.
type window struct {
	exp      []*expected
	extra    [][]byte // received datagrams that matched nothing yet (wire)
	got      int      // datagrams received in this window
	progress time.Time
	results  []Step
}

func (w *window) complete() bool {
	for _, e := range w.exp {
		if !e.done {
			return false
		}
	}
	return true
}

func (w *window) open() int {
	n := 0
	for _, e := range w.exp {
		if !e.done {
			n++
		}
	}
	return n
}

func (v *verifier) runExact(ctx context.Context) error {
	steps := v.script.Steps
	// Each side decodes with the ship classes of its own ObjCreates.
	v.liveDec, v.capDec = game.NewDecoder(), game.NewDecoder()
	for i := range steps {
		dir := game.ServerToClient
		if steps[i].IsClient() {
			dir = game.ClientToServer
		}
		learnDatagram(v.capDec, steps[i].Plain, dir)
	}
	w := &window{progress: time.Now()}
	silent := 0
	for i := 0; i < len(steps); i++ {
		d := &steps[i]
		if !d.IsClient() {
			e := &expected{step: i, due: time.Now()}
			e.wire, e.plain, _ = Rewrite(d, v.local)
			if v.opts.Timing == TimingCapture {
				e.due = v.start.Add(d.At)
			}
			w.exp = append(w.exp, e)
			continue
		}
		var floor time.Time
		if v.opts.Timing == TimingCapture {
			floor = v.start.Add(d.At)
		}
		if v.res.Sent == 0 {
			// Server datagrams before the first client datagram (a session
			// already under way when the capture started) can only come
			// once the server has heard from us: they join the first window.
			_ = sleepCtx(ctx, time.Until(floor))
		} else {
			if err := v.await(ctx, w, floor); err != nil {
				return err
			}
			mark, before := len(v.res.Steps), silent
			if err := v.closeWindow(w, &silent); err != nil {
				return err
			}
			v.noteSilence(mark, before, silent, i)
			if silent >= v.opts.GiveUp {
				v.abandon(i, fmt.Sprintf("no answer at all to %d client datagrams in a row (the last was capture frame %d)",
					silent, lastClientFrame(steps, i)))
				return nil
			}
			w = &window{}
		}
		wire, plain, changed := Rewrite(d, v.local)
		learnDatagram(v.liveDec, plain, game.ClientToServer)
		v.observe(v.local, v.opts.Target, wire) // stamped before it can be answered
		if _, err := v.pc.WriteTo(wire, v.target); err != nil {
			return fmt.Errorf("session %d: sending frame %d to %s: %w", v.script.Index+1, d.Frame, v.opts.Target, err)
		}
		st := Step{Step: i, Frame: d.Frame, Dir: "C->S", Status: StatusSent, AtMS: v.since()}
		for _, c := range changed {
			st.Rewritten = append(st.Rewritten, c.String())
		}
		v.res.Steps = append(v.res.Steps, st)
		v.res.Sent++
		w.progress = time.Now()
	}
	if err := v.await(ctx, w, time.Time{}); err != nil {
		return err
	}
	return v.closeWindow(w, &silent)
}

// abandon marks every step from i on as not played: client steps not
// sent, server steps not reached.
func (v *verifier) abandon(i int, why string) {
	v.res.Abandoned = why
	for ; i < len(v.script.Steps); i++ {
		d := &v.script.Steps[i]
		if d.IsClient() {
			v.res.NotSent++
			continue
		}
		v.res.Steps = append(v.res.Steps, Step{Step: i, Frame: d.Frame, Dir: "S->C", Status: StatusNotReached,
			Detail: "session abandoned"})
	}
	if v.opts.Logf != nil {
		v.opts.Logf("session %d: abandoned: %s", v.script.Index+1, why)
	}
}

// await receives datagrams into w until every expected datagram has
// arrived (or the answer timeout passed) and floor is reached.
func (v *verifier) await(ctx context.Context, w *window, floor time.Time) error {
	return v.awaitAnswers(ctx, floor, func() (bool, time.Time) {
		if w.complete() {
			return false, time.Time{}
		}
		// Wait for the latest due time, then the timeout after the last progress.
		last := w.progress
		for _, e := range w.exp {
			if !e.done && e.due.After(last) {
				last = e.due
			}
		}
		deadline := last.Add(v.opts.AnswerTimeout)
		// As many datagrams arrived as were awaited: a short grace for
		// stragglers, then compare what is there.
		if len(w.extra) >= w.open() {
			deadline = minTime(deadline, w.progress.Add(min(v.opts.AnswerTimeout, 20*time.Millisecond)))
		}
		return true, deadline
	}, func(data []byte) error {
		v.match(w, data)
		return nil
	})
}

// match places one received datagram in the window: identical to an
// awaited datagram, else equivalent to one, else held for closeWindow.
func (v *verifier) match(w *window, data []byte) {
	w.got++
	w.progress = time.Now()
	plain := decryptIfNeeded(data)
	learnDatagram(v.liveDec, plain, game.ServerToClient)
	for _, e := range w.exp {
		if !e.done && bytes.Equal(e.wire, data) {
			e.done = true
			w.results = append(w.results, Step{Step: e.step, Frame: v.script.Steps[e.step].Frame, Dir: "S->C",
				Status: StatusIdentical, AtMS: v.since()})
			return
		}
	}
	for _, e := range w.exp {
		if e.done {
			continue
		}
		if ok, _ := compareDatagrams(plain, e.plain, game.ServerToClient, v.opts.Comparer); ok {
			e.done = true
			w.results = append(w.results, Step{Step: e.step, Frame: v.script.Steps[e.step].Frame, Dir: "S->C",
				Status: StatusEquivalent, AtMS: v.since(), Expected: describeWith(e.plain, game.ServerToClient, v.capDec),
				Got: describeWith(plain, game.ServerToClient, v.liveDec)})
			return
		}
	}
	w.extra = append(w.extra, data)
}

// closeWindow pairs what is still awaited with what arrived unmatched, in
// order: pairs are different, the rest missing or unexpected.
func (v *verifier) closeWindow(w *window, silent *int) error {
	if len(w.exp) > 0 && w.got == 0 {
		*silent++
		if v.first && v.received == 0 {
			e := w.exp[0]
			return fmt.Errorf("%w: no answer from %s within %s to session %d's first datagrams (capture frame %d is the first answer expected): is a Bridge Commander server listening there?",
				ErrUnreachable, v.opts.Target, v.opts.AnswerTimeout, v.script.Index+1, v.script.Steps[e.step].Frame)
		}
	} else if w.got > 0 {
		*silent = 0
	}
	v.startedOnce()
	at := v.since()
	k := 0
	for _, e := range w.exp {
		if e.done {
			continue
		}
		d := &v.script.Steps[e.step]
		st := Step{Step: e.step, Frame: d.Frame, Dir: "S->C", AtMS: at, Expected: describeWith(e.plain, game.ServerToClient, v.capDec)}
		if k < len(w.extra) {
			got := decryptIfNeeded(w.extra[k])
			k++
			st.Got = describeWith(got, game.ServerToClient, v.liveDec)
			st.Status, st.Detail, st.Config = judgeDatagrams(got, e.plain, game.ServerToClient, v.opts.Comparer).status()
		} else {
			st.Status = StatusMissing
			st.Detail = "not received"
		}
		w.results = append(w.results, st)
	}
	sort.SliceStable(w.results, func(i, j int) bool { return w.results[i].Step < w.results[j].Step })
	for ; k < len(w.extra); k++ {
		w.results = append(w.results, Step{Step: -1, Dir: "S->C", Status: StatusUnexpected, AtMS: at,
			Got: describeWith(decryptIfNeeded(w.extra[k]), game.ServerToClient, v.liveDec)})
	}
	v.res.Steps = append(v.res.Steps, w.results...)
	return nil
}
