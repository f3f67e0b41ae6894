package session

import (
	"math/rand/v2"
	"testing"

	"github.com/bcwire/bcwire/dissect/game"
)

// rateIndex must find what a map finds, scanning or, beyond manyRates,
// with its own map.
func TestRateIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var x rateIndex
	want := map[rateKey]int{}
	for range 5000 {
		k := rateKey{game.ObjectID(rng.IntN(40)), game.Direction(1 + rng.IntN(2))}
		i, ok := want[k]
		if !ok {
			i = -1
		}
		if got := x.find(k); got != i {
			t.Fatalf("find %v = %d, want %d (%d keys)", k, got, i, len(x.keys))
		}
		if !ok && rng.IntN(3) == 0 {
			want[k] = x.add(k)
			if want[k] != len(want)-1 {
				t.Fatalf("add %v = %d, want %d", k, want[k], len(want)-1)
			}
		}
	}
	if len(x.keys) <= manyRates || x.many == nil {
		t.Fatalf("%d keys: the map was not reached", len(x.keys))
	}
}
