package measure

import (
	"maps"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"
)

// search finds what sort.Search finds, on bucket lists of every length up
// to 70 and keys below, on and between and above their values.
func TestHistogramSearch(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for n := range 70 {
		var h histogram
		for len(h.ms) < n {
			h.ms = append(h.ms, uint32(rng.IntN(400)))
			slices.Sort(h.ms)
			h.ms = slices.Compact(h.ms)
		}
		for k := range uint32(402) {
			want := sort.Search(len(h.ms), func(i int) bool { return h.ms[i] >= k })
			if got := h.search(k); got != want {
				t.Fatalf("%v: search(%d) = %d, want %d", h.ms, k, got, want)
			}
		}
	}
}

// plainHistogram is the plain form of a histogram: a count per bucket.
type plainHistogram struct {
	counts map[uint32]uint32
	sum    time.Duration
	cnt    int
}

func (p *plainHistogram) add(d time.Duration) {
	if d < 0 {
		return
	}
	p.counts[uint32(min(d/time.Millisecond, 1<<31))]++
	p.sum += d
	p.cnt++
}

// equal folds h and compares.
func (p *plainHistogram) equal(h *histogram) bool {
	h.fold()
	keys := slices.Sorted(maps.Keys(p.counts))
	if !slices.Equal(h.ms, keys) || h.sum != p.sum || h.cnt != p.cnt {
		return false
	}
	for i, k := range keys {
		if h.n[i] != p.counts[k] {
			return false
		}
	}
	return true
}

// randomIntervals are a lane's: jitter around a period, some far off
// (negative, huge, below the window), some repeated.
func randomIntervals(rng *rand.Rand, n int) []time.Duration {
	out := make([]time.Duration, n)
	for i := range out {
		switch rng.IntN(12) {
		case 0:
			out[i] = time.Duration(rng.Int64N(1 << 62))
		case 1:
			out[i] = -time.Duration(rng.Int64N(1 << 40))
		case 2:
			out[i] = time.Duration(rng.Int64N(int64(200 * time.Millisecond)))
		case 3:
			if i > 0 {
				out[i] = out[i-1]
			}
		default:
			out[i] = 90*time.Millisecond + time.Duration(rng.Int64N(int64(80*time.Millisecond)))
		}
	}
	return out
}

// Intervals added (to the window, to the sparse buckets, and after a
// fold, which quantile does) give the plain form's counts, sum and number.
func TestHistogramAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for range 300 {
		var h histogram
		p := plainHistogram{counts: map[uint32]uint32{}}
		for _, d := range randomIntervals(rng, rng.IntN(200)) {
			h.add(d)
			p.add(d)
			if rng.IntN(60) == 0 {
				h.quantile(0.5)
			}
		}
		if !p.equal(&h) {
			t.Fatalf("%v %v sum %v cnt %d, want %v sum %v cnt %d", h.ms, h.n, h.sum, h.cnt, p.counts, p.sum, p.cnt)
		}
	}
}

// merge gives the plain form of both histograms' intervals together.
func TestHistogramMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 200 {
		var a, b histogram
		p := plainHistogram{counts: map[uint32]uint32{}}
		for _, d := range randomIntervals(rng, rng.IntN(60)) {
			a.add(d)
			p.add(d)
		}
		for _, d := range randomIntervals(rng, rng.IntN(60)) {
			b.add(d)
			p.add(d)
		}
		a.merge(&b)
		if !p.equal(&a) {
			t.Fatalf("merged %v %v sum %v cnt %d, want %v sum %v cnt %d", a.ms, a.n, a.sum, a.cnt, p.counts, p.sum, p.cnt)
		}
	}
}
