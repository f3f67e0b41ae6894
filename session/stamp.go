package session

import "time"

// stamp is a capture time in the form the Builder compares and subtracts on
// every record: time.Time's own count of seconds since January 1, year 1,
// and the nanoseconds within the second. Its order and differences are
// exactly those of time.Time (Before, After, Equal, Sub), wall clock only,
// for every time, zero and far-off ones included, at a fraction of the cost
// (time.Time.Sub alone runs some 130 instructions). Times kept in a Session
// or Counts stay time.Time, copied from the records unchanged.
type stamp struct {
	sec  int64
	nsec int32
}

// unixToInternal is the number of seconds from year 1 to 1970, the offset
// between Unix time and time.Time's own count.
const unixToInternal int64 = (1969*365 + 1969/4 - 1969/100 + 1969/400) * 24 * 60 * 60

// stampOf converts t. (Unix time wraps around for times beyond the int64
// range exactly as time.Time's own count does, so adding the offset back
// gives that count, whatever t.)
func stampOf(t time.Time) stamp {
	return stamp{sec: t.Unix() + unixToInternal, nsec: int32(t.Nanosecond())}
}

// time is the stamp as a time.Time (in Local, as time.Unix makes it).
func (a stamp) time() time.Time { return time.Unix(a.sec-unixToInternal, int64(a.nsec)) }

func (a stamp) isZero() bool        { return a.sec == 0 && a.nsec == 0 }
func (a stamp) before(b stamp) bool { return a.sec < b.sec || a.sec == b.sec && a.nsec < b.nsec }
func (a stamp) after(b stamp) bool  { return b.before(a) }

// maxExactSec bounds the second differences whose Duration cannot
// overflow: 9e9 s is 9e18 ns, under the 9.22e18 of math.MaxInt64.
const maxExactSec = 9_000_000_000

// sub is a.time().Sub(b.time()): a-b, saturated to the Duration range.
func (a stamp) sub(b stamp) time.Duration {
	// Counts of the same sign cannot overflow when subtracted.
	if ds := a.sec - b.sec; a.sec^b.sec >= 0 && uint64(ds+maxExactSec) < 2*maxExactSec {
		return time.Duration(ds)*time.Second + time.Duration(a.nsec-b.nsec)
	}
	return a.subFar(b)
}

// subFar is sub's rare case, apart so that sub inlines.
func (a stamp) subFar(b stamp) time.Duration { return a.time().Sub(b.time()) }

// add is a plus d when d is not negative and the sum fits, with ok; a
// conservative use is: any stamp up to the sum is at most d after a.
func (a stamp) add(d time.Duration) (sum stamp, ok bool) {
	if d < 0 {
		return a, false
	}
	sec, nsec := a.sec+int64(d/time.Second), a.nsec+int32(d%time.Second)
	if nsec >= 1e9 {
		sec, nsec = sec+1, nsec-1e9
	}
	if sec < a.sec {
		return a, false
	}
	return stamp{sec, nsec}, true
}

// span follows the first and the last nonzero time of the records counted
// into a Counts, as Counts.add does, but compares stamps and writes First
// and Last only when they change. It assumes nothing else writes them.
// (A later record than last, once first is set, only moves last.)
type span struct{ first, last stamp }

func (s *span) note(c *Counts, t time.Time, now stamp) {
	if now.isZero() {
		return
	}
	if s.first.isZero() || now.before(s.first) {
		s.first, c.First = now, t
	}
	if now.after(s.last) {
		s.last, c.Last = now, t
	}
}
