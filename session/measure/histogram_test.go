package measure

import (
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

// merge gives what adding the other histogram's intervals one by one
// gives (the form it replaced).
func TestHistogramMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for range 200 {
		var a, b, want histogram
		for range rng.IntN(50) {
			d := time.Duration(rng.Int64N(int64(300 * time.Millisecond)))
			a.add(d)
			want.add(d)
		}
		for range rng.IntN(50) {
			d := time.Duration(rng.Int64N(int64(300 * time.Millisecond)))
			b.add(d)
			want.add(d)
		}
		a.merge(&b)
		if !slices.Equal(a.ms, want.ms) || !slices.Equal(a.n, want.n) || a.sum != want.sum || a.cnt != want.cnt {
			t.Fatalf("merged %v %v sum %v cnt %d, want %v %v sum %v cnt %d", a.ms, a.n, a.sum, a.cnt, want.ms, want.n, want.sum, want.cnt)
		}
	}
}
