package session

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// stamps must order and subtract exactly as time.Time does, for capture
// times and for the far-off ones a damaged pcapng can give.
func TestStampMatchesTime(t *testing.T) {
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
		sa := stampOf(a)
		if sa.isZero() != a.IsZero() || !sa.time().Equal(a) {
			t.Fatalf("%v: stamp %+v, zero %v, back %v", a, sa, sa.isZero(), sa.time())
		}
		for _, b := range times {
			sb := stampOf(b)
			if sa.before(sb) != a.Before(b) || sa.after(sb) != a.After(b) || (sa == sb) != a.Equal(b) {
				t.Fatalf("%v vs %v: before %v after %v equal %v", a, b, sa.before(sb), sa.after(sb), sa == sb)
			}
			if got, want := sa.sub(sb), a.Sub(b); got != want {
				t.Fatalf("%v - %v = %v, want %v", a, b, got, want)
			}
		}
		for _, d := range []time.Duration{0, 1, time.Second - 1, 2 * time.Second, 45 * time.Second, math.MaxInt64, -1} {
			sum, ok := sa.add(d)
			if !ok {
				if d >= 0 && a.Add(d).Sub(a) == d && sa.sec < math.MaxInt64-int64(d/time.Second)-1 {
					t.Fatalf("%v + %v: not ok", a, d)
				}
				continue
			}
			if d < 0 || !sum.time().Equal(a.Add(d)) && a.Add(d).Sub(a) == d {
				t.Fatalf("%v + %v = %v, want %v", a, d, sum.time(), a.Add(d))
			}
		}
	}
}
