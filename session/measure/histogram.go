package measure

import "time"

// histogram counts intervals at millisecond resolution. A lane's
// intervals cluster around its period: a window of winSize buckets from
// a little below its first interval counts most of them at once (a
// search of the sorted buckets took most of a lane update's time on
// OpenBC's lanes, whose jitter spreads them over some 40 buckets), and
// sparse buckets, sorted, count the others.
type histogram struct {
	window          // (addNear's fields first)
	ms     []uint32 // bucket (whole milliseconds), ascending
	n      []uint32
	last   int // the bucket added to last: a lane's intervals repeat
}

// A window is a histogram's window of buckets, with the count and sum of
// what it counted: a histogram's, or on its own a family lane's shared
// intervals (Lane.sh), which Finish adds to the histograms they count in.
type window struct {
	win *[winSize]uint32 // buckets lo to lo+winSize-1; nil before the first interval and after fold
	lo  uint32
	cnt int
	sum time.Duration
}

// winSize is the number of buckets of a histogram's window: 512 bytes a
// lane (a Builder keeps at most maxLanes), from a quarter of it below the
// first interval. (With 64, from half of it below, one interval in 14 of
// OpenBC's lanes, whose updates come every 33 ms with a tail past 64 ms,
// fell outside and cost a search.)
const winSize = 128

// count adds d: in the window, when it falls there, without a call
// (inline), else by add.
func (h *histogram) count(d time.Duration) {
	if !h.addNear(d) {
		h.add(d)
	}
}

// addNear adds d when it falls in the window, and reports whether it
// did. (A negative d does not: as a uint64 it is beyond any window.)
func (w *window) addNear(d time.Duration) bool {
	if i := uint64(d)/uint64(time.Millisecond) - uint64(w.lo); i < winSize && w.win != nil {
		w.win[i]++
		w.sum += d
		w.cnt++
		return true
	}
	return false
}

// place gives a window without buckets its buckets, from a quarter of
// them below d (as add does for a histogram's first interval), and
// reports whether it did: not when it has them, nor for a negative d or
// one past where a window can start.
func (w *window) place(d time.Duration) bool {
	if w.win != nil || d < 0 || d/time.Millisecond > 1<<31-winSize {
		return false
	}
	k := uint32(d / time.Millisecond)
	w.win, w.lo = new([winSize]uint32), k-min(k, winSize/4)
	return true
}

// addWindow adds the intervals w counted to h.
func (h *histogram) addWindow(w *window) {
	if w.cnt == 0 {
		return
	}
	o := histogram{window: *w}
	h.merge(&o)
}

// add adds d (a negative d is not an interval: it is left out).
func (h *histogram) add(d time.Duration) {
	if d < 0 {
		return
	}
	h.sum += d
	h.cnt++
	k := uint32(min(d/time.Millisecond, 1<<31))
	if h.win == nil && h.cnt == 1 && k <= 1<<31-winSize {
		// (Below the clamp: a bucket of the window is its interval's
		// unclamped count of milliseconds, which count adds.)
		h.win, h.lo = new([winSize]uint32), k-min(k, winSize/4)
	}
	if i := k - h.lo; i < winSize && h.win != nil {
		h.win[i]++
		return
	}
	if h.last < len(h.ms) && h.ms[h.last] == k {
		h.n[h.last]++
		return
	}
	i := h.search(k)
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

// search is the index of the first bucket not below k (sort.Search's
// answer), without branches to mispredict: a lane's intervals jitter
// around its period, and a branchy search missed on most steps.
func (h *histogram) search(k uint32) int {
	ms := h.ms
	if len(ms) == 0 {
		return 0
	}
	base, n := 0, len(ms)
	for n > 1 {
		half := n >> 1
		base += half & -b2i(ms[base+half] < k)
		n -= half
	}
	return base + b2i(ms[base] < k)
}

// b2i is 1 for true; the compiler makes it a SETcc, not a branch.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// fold moves the window's counts to the sparse buckets, which quantile
// and merge read.
func (h *histogram) fold() {
	if h.win == nil {
		return
	}
	var o histogram
	for i, c := range h.win {
		if c > 0 {
			o.ms, o.n = append(o.ms, h.lo+uint32(i)), append(o.n, c)
		}
	}
	h.win = nil
	h.mergeBuckets(&o)
}

// merge adds o's intervals to h.
func (h *histogram) merge(o *histogram) {
	h.fold()
	o.fold()
	h.mergeBuckets(o)
	h.sum += o.sum
	h.cnt += o.cnt
}

// mergeBuckets adds o's sparse buckets to h's, bucket by bucket.
func (h *histogram) mergeBuckets(o *histogram) {
	ms := make([]uint32, 0, len(h.ms)+len(o.ms))
	n := make([]uint32, 0, cap(ms))
	i, j := 0, 0
	for i < len(h.ms) || j < len(o.ms) {
		switch {
		case j == len(o.ms) || i < len(h.ms) && h.ms[i] < o.ms[j]:
			ms, n = append(ms, h.ms[i]), append(n, h.n[i])
			i++
		case i == len(h.ms) || o.ms[j] < h.ms[i]:
			ms, n = append(ms, o.ms[j]), append(n, o.n[j])
			j++
		default:
			ms, n = append(ms, h.ms[i]), append(n, h.n[i]+o.n[j])
			i, j = i+1, j+1
		}
	}
	h.ms, h.n, h.last = ms, n, 0
}

// quantile is the nearest-rank p quantile in milliseconds (the bucket's
// floor), 0 when empty.
func (h *histogram) quantile(p float64) float64 {
	if h.cnt == 0 {
		return 0
	}
	h.fold()
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
