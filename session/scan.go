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
	// Workers > 1 decrypts and splits datagrams on that many goroutines
	// (flow.RunParallel); the records, and so the sessions, are the same.
	Workers int
	// Keep, when set, chooses the records the sessions are built from (the
	// rest are still counted as damage when damaged, and seen by Record).
	Keep func(r *flow.Record) bool
	// Record, when set, sees every record after the builder (reports count
	// message rates from them, commands list the damaged ones). Returning
	// false stops the scan.
	Record func(r *flow.Record) bool
	// Kept, Damaged and Tick are cheaper hooks than Record for the common
	// cases (a call per record through a closure is a measurable share of
	// stats' CPU): Kept sees each record the sessions are built from, right
	// after the builder; Damaged each record that carries an error, before
	// Kept; Tick is called every 1024 records, after Record, and returning
	// false stops the scan.
	Kept    func(r *flow.Record)
	Damaged func(r *flow.Record)
	Tick    func() bool
	// Reuse says that emit keeps nothing of the Session it is given once
	// it returns (no pointer to it or into it, its lists included):
	// Scan then builds later sessions in its memory (Builder.Reuse).
	Reuse bool
}

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

// Scan reads src through a flow.Tracker into a Builder and hands emit every
// session as it ends; the capture's own clock and flows are its own. emit
// returning an error stops the scan (the sessions still open are ended and
// dropped) and Scan returns that error; otherwise the error is a reading
// failure that ended the capture.
func Scan(src flow.Source, o ScanOptions, emit func(*Session) error) (*ScanResult, error) {
	res := &ScanResult{}
	var emitErr error
	var b *Builder
	b = NewBuilder(o.Session, func(s *Session) {
		res.Sessions++
		if emitErr == nil {
			emitErr = emit(s)
		}
		if o.Reuse {
			b.Reuse(s)
		}
	})
	tr := flow.New(o.Flow)
	stopped := false
	n := 0
	each := func(r *flow.Record) bool {
		if r.Err != nil {
			res.Damaged++
			if o.Damaged != nil {
				o.Damaged(r)
			}
		}
		if r.NonStock != nil {
			res.NonStock++
		}
		if o.Keep == nil || o.Keep(r) {
			b.Add(r)
			if o.Kept != nil {
				o.Kept(r)
			}
		}
		if o.Record != nil && !o.Record(r) {
			stopped = true
		}
		if n++; n&1023 == 0 && o.Tick != nil && !stopped && !o.Tick() {
			stopped = true
		}
		return emitErr == nil && !stopped
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
	b.Finish()
	res.Totals = *b.Totals()
	res.Peak, res.Evicted = b.Peak(), b.Evicted()
	return res, emitErr
}
