package wallclock

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// Times must order and subtract exactly as time.Time does, for capture
// times and for the far-off ones a damaged pcapng can give.
func TestMatchesTime(t *testing.T) {
	base := time.Date(2026, 1, 10, 20, 0, 0, 762454323, time.UTC)
	times := []time.Time{
		{}, base, base.Add(1), base.Add(-1), base.Add(time.Second), base.Add(45 * time.Second),
		base.Add(math.MaxInt64), base.Add(math.MinInt64), base.Add(math.MaxInt64).Add(time.Hour),
		time.Unix(0, 0), time.Unix(-1, 999999999), time.Unix(1<<33, 5), time.Unix(-1<<40, 7),
		time.Unix(math.MaxInt64, 0), time.Unix(math.MinInt64, 0), time.Unix(math.MaxInt64-unixToInternal+1, 3),
		time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), time.Date(0, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(2026, 1, 10, 21, 0, 0, 0, time.FixedZone("x", 3600)),
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 200 {
		times = append(times, time.Unix(rng.Int64N(1<<36)-1<<35, rng.Int64N(1e9)),
			base.Add(time.Duration(rng.Int64N(int64(time.Hour))-int64(30*time.Minute))),
			time.Unix(int64(rng.Uint64()), rng.Int64N(1e9)))
	}
	for _, a := range times {
		sa := Of(a)
		if sa.IsZero() != a.IsZero() || !sa.Time().Equal(a) {
			t.Fatalf("%v: %+v, zero %v, back %v", a, sa, sa.IsZero(), sa.Time())
		}
		for _, b := range times {
			sb := Of(b)
			if sa.Before(sb) != a.Before(b) || sa.After(sb) != a.After(b) || (sa == sb) != a.Equal(b) {
				t.Fatalf("%v vs %v: before %v after %v equal %v", a, b, sa.Before(sb), sa.After(sb), sa == sb)
			}
			if got, want := sa.Sub(sb), a.Sub(b); got != want {
				t.Fatalf("%v - %v = %v, want %v", a, b, got, want)
			}
		}
		for _, d := range []time.Duration{0, 1, time.Second - 1, 2 * time.Second, 45 * time.Second, math.MaxInt64, -1} {
			sum, ok := sa.Add(d)
			if !ok {
				if d >= 0 && a.Add(d).Sub(a) == d && sa.Sec < math.MaxInt64-int64(d/time.Second)-1 {
					t.Fatalf("%v + %v: not ok", a, d)
				}
				continue
			}
			if d < 0 || !sum.Time().Equal(a.Add(d)) && a.Add(d).Sub(a) == d {
				t.Fatalf("%v + %v = %v, want %v", a, d, sum.Time(), a.Add(d))
			}
		}
	}
}

// FuzzSub: a Time's difference is time.Time.Sub's, its order time.Time's,
// and it converts back to the same time, for capture times and the
// far-off ones a damaged pcapng can give.
func FuzzSub(f *testing.F) {
	for _, s := range [][4]int64{
		{1767000000, 5, 1767000000, 999999999}, {1767000002, 0, 1767000000, 1}, {0, 0, 0, 0},
		{math.MaxInt64, 0, math.MinInt64, 0}, {-unixToInternal, 0, 1 << 40, 3}, {1 << 34, 7, -(1 << 34), 9},
		{math.MaxInt64 - unixToInternal + 1, 3, 0, 0}, {1767000001, 999999999, 1767000000, 0},
	} {
		f.Add(s[0], s[1], s[2], s[3])
	}
	f.Fuzz(func(t *testing.T, as, an, bs, bn int64) {
		a, b := time.Unix(as, an%1e9), time.Unix(bs, bn%1e9)
		ta, tb := Of(a), Of(b)
		if got, want := ta.Sub(tb), a.Sub(b); got != want {
			t.Fatalf("%v - %v = %v, want %v", a, b, got, want)
		}
		if got, ok := ta.SubNear(tb); ok && got != a.Sub(b) {
			t.Fatalf("%v - %v: near %v, want %v", a, b, got, a.Sub(b))
		}
		if ta.Before(tb) != a.Before(b) || ta.After(tb) != a.After(b) || (ta == tb) != a.Equal(b) {
			t.Fatalf("%v vs %v: before %v after %v", a, b, ta.Before(tb), ta.After(tb))
		}
		if !ta.Time().Equal(a) {
			t.Fatalf("%v back as %v", a, ta.Time())
		}
	})
}
