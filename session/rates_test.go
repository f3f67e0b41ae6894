package session

import (
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
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

// A session's StateUpdate rates must count every update of every object
// and direction, in the order first seen, as the rate list grows (moving
// the ShipRates) and past MaxShipRates, with each one's last time: keys
// that share a hint take turns in it, which moves the counts it holds to
// their ShipRate.
func TestStateUpdateRatesCount(t *testing.T) {
	server := netip.MustParseAddrPort("10.0.0.1:22101")
	client := netip.MustParseAddrPort("10.0.0.2:40000")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(7, 8))
	const maxRates = 40
	var got []*Session
	b := NewBuilder(Options{MaxShipRates: maxRates}, func(s *Session) { got = append(got, s) })
	type key struct {
		id  game.ObjectID
		dir game.Direction
	}
	want := map[key]int{}
	last := map[key]time.Time{}
	var order []key
	for i := range 20000 {
		k := key{game.ObjectID(0x3FFFFFFF + 0x40000*rng.IntN(60)), game.Direction(1 + rng.IntN(2))}
		if i < 3000 {
			k.id = game.ObjectID(0x3FFFFFFF + 0x40000*rng.IntN(3+i/100)) // few at first, more later
		}
		su := &game.StateUpdate{Object: k.id}
		p := su.Append(nil)
		r := &flow.Record{Kind: flow.KindMessage, Frame: i + 1, Time: t0.Add(time.Duration(i) * time.Millisecond),
			Server: server, Client: client, Dir: k.dir, MsgCount: 1,
			Msg:  &dissect.Message{Type: dissect.TypeData, Payload: p},
			Game: &game.Result{Msg: su}, Payload: p}
		b.Add(r)
		if _, ok := want[k]; !ok {
			if len(order) >= maxRates {
				continue
			}
			order = append(order, k)
		}
		want[k]++
		last[k] = r.Time
	}
	b.Finish()
	hints := map[int]int{}
	for _, k := range order {
		hints[rateKey(k).hint()]++
	}
	if len(hints) == len(order) {
		t.Fatalf("no two of the %d keys share a hint: taking turns in one is not tested", len(order))
	}
	if len(got) != 1 {
		t.Fatalf("%d sessions", len(got))
	}
	rates := got[0].StateUpdates
	if len(rates) != len(order) {
		t.Fatalf("%d rates, want %d", len(rates), len(order))
	}
	for i, u := range rates {
		k := order[i]
		if u.Object != k.id || u.Dir != k.dir.String() || u.Count != want[k] || !u.Last.Equal(last[k]) {
			t.Fatalf("rate %d: %v %s %d last %v, want %v %s %d last %v", i, u.Object, u.Dir, u.Count, u.Last, k.id, k.dir, want[k], last[k])
		}
	}
}
