package report

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/internal/jsonenc"
)

// TimeFormat is how the time column is written, as tshark's -t.
type TimeFormat int

const (
	TimeRelative     TimeFormat = iota // r: seconds since the capture's first packet
	TimeAbsolute                       // a: time of day, local
	TimeAbsoluteDate                   // ad: date and time of day, local
	TimeDelta                          // d: seconds since the previous packet captured
	TimeEpoch                          // e: seconds since 1970-01-01 UTC
)

// TimeFormatNames lists -t's values, for help.
const TimeFormatNames = "r (relative, the default), a (absolute), ad (absolute with date), d (delta), e (epoch)"

// ParseTimeFormat reads -t's value.
func ParseTimeFormat(s string) (TimeFormat, error) {
	switch s {
	case "", "r":
		return TimeRelative, nil
	case "a":
		return TimeAbsolute, nil
	case "ad":
		return TimeAbsoluteDate, nil
	case "d":
		return TimeDelta, nil
	case "e":
		return TimeEpoch, nil
	}
	return 0, fmt.Errorf("-t %q: use %s", s, TimeFormatNames)
}

// Clock formats record times. It sees every record of a capture
// (Observe), printed or filtered out, so that relative times count from the
// capture's first packet and deltas from the packet before, whatever a
// filter keeps, as tshark's do.
type Clock struct {
	Format TimeFormat
	start  time.Time // the capture's first packet
	frame  int       // the last frame observed
	cur    time.Time // its time
	prev   time.Time // the time of the frame before it
}

// Reset starts a new capture.
func (c *Clock) Reset() { *c = Clock{Format: c.Format} }

// Start is the time of the capture's first packet (zero before one).
func (c *Clock) Start() time.Time { return c.start }

// Observe takes note of a record; the records of one frame, and a record
// observed twice, count once.
func (c *Clock) Observe(r *flow.Record) {
	if r.Time.IsZero() || r.Frame == c.frame {
		return
	}
	if c.start.IsZero() {
		c.start = r.Time
	}
	c.frame, c.prev, c.cur = r.Frame, c.cur, r.Time
	if c.prev.IsZero() {
		c.prev = r.Time
	}
}

// Width is the width the text column pads the time to.
func (c *Clock) Width() int {
	switch c.Format {
	case TimeAbsolute:
		return len("15:04:05.000000")
	case TimeAbsoluteDate:
		return len("2006-01-02 15:04:05.000000")
	case TimeEpoch:
		return len("1700000000.000000")
	}
	return 11
}

// Append appends the time of r, which must be the record last observed or
// one of its frame's.
func (c *Clock) Append(b []byte, r *flow.Record) []byte {
	switch c.Format {
	case TimeAbsolute:
		return r.Time.Local().AppendFormat(b, "15:04:05.000000")
	case TimeAbsoluteDate:
		return r.Time.Local().AppendFormat(b, "2006-01-02 15:04:05.000000")
	case TimeEpoch:
		// Seconds and microseconds apart: a float64 of nanoseconds since
		// 1970 has too few digits for the sixth decimal.
		b = strconv.AppendInt(b, r.Time.Unix(), 10)
		us := r.Time.Nanosecond() / 1000
		return append(b, '.', byte('0'+us/100000), byte('0'+us/10000%10), byte('0'+us/1000%10),
			byte('0'+us/100%10), byte('0'+us/10%10), byte('0'+us%10))
	case TimeDelta:
		prev := c.prev
		if r.Frame != c.frame {
			prev = r.Time
		}
		return appendSeconds(b, r.Time.Sub(prev))
	}
	return appendSeconds(b, r.Time.Sub(c.start))
}

// appendSeconds appends d in seconds with six decimals, as
// strconv.AppendFloat(b, d.Seconds(), 'f', 6, 64) does, byte for byte: the
// time column of every text line, where strconv's general conversion was
// a tenth of text decode's time.
//
// The microseconds are d's nanoseconds rounded half up. d.Seconds() is
// within a third of a nanosecond of d for d under 10^6 s (two roundings
// of a float64, each within 2^-53 of the value), and d is a whole number
// of nanoseconds: unless it is exactly halfway between two microseconds,
// d and d.Seconds() round the same way. Halfway values, negative ones
// and longer ones go to strconv. FuzzAppendSecondsMatchesStrconv holds
// the two together.
func appendSeconds(b []byte, d time.Duration) []byte {
	if d < 0 || d >= 1e15 || d%1000 == 500 {
		return strconv.AppendFloat(b, d.Seconds(), 'f', 6, 64)
	}
	us := uint64(d+500) / 1000
	b = jsonenc.Uint(b, us/1e6)
	frac := us % 1e6
	// The point and three digit pairs, in place.
	b = slices.Grow(b, 7)
	n := len(b)
	w := (*[7]byte)(b[n : n+7])
	w[0] = '.'
	binary.LittleEndian.PutUint16(w[1:], jsonenc.PairWords[frac/1e4])
	binary.LittleEndian.PutUint16(w[3:], jsonenc.PairWords[frac/100%100])
	binary.LittleEndian.PutUint16(w[5:], jsonenc.PairWords[frac%100])
	return b[:n+7]
}
