package session

import (
	"github.com/bcwire/bcwire/dissect/flow"
)

// ScanOptions say how Scan follows one capture.
type ScanOptions struct {
	Session Options
	// Flow carries the tracker's options: the servers given, and the caps
	// on fragment sets, flows and servers.
	Flow flow.Options
	// Workers > 1 reads the capture on a goroutine of its own and decrypts
	// the datagrams on that many more (flow.RunParallel); the records,
	// and so the sessions, are the same.
	Workers int
	// Keep, when set, chooses the records the sessions are built from (the
	// rest are still counted as damage when damaged, and seen by Damaged).
	Keep func(r *flow.Record) bool
	// Kept sees each record the sessions are built from (every record
	// without Keep), right after the builder: reports count message rates
	// from them. Damaged sees each record that carries an error, kept or
	// not, before Kept. Tick is called every 1024 records, and returning
	// false stops the scan there (a budget that ran out, an interrupt).
	// (Hooks for the common cases rather than one called with every
	// record: a call per record through a closure is a measurable share
	// of stats' CPU.)
	Kept    Recorder
	Damaged func(r *flow.Record)
	Tick    func() bool
	// Reuse says that emit keeps nothing of the Session it is given once
	// it returns (no pointer to it or into it, its lists included):
	// Scan then builds later sessions in its memory (Builder.Reuse).
	Reuse bool
}

// A Recorder is told of records one by one: measure.Builder and
// diff.Builder are. (An interface rather than a func, so that a Builder's
// Add is called directly: the method value, or a closure calling it, is
// one more call per record.)
type Recorder interface{ Add(r *flow.Record) }

// RecordFunc makes a function a Recorder.
type RecordFunc func(r *flow.Record)

// Add calls f.
func (f RecordFunc) Add(r *flow.Record) { f(r) }

// ScanResult is what Scan found in one capture.
type ScanResult struct {
	Summary  flow.Summary
	Totals   Counts // a copy: traffic of every record, sessions or not
	Sessions int    // ended and handed to emit
	Peak     int    // most sessions open at once
	Evicted  int    // sessions ended early by Options.MaxSessions
	Damaged  int    // records that carried an error
	NonStock int    // messages marked non-stock (intact, not damage)
}

// scanner is Scan's state, all behind the one pointer its per-record
// function captures (a closure capturing each variable on its own loaded
// them all at every call, and again after each call it made).
type scanner struct {
	b    *Builder
	kept Recorder
	// plain is false when Keep is set: an intact record then needs more
	// than b.Add and kept.
	plain   bool
	going   bool // neither emit's error nor Tick stopped the scan
	n       int  // records, for Tick
	o       *ScanOptions
	res     *ScanResult
	emitErr error
}

// other takes a record that is damaged or non-stock, or any record when
// Keep is set.
func (sc *scanner) other(r *flow.Record) {
	o := sc.o
	if r.Err != nil {
		sc.res.Damaged++
		if o.Damaged != nil {
			o.Damaged(r)
		}
	}
	if r.NonStock != nil {
		sc.res.NonStock++
	}
	if o.Keep == nil || o.Keep(r) {
		sc.b.Add(r)
		if sc.kept != nil {
			sc.kept.Add(r)
		}
	}
}

// tick is every 1024th record's call of Tick.
func (sc *scanner) tick() {
	if sc.o.Tick != nil && sc.going && !sc.o.Tick() {
		sc.going = false
	}
}

// Scan reads src through a flow.Tracker into a Builder and hands emit every
// session as it ends; the capture's own clock and flows are its own. emit
// returning an error stops the scan (the sessions still open are ended and
// dropped) and Scan returns that error; otherwise the error is a reading
// failure that ended the capture.
func Scan(src flow.Source, o ScanOptions, emit func(*Session) error) (*ScanResult, error) {
	sc := &scanner{o: &o, res: &ScanResult{}, kept: o.Kept, going: true,
		plain: o.Keep == nil}
	res := sc.res
	sc.b = NewBuilder(o.Session, func(s *Session) {
		res.Sessions++
		if sc.emitErr == nil {
			if sc.emitErr = emit(s); sc.emitErr != nil {
				sc.going = false
			}
		}
		if o.Reuse {
			sc.b.Reuse(s)
		}
	})
	tr := flow.New(o.Flow)
	each := func(r *flow.Record) bool {
		if r.Err == nil && r.NonStock == nil && sc.plain {
			sc.b.Add(r)
			if sc.kept != nil {
				sc.kept.Add(r)
			}
		} else {
			sc.other(r)
		}
		if sc.n++; sc.n&1023 == 0 {
			sc.tick()
		}
		return sc.going
	}
	var err error
	if o.Workers > 1 {
		res.Summary, err = flow.RunParallel(src, tr, o.Workers, each)
	} else {
		res.Summary, err = flow.Run(src, tr, each)
	}
	if err != nil {
		return res, err
	}
	sc.b.Finish()
	res.Totals = *sc.b.Totals()
	res.Peak, res.Evicted = sc.b.Peak(), sc.b.Evicted()
	return res, sc.emitErr
}
