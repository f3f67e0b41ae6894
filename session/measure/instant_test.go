package measure

import (
	"math"
	"testing"
	"time"
)

// FuzzInstantSub: an instant's difference is time.Time.Sub's, for capture
// times and the far-off ones a damaged pcapng can give; relays.expire's
// shortcut keeps only what is within Window.
func FuzzInstantSub(f *testing.F) {
	for _, s := range [][4]int64{
		{1767000000, 5, 1767000000, 999999999}, {1767000002, 0, 1767000000, 1}, {0, 0, 0, 0},
		{math.MaxInt64, 0, math.MinInt64, 0}, {-unixToInternal, 0, 1 << 40, 3}, {1 << 34, 7, -(1 << 34), 9},
		{math.MaxInt64 - unixToInternal + 1, 3, 0, 0}, {1767000001, 999999999, 1767000000, 0},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, as, an, bs, bn int64) {
		a, b := time.Unix(as, an%1e9), time.Unix(bs, bn%1e9)
		ia, ib := instantOf(a), instantOf(b)
		if got, want := ia.sub(ib), a.Sub(b); got != want {
			t.Fatalf("%v - %v = %v, want %v", a, b, got, want)
		}
		// relays.expire's shortcut: fewer whole seconds apart than
		// windowSec, of one sign, is not past Window.
		if ia.sec-ib.sec < windowSec && ia.sec^ib.sec >= 0 && a.Sub(b) > Window {
			t.Fatalf("%v - %v = %v, past Window, but expire would keep it", a, b, a.Sub(b))
		}
		if !ia.time().Equal(a) {
			t.Fatalf("%v back as %v", a, ia.time())
		}
	})
}
