package report

import (
	"runtime"
	"sync"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
)

// Formatting on several goroutines (DecodePrinter.SetWorkers).
//
// A record is valid only while it is printed: the tracker reuses its
// message storage and its bytes alias buffers that are read into again.
// Print therefore copies each record it can into a batch (the record, its
// transport message, control and game message, the time column's state)
// and workers format whole batches into their own buffers, which are
// written in the order the batches were filled: the output is byte for
// byte the serial printer's. A record whose parts cannot be copied cheaply
// (any game message but a StateUpdate or an event, damage, GameSpy, a hex
// dump) is formatted at once, on the caller's goroutine, into the batch;
// those are a few in a hundred in a game.
//
// A StateUpdate usually comes undecoded (flow.Record.Lazy: decode asks
// the Tracker for that when nothing before printing needs it decoded):
// the batch keeps its bytes and the worker decodes it with its own
// flow.LazyDecoder before formatting it. Decoding it there costs the
// workers what decoding and copying it cost the caller's goroutine, which
// was decode's critical path: on battle x100, decode --json's decoding
// goroutine went from 0.32 to 0.17 s of CPU, and all of its instructions
// from 7.32 G to 7.00 G (cachegrind).

// batchRecords is the number of records a batch holds, and batchesExtra
// the batches there are beyond one per worker. A hand-over costs a
// channel send and receive and, as often as not, waking a goroutine; on
// two cores those wake-ups held decode's wall time back. Few large
// batches beat many small ones: against 32 records and workers+2
// batches, 128 records and workers+1 batches took 0.77-0.88 of the wall
// time of decode (text and --json, battle x100 and OpenBC battle x40,
// medians of 7 pairs, two rounds), within an RSS budget of 24 MiB:
// 23.2-23.9 MiB on battle x200 (text), against 22.1-22.5; 128 records
// with workers+2 batches peaked at 24.5. Since a slot keeps a Lazy
// StateUpdate's bytes rather than a copy of the decoded message, workers+2
// batches fit (battle x200, 2 runs each: -V 21.7-22.4 MiB, text 21.2-21.5,
// --json 19.7-20.5), and the extra batch keeps a worker busy while the
// oldest batch, which the next hand-over waits for, is still being
// formatted: decode --json on battle x100 took 0.947 of the wall time with
// workers+1 batches (median of 19 pairs taken when the machine was at
// least 90% idle, 00:13-00:27 UTC; CPU 0.97). Two more batches (workers+4)
// let the decoding goroutine run further ahead of the oldest batch, and
// with the yield in formatBatches took decode --json on battle x100 to
// 0.85-0.89 of the wall time (2026-11-27, 12-16 pairs with every other
// process stopped); their memory is why decode lowers the collector's
// target (decodecmd's gcPercent).
const (
	batchRecords = 128
	batchesExtra = 4 // batches in all: workers + batchesExtra
)

// pendingRecord is a record copied for a worker, or one formatted at once.
type pendingRecord struct {
	rec   flow.Record
	msg   dissect.Message
	ctl   dissect.Control
	game  game.Result
	su    game.StateUpdate
	ns    dissect.NonStock
	clock Clock
	// file and jsonFile are the printer's at the time (SetFile replaces
	// them; it never changes their bytes); gameJSON is a copy.
	file, jsonFile, gameJSON []byte
	// done marks a record formatted at once: its text is pre[start:end]
	// of its batch.
	done       bool
	start, end int
}

type fmtBatch struct {
	recs  []pendingRecord
	arena []byte // the bytes the copied records point to
	pre   []byte // the records formatted at once
	out   []byte // the batch's output, once ready
	// efs, pes and contacts hold the copied events and their contacts.
	// They are the batch's, not each slot's: events are a few records in a
	// hundred, and a slot's own copies would cost each of the batches'
	// slots 288 bytes. Copying them takes 52,300 of the 74,800 records
	// formatted at once off the decoding goroutine on battle x100 (25 of
	// 38 MB of --json), for 21 M instructions of copying there.
	efs      []game.EventForward
	pes      []game.PythonEvent
	contacts []dissect.Contact
	ready    chan struct{}
}

