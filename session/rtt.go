package session

import (
	"math"
	"math/bits"
	"slices"
	"time"
)

// reservoir keeps a uniform sample of at most cap durations (Vitter's
// algorithm R) with a fixed-seed generator, so that a capture always gives
// the same summary.
type reservoir struct {
	cap      int
	n        int
	min, max time.Duration
	vals     []time.Duration
	rng      uint64
}

func (r *reservoir) add(d time.Duration) {
	if r.n == 0 || d < r.min {
		r.min = d
	}
	if r.n == 0 || d > r.max {
		r.max = d
	}
	r.n++
	if len(r.vals) < r.cap {
		r.vals = append(r.vals, d)
		return
	}
	if r.cap == 0 {
		return
	}
	// xorshift64*
	if r.rng == 0 {
		r.rng = 0x9E3779B97F4A7C15
	}
	r.rng ^= r.rng >> 12
	r.rng ^= r.rng << 25
	r.rng ^= r.rng >> 27
	j := (r.rng * 2685821657736338717) % uint64(r.n)
	if j < uint64(r.cap) {
		r.vals[j] = d
	}
}

func (r *reservoir) summary() RTT {
	if r.n == 0 {
		return RTT{}
	}
	v := r.vals
	rank := func(p float64) int {
		i := int(math.Ceil(p*float64(len(v)))) - 1
		return max(0, min(i, len(v)-1))
	}
	out := RTT{Samples: r.n, Min: r.min, Max: r.max}
	if len(v) > 0 {
		// The values at two ranks of the sorted sample, without sorting
		// it all (the sample is not needed after): the 95th percentile's
		// selection leaves the ranks below it in front.
		i50, i95 := rank(0.5), rank(0.95)
		selectRank(v, i95)
		out.P95 = v[i95]
		selectRank(v[:i95+1], i50)
		out.Median = v[i50]
	}
	return out
}

// selectRank reorders v so that v[k] is the value a sort would put there,
// with nothing greater before it and nothing smaller after it (quickselect
// with a median-of-three pivot and a three-way partition, sorting outright
// if the pivots keep going wrong).
func selectRank(v []time.Duration, k int) {
	lo, hi := 0, len(v)-1
	budget := 2*bits.Len(uint(len(v))) + 8
	for lo < hi {
		if budget--; budget < 0 {
			slices.Sort(v[lo : hi+1])
			return
		}
		a, b, c := v[lo], v[lo+(hi-lo)/2], v[hi]
		p := max(min(a, b), min(max(a, b), c)) // the median of the three
		lt, i, gt := lo, lo, hi
		for i <= gt {
			switch {
			case v[i] < p:
				v[lt], v[i] = v[i], v[lt]
				lt++
				i++
			case v[i] > p:
				v[i], v[gt] = v[gt], v[i]
				gt--
			default:
				i++
			}
		}
		// v[lo:lt] < p, v[lt:gt+1] == p, v[gt+1:hi+1] > p
		switch {
		case k < lt:
			hi = lt - 1
		case k > gt:
			lo = gt + 1
		default:
			return
		}
	}
}
