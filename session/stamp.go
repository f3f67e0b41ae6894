package session

import (
	"time"

	"github.com/bcwire/bcwire/internal/wallclock"
)

// stamp is a capture time in the form the Builder compares and subtracts on
// every record: a wallclock.Time (internal/wallclock, which session/measure
// shares), whose order and differences are exactly time.Time's at a
// fraction of the cost. Times kept in a Session or Counts stay time.Time,
// copied from the records unchanged.
type stamp = wallclock.Time

// stampOf converts t.
func stampOf(t time.Time) stamp { return wallclock.Of(t) }

// span follows the first and the last nonzero time of the records counted
// into a Counts, as Counts.add does, but compares stamps and writes First
// and Last only when they change. It assumes nothing else writes them.
// (A later record than last, once first is set, only moves last.)
type span struct{ first, last stamp }

func (s *span) note(c *Counts, t time.Time, now stamp) {
	if now.IsZero() {
		return
	}
	if s.first.IsZero() || now.Before(s.first) {
		s.first, c.First = now, t
	}
	if now.After(s.last) {
		s.last, c.Last = now, t
	}
}