// own returns a copy of b in the batch's arena (nil for nil).
func (b *fmtBatch) own(p []byte) []byte {
	if p == nil {
		return nil
	}
	start := len(b.arena)
	b.arena = append(b.arena, p...)
	return b.arena[start:len(b.arena):len(b.arena)]
}

// next extends recs by one, keeping the storage the slot's StateUpdate
// had in an earlier use of the batch.
func (b *fmtBatch) next() *pendingRecord {
	if len(b.recs) < cap(b.recs) {
		b.recs = b.recs[:len(b.recs)+1]
	} else {
		b.recs = append(b.recs, pendingRecord{})
	}
	return &b.recs[len(b.recs)-1]
}

// fmtPool is the printer's side of the workers: the batch being filled,
// the batches handed over (in output order) and the idle ones.
type fmtPool struct {
	workers  int
	work     chan *fmtBatch
	wg       sync.WaitGroup
	cur      *fmtBatch
	inflight []*fmtBatch // a queue: inflight[0] is written next
	idle     []*fmtBatch
	err      error // the first write error
	// lazy decodes the Lazy records: lazy[i] on worker i, serial on the
	// caller's goroutine (Print without workers).
	lazy    []flow.LazyDecoder
	serial  flow.LazyDecoder
	lazyRec flow.Record
	lazyRes game.Result
}

// SetWorkers makes Print format records on n goroutines (n > 1) beside
// the caller's; the output is the same. Flush waits for them, and they
// stop until the next Print. Hex dumps (-x) are always formatted on the
// caller's goroutine.
func (p *DecodePrinter) SetWorkers(n int) { p.pool.workers = n }

// deferrable reports whether r can be copied for a worker: its parts are
// all of the kinds pendingRecord copies.
func deferrable(r *flow.Record) bool {
	if r.Kind != flow.KindMessage || r.Msg == nil || r.Err != nil || r.Raw != nil || r.GameSpy != nil || r.Master != nil {
		return false
	}
	if g := r.Game; g != nil {
		switch g.Msg.(type) {
		case *game.StateUpdate, *game.EventForward, *game.PythonEvent:
		default:
			return false
		}
		if g.Err != nil || (g.NonStock != nil && g.NonStock != r.NonStock) {
			return false
		}
	}
	return true
}

// copyEvent makes dst (a copy of src) share nothing the decoder reuses or
// that aliases its input: the contacts and bytes go to the batch's
// storage. A list that grows midway leaves the copies taken before in the
// old array, which stays valid.
func (b *fmtBatch) copyEvent(dst, src *game.Event) {
	if src.Contacts != nil {
		start := len(b.contacts)
		b.contacts = append(b.contacts, src.Contacts...)
		dst.Contacts = b.contacts[start:len(b.contacts):len(b.contacts)]
	}
	dst.SetName, dst.Extra = b.own(src.SetName), b.own(src.Extra)
}

