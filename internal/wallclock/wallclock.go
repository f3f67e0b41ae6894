// Package wallclock holds capture times in the form the record builders
// compare and subtract on every record: time.Time's own count of seconds
// since January 1, year 1, and the nanoseconds within the second. Their
// order and differences are exactly those of time.Time (Before, After,
// Equal, Sub), wall clock only (capture times carry no monotonic reading),
// for every time, zero and far-off ones included, at a fraction of the cost:
// time.Time.Sub alone runs some 130 instructions, Time.SubNear a handful
// (inline). session (stats, timeline) and session/measure both use it.
package wallclock

import "time"

// Time is a wall-clock time as seconds since January 1, year 1 (time.Time's
// own count) and nanoseconds within the second (0 to 999,999,999). The zero
// Time is time.Time's zero time.
type Time struct {
	Sec  int64
	Nsec int32
}

// unixToInternal is the number of seconds from year 1 to 1970, the offset
// between Unix time and time.Time's own count.
const unixToInternal int64 = (1969*365 + 1969/4 - 1969/100 + 1969/400) * 24 * 60 * 60

// Of converts t. (Unix time wraps around for times beyond the int64 range
// exactly as time.Time's own count does, so adding the offset back gives
// that count, whatever t.)
func Of(t time.Time) Time {
	return Time{Sec: t.Unix() + unixToInternal, Nsec: int32(t.Nanosecond())}
}

// Time is a as a time.Time (in Local, as time.Unix makes it).
func (a Time) Time() time.Time { return time.Unix(a.Sec-unixToInternal, int64(a.Nsec)) }

// IsZero reports whether a is the zero time, as time.Time.IsZero.
func (a Time) IsZero() bool { return a.Sec == 0 && a.Nsec == 0 }

// Before reports whether a is before b.
func (a Time) Before(b Time) bool { return a.Sec < b.Sec || a.Sec == b.Sec && a.Nsec < b.Nsec }

// After reports whether a is after b.
func (a Time) After(b Time) bool { return b.Before(a) }

// MaxExactSec bounds the second differences whose Duration cannot
// overflow: 9e9 s is 9e18 ns, under the 9.22e18 of math.MaxInt64.
const MaxExactSec = 9_000_000_000

// Sub is a.Time().Sub(b.Time()): a-b, saturated to the Duration range.
func (a Time) Sub(b Time) time.Duration {
	if d, ok := a.SubNear(b); ok {
		return d
	}
	return a.subFar(b)
}

// SubNear is a.Sub(b), with ok, for times of one sign less than
// MaxExactSec seconds apart (capture times), which subtract exactly in a
// few instructions; it inlines where Sub (which calls time.Time.Sub for
// the rest) does not.
func (a Time) SubNear(b Time) (d time.Duration, ok bool) {
	// Counts of the same sign cannot overflow when subtracted.
	if ds := a.Sec - b.Sec; a.Sec^b.Sec >= 0 && uint64(ds+MaxExactSec) < 2*MaxExactSec {
		return time.Duration(ds)*time.Second + time.Duration(a.Nsec-b.Nsec), true
	}
	return 0, false
}

// subFar is Sub's rare case, apart so that Sub inlines.
func (a Time) subFar(b Time) time.Duration { return a.Time().Sub(b.Time()) }

// Add is a plus d when d is not negative and the sum fits, with ok; a
// conservative use is: any Time up to the sum is at most d after a.
func (a Time) Add(d time.Duration) (sum Time, ok bool) {
	if d < 0 {
		return a, false
	}
	sec, nsec := a.Sec+int64(d/time.Second), a.Nsec+int32(d%time.Second)
	if nsec >= 1e9 {
		sec, nsec = sec+1, nsec-1e9
	}
	if sec < a.Sec {
		return a, false
	}
	return Time{sec, nsec}, true
}
