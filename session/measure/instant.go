package measure

import "time"

// instant is a capture time in the form the Builder subtracts on every
// record: time.Time's own count of seconds since January 1, year 1, and
// the nanoseconds within the second. Its differences are exactly
// time.Time.Sub's (wall clock: capture times carry no monotonic reading;
// saturated to the Duration range) for every time, zero and far-off ones
// included, but cost a few instructions where Sub runs some 130; a
// StateUpdate's lanes and the relay window subtract up to four times a
// record. (session's stamp is the same idea.)
type instant struct {
	sec  int64
	nsec int32
}

// unixToInternal is the number of seconds from year 1 to 1970, the offset
// between Unix time and time.Time's own count.
const unixToInternal int64 = (1969*365 + 1969/4 - 1969/100 + 1969/400) * 24 * 60 * 60

// instantOf converts t. (Unix time wraps around for times beyond the
// int64 range exactly as time.Time's own count does, so adding the offset
// back gives that count, whatever t.)
func instantOf(t time.Time) instant {
	return instant{sec: t.Unix() + unixToInternal, nsec: int32(t.Nanosecond())}
}

// time is the instant as a time.Time (in Local, as time.Unix makes it).
func (a instant) time() time.Time { return time.Unix(a.sec-unixToInternal, int64(a.nsec)) }

// maxExactSec bounds the second differences whose Duration cannot
// overflow: 9e9 s is 9e18 ns, under the 9.22e18 of math.MaxInt64.
const maxExactSec = 9_000_000_000

// sub is a.time().Sub(b.time()): a-b, saturated to the Duration range.
func (a instant) sub(b instant) time.Duration {
	// Counts of the same sign cannot overflow when subtracted.
	if ds := a.sec - b.sec; a.sec^b.sec >= 0 && uint64(ds+maxExactSec) < 2*maxExactSec {
		return time.Duration(ds)*time.Second + time.Duration(a.nsec-b.nsec)
	}
	return a.subFar(b)
}

// subFar is sub's rare case, apart so that sub inlines.
func (a instant) subFar(b instant) time.Duration { return a.time().Sub(b.time()) }