// take copies r, and the printer's state that its text depends on, into e.
//
// Moving the StateUpdate instead (its subsystem and weapon lists handed to
// the slot, the slot's old lists to the decoder; 2f6b54a, reverted)
// did not pay: 1.8% fewer instructions for decode --json on battle x100
// (7.15 G against 7.28 G), 0.3% more on OpenBC battle x40, wall time
// within the noise, and 1.5 MiB more peak RSS for decode -V on battle
// x200 (23.3-24.0 MiB against 21.8-22.4, at the 24 MiB budget): the
// decoder sizes its lists for the section's bytes, and every slot then
// held one of that size. A Lazy StateUpdate needs neither: only its bytes
// are copied. CopyTo serves the StateUpdates the Tracker decoded (-Y,
// --opcode, reassembled ones).
func (e *pendingRecord) take(p *DecodePrinter, b *fmtBatch, r *flow.Record) {
	e.done = false
	e.rec = *r
	// Only hex dumps show the datagram, and they are not deferred; the
	// game message's bytes are not formatted (its decoded form is).
	e.rec.Datagram, e.rec.Payload = nil, nil
	if r.Lazy { // the worker decodes it
		e.rec.Payload = b.own(r.Payload)
	}
	e.msg = *r.Msg
	e.msg.Raw, e.msg.Payload = nil, nil // not formatted
	e.rec.Msg = &e.msg
	if r.Control != nil {
		e.ctl = *r.Control
		e.ctl.Reserved, e.ctl.Extra = b.own(e.ctl.Reserved), b.own(e.ctl.Extra)
		e.rec.Control = &e.ctl
	}
	if r.NonStock != nil {
		e.ns = *r.NonStock
		e.ns.Rest = b.own(e.ns.Rest)
		e.rec.NonStock = &e.ns
	}
	if r.Game != nil {
		e.game = *r.Game
		switch m := r.Game.Msg.(type) {
		case *game.StateUpdate:
			m.CopyTo(&e.su)
			e.game.Msg = &e.su
		case *game.EventForward:
			b.efs = append(b.efs, *m)
			ef := &b.efs[len(b.efs)-1]
			b.copyEvent(&ef.Event, &m.Event)
			e.game.Msg = ef
		case *game.PythonEvent:
			b.pes = append(b.pes, *m)
			pe := &b.pes[len(b.pes)-1]
			b.copyEvent(&pe.Event, &m.Event)
			e.game.Msg = pe
		}
		e.game.Unparsed = b.own(e.game.Unparsed)
		if e.game.NonStock != nil {
			e.game.NonStock = &e.ns
		}
		e.rec.Game = &e.game
	}
	e.clock, e.file, e.jsonFile = p.clock, p.file, p.jsonFile
	e.gameJSON = b.own(p.gameJSON)
}

// printLater adds r to the batch being filled, and hands the batch over
// when it is full.
func (p *DecodePrinter) printLater(r *flow.Record) error {
	q := &p.pool
	if q.err != nil {
		return q.err
	}
	if q.cur == nil {
		q.cur = p.idleBatch()
		if q.err != nil {
			return q.err
		}
	}
	b := q.cur
	e := b.next()
	if deferrable(r) {
		e.take(p, b, r)
	} else {
		e.done, e.start = true, len(b.pre)
		b.pre = p.appendRecord(b.pre, r)
		e.end = len(b.pre)
	}
	if len(b.recs) == batchRecords {
		q.cur = nil
		p.handOver(b)
		return p.writeReady(false)
	}
	return nil
}

// handOver starts the workers if they are not running and gives them b.
func (p *DecodePrinter) handOver(b *fmtBatch) {
	q := &p.pool
	if q.work == nil {
		// Room for every batch that can exist: a hand-over never waits.
		q.work = make(chan *fmtBatch, q.workers+batchesExtra)
		if len(q.lazy) < q.workers {
			q.lazy = make([]flow.LazyDecoder, q.workers)
		}
		q.wg.Add(q.workers)
		for i := range q.workers {
			go p.formatBatches(q.work, &q.lazy[i])
		}
	}
	q.inflight = append(q.inflight, b)
	q.work <- b
}

// idleBatch returns an empty batch: an idle one, a new one while there are
// fewer than the pool's bound, or the oldest in flight once written.
func (p *DecodePrinter) idleBatch() *fmtBatch {
	q := &p.pool
	if len(q.idle) == 0 && len(q.inflight) >= q.workers+batchesExtra {
		_ = p.writeReady(true)
	}
	var b *fmtBatch
	if n := len(q.idle); n > 0 {
		b, q.idle = q.idle[n-1], q.idle[:n-1]
	} else {
		// contacts is never nil: an empty list copies as an empty list.
		b = &fmtBatch{ready: make(chan struct{}, 1), arena: make([]byte, 0, 4<<10),
			contacts: make([]dissect.Contact, 0, 16)}
	}
	b.recs, b.arena, b.pre = b.recs[:0], b.arena[:0], b.pre[:0]
	b.efs, b.pes, b.contacts = b.efs[:0], b.pes[:0], b.contacts[:0]
	return b
}

