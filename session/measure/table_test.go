package measure

import (
	"math/rand/v2"
	"testing"
)

// The lanes table holds what a map would, through inserts, removals and
// growth, with keys made to collide in their low bits (long probe runs
// that wrap around the end, which backward-shift deletion must mend).
func TestTableMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var tb table[laneSet]
	want := map[uint64]*laneSet{}
	keys := []uint64{}
	for i := range 20000 {
		var key uint64
		switch rng.IntN(3) {
		case 0:
			key = rng.Uint64()
		case 1:
			key = rng.Uint64()<<12 | 63 // the same home slot while the table is small
		default:
			if len(keys) > 0 {
				key = keys[rng.IntN(len(keys))]
			}
		}
		j := tb.find(key)
		got := tb.slots[j].v
		if got != want[key] {
			t.Fatalf("op %d: key %x: %p, want %p", i, key, got, want[key])
		}
		switch {
		case got == nil && len(want) < 300:
			p := &laneSet{}
			tb.insert(j, key, p)
			want[key] = p
			keys = append(keys, key)
		case got != nil && rng.IntN(2) == 0:
			tb.remove(j)
			delete(want, key)
		}
		if tb.n != len(want) {
			t.Fatalf("op %d: %d entries, want %d", i, tb.n, len(want))
		}
	}
	for k, p := range want {
		if got := tb.slots[tb.find(k)].v; got != p {
			t.Fatalf("key %x: %p, want %p", k, got, p)
		}
	}
}
