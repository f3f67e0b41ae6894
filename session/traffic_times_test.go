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

// A session's Traffic.First and Last and its LastSeen must be exactly what
// Counts.add and the plain rule (the latest message time, from the start)
// give, whatever the order of the times, around the zero time (before it
// too), with damaged records in between and equal times in other zones.
func TestSessionTimesMatchCounts(t *testing.T) {
	server := netip.MustParseAddrPort("10.0.0.1:22101")
	client := netip.MustParseAddrPort("10.0.0.2:40000")
	zones := []*time.Location{time.UTC, time.FixedZone("x", 3600)}
	msg := &dissect.Message{Type: dissect.TypeData, Payload: []byte{0x1C}}
	for seed := range uint64(300) {
		rng := rand.New(rand.NewPCG(seed, 9))
		base := time.Time{}
		if seed%2 == 1 {
			base = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		}
		var got []*Session
		b := NewBuilder(Options{}, func(s *Session) { got = append(got, s) })
		var want Counts
		var lastSeen time.Time
		n := 2 + rng.IntN(30)
		for i := range n {
			tm := base.Add(time.Duration(rng.IntN(7)-3) * time.Second)
			if base.IsZero() && rng.IntN(4) == 0 {
				tm = time.Time{}
			}
			tm = tm.In(zones[rng.IntN(2)])
			r := &flow.Record{Kind: flow.KindMessage, Frame: i + 1, Time: tm, Server: server, Client: client,
				Src: client, Dst: server, Dir: game.ClientToServer, Msg: msg, MsgCount: 1}
			if i > 0 && rng.IntN(3) == 0 {
				r.Kind, r.Msg = flow.KindDamaged, nil
			}
			b.Add(r)
			want.Add(r)
			switch {
			case i == 0:
				lastSeen = tm
			case r.Kind == flow.KindMessage && tm.After(lastSeen):
				lastSeen = tm
			}
		}
		b.Finish()
		if len(got) != 1 {
			t.Fatalf("seed %d: %d sessions", seed, len(got))
		}
		s := got[0]
		if s.Traffic.First != want.First || s.Traffic.Last != want.Last || s.LastSeen != lastSeen {
			t.Fatalf("seed %d: first %v last %v last seen %v; want %v %v %v", seed,
				s.Traffic.First, s.Traffic.Last, s.LastSeen, want.First, want.Last, lastSeen)
		}
	}
}