// writeReady writes the batches formatted so far, in order: those ready
// now, and with wait at least one (the oldest, waiting for it).
func (p *DecodePrinter) writeReady(wait bool) error {
	q := &p.pool
	for len(q.inflight) > 0 {
		b := q.inflight[0]
		if wait {
			<-b.ready
			wait = false
		} else {
			select {
			case <-b.ready:
			default:
				return q.err
			}
		}
		q.inflight = q.inflight[:copy(q.inflight, q.inflight[1:])]
		if q.err == nil {
			if _, err := p.w.Write(b.out); err != nil {
				q.err = err
			}
		}
		q.idle = append(q.idle, b)
	}
	return q.err
}

// drain hands over the batch being filled, writes every batch in order
// and stops the workers.
func (p *DecodePrinter) drain() error {
	q := &p.pool
	if q.cur != nil {
		if len(q.cur.recs) > 0 {
			p.handOver(q.cur)
		} else {
			q.idle = append(q.idle, q.cur)
		}
		q.cur = nil
	}
	for len(q.inflight) > 0 {
		_ = p.writeReady(true)
	}
	if q.work != nil {
		close(q.work)
		q.wg.Wait()
		q.work = nil
	}
	return q.err
}

// formatBatches is a worker: it formats each batch's records with its own
// printer state, as the serial printer would have.
func (p *DecodePrinter) formatBatches(work <-chan *fmtBatch, lazy *flow.LazyDecoder) {
	defer p.pool.wg.Done()
	f := &DecodePrinter{format: p.format, color: p.color, pal: p.pal}
	for b := range work {
		out := b.out[:0]
		for i := range b.recs {
			e := &b.recs[i]
			if e.done {
				out = append(out, b.pre[e.start:e.end]...)
				continue
			}
			if e.rec.Lazy {
				lazy.Decode(&e.rec, &e.game)
			}
			f.clock, f.file, f.jsonFile, f.gameJSON = e.clock, e.file, e.jsonFile, e.gameJSON
			out = f.appendRecord(out, &e.rec)
		}
		b.out = out
		b.ready <- struct{}{}
		// The decoding goroutine, if it waited for this batch, is now
		// runnable, queued to run next on this P, but only once this
		// worker blocks: while batches are queued it never does, so the
		// decoding goroutine, whose records all the workers wait for,
		// stood still until they had formatted every batch and went idle
		// with it. Yielding hands it the core at once. (Go runtime traces
		// of decode --json on battle x100, with every other process
		// stopped: one goroutine alone running 29-30% of the time with
		// workers+2 batches, the decoding one for 142-166 ms of 722-825;
		// 17% with workers+4; 9-12% yielding; 5-7% with both, and 0.85-0.89
		// of the wall time, medians of 12-16 pairs.)
		runtime.Gosched()
	}
}

// decodeLazy returns r with its StateUpdate decoded, when r is Lazy, for
// printing on the caller's goroutine; the copy is valid until the next
// call.
func (p *DecodePrinter) decodeLazy(r *flow.Record) *flow.Record {
	q := &p.pool
	q.lazyRec = *r
	q.serial.Decode(&q.lazyRec, &q.lazyRes)
	return &q.lazyRec
}

// AddLazyStats adds to s the counts of the Lazy records printed since the
// last call (flow.LazyDecoder.AddTo), once Flush has returned: the
// Tracker's Stats leave them out.
func (p *DecodePrinter) AddLazyStats(s *flow.Stats) {
	q := &p.pool
	for i := range q.lazy {
		q.lazy[i].AddTo(s)
	}
	q.serial.AddTo(s)
}
