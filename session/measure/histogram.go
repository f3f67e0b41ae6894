package measure

import "time"

// histogram counts intervals at millisecond resolution, sparsely: a lane's
// intervals cluster around its period, so a few dozen buckets hold them.
type histogram struct {
	ms   []uint32 // bucket (whole milliseconds), ascending
	n    []uint32
	last int // the bucket added to last: a lane's intervals repeat
	sum  time.Duration
	cnt  int
}

func (h *histogram) add(d time.Duration) {
	if d < 0 {
		return
	}
	h.sum += d
	h.cnt++
	k := uint32(min(d/time.Millisecond, 1<<31))
	if h.last < len(h.ms) && h.ms[h.last] == k {
		h.n[h.last]++
		return
	}
	i, j := 0, len(h.ms) // sort.Search's, written out: it did not inline
	for i < j {
		m := int(uint(i+j) >> 1)
		if h.ms[m] < k {
			i = m + 1
		} else {
			j = m
		}
	}
	h.last = i
	if i < len(h.ms) && h.ms[i] == k {
		h.n[i]++
		return
	}
	h.ms = append(h.ms, 0)
	h.n = append(h.n, 0)
	copy(h.ms[i+1:], h.ms[i:])
	copy(h.n[i+1:], h.n[i:])
	h.ms[i], h.n[i] = k, 1
}

func (h *histogram) merge(o *histogram) {
	for i, k := range o.ms {
		for j := uint32(0); j < o.n[i]; j++ {
			h.add(time.Duration(k) * time.Millisecond)
		}
	}
	// add counted the bucket floors: keep the exact sum instead
	h.sum += o.sum - sumFloors(o)
}

func sumFloors(h *histogram) time.Duration {
	var s time.Duration
	for i, k := range h.ms {
		s += time.Duration(k) * time.Millisecond * time.Duration(h.n[i])
	}
	return s
}

// quantile is the nearest-rank p quantile in milliseconds (the bucket's
// floor), 0 when empty.
func (h *histogram) quantile(p float64) float64 {
	if h.cnt == 0 {
		return 0
	}
	rank := int(p*float64(h.cnt) + 0.5)
	rank = max(1, min(rank, h.cnt))
	seen := 0
	for i, k := range h.ms {
		seen += int(h.n[i])
		if seen >= rank {
			return float64(k)
		}
	}
	return float64(h.ms[len(h.ms)-1])
}

func (h *histogram) meanMS() float64 {
	if h.cnt == 0 {
		return 0
	}
	return float64(h.sum.Microseconds()) / 1000 / float64(h.cnt)
}
