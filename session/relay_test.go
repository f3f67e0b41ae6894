package session

import (
	"math/rand/v2"
	"testing"
	"time"
)

// sliceRelays is the obvious form of the relay rule, a slice scanned in
// full, to check the chained queue against.
type sliceRelays struct {
	window time.Duration
	memory int
	queue  []*sliceEntry
}

type sliceEntry struct {
	h      uint64
	src    *live
	t      stamp
	to     map[*live]bool
	copies int
}

func (rt *sliceRelays) put(h uint64, src *live, t stamp) {
	rt.expire(t)
	if len(rt.queue) >= rt.memory {
		rt.queue = rt.queue[len(rt.queue)-rt.memory+1:]
	}
	rt.queue = append(rt.queue, &sliceEntry{h: h, src: src, t: t, to: map[*live]bool{}})
}

func (rt *sliceRelays) match(h uint64, to *live, t stamp) *sliceEntry {
	rt.expire(t)
	for _, e := range rt.queue { // oldest first
		if e.h == h && e.src != to && !e.to[to] && !t.Before(e.t) && t.Sub(e.t) <= rt.window {
			e.to[to] = true
			e.copies++
			return e
		}
	}
	return nil
}

func (rt *sliceRelays) expire(now stamp) {
	for len(rt.queue) > 0 && now.Sub(rt.queue[0].t) > rt.window {
		rt.queue = rt.queue[1:]
	}
}

// Random puts and matches over few hashes, with repeated times, times going
// back and a small memory: every match must come out as with the slice.
func TestRelaysMatchesSlice(t *testing.T) {
	srcs := []*live{{}, {}, {}, {}}
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 11))
		rt := Relays[*live]{Window: 2 * time.Second, Memory: 1 + rng.IntN(300)}
		ref := sliceRelays{window: rt.Window, memory: rt.Memory}
		now := stampOf(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		hashes := 1 + rng.IntN(500)
		for i := range 30000 {
			switch r := rng.IntN(100); {
			case r < 40: // same time
			case r < 42: // back
				now.Sec -= int64(rng.IntN(3))
			case r < 44: // a long silence
				now.Sec += int64(rng.IntN(5))
			default:
				now.Nsec += int32(rng.IntN(60)) * 1e6
				if now.Nsec >= 1e9 {
					now.Sec, now.Nsec = now.Sec+1, now.Nsec-1e9
				}
			}
			h := uint64(rng.IntN(hashes)) * 0x9E3779B97F4A7C15
			c := srcs[rng.IntN(len(srcs))]
			if rng.IntN(3) == 0 {
				rt.put(h, c, now)
				ref.put(h, c, now)
				continue
			}
			e, w := rt.match(h, c, now, stamp{}), ref.match(h, c, now)
			switch {
			case (e == nil) != (w == nil):
				t.Fatalf("seed %d step %d: matched %v, want %v", seed, i, e != nil, w != nil)
			case e != nil && (e.src != w.src || e.t != w.t || e.copies != w.copies):
				t.Fatalf("seed %d step %d: matched %p at %v copy %d, want %p at %v copy %d",
					seed, i, e.src, e.t, e.copies, w.src, w.t, w.copies)
			}
			if len(rt.queue) != len(ref.queue) {
				t.Fatalf("seed %d step %d: %d queued, want %d", seed, i, len(rt.queue), len(ref.queue))
			}
		}
	}
}

// The relay rule on crafted traffic of one server with three clients A, B
// and C: what each client's messages count as relayed, and the copies.
func TestRelaysRule(t *testing.T) {
	const joinedLate = "a message sent before the recipient joined is its replication, not a copy"
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	// StartFiring-like payloads: opcode 0x07 and an object id.
	fireA := []byte{0x07, 0xFF, 0xFF, 0xFF, 0x3F, 0x01}
	fireB := []byte{0x07, 0xFF, 0xFF, 0x03, 0x40, 0x01}
	type ev struct {
		at     int // ms
		client string
		send   bool // client to server; otherwise server to client
		p      []byte
	}
	type want struct{ messages, copies, received int }
	tests := []struct {
		name string
		evs  []ev
		want map[string]want // by client; others all zero
	}{
		{"copied to two of three clients", []ev{
			{0, "A", true, fireA}, {30, "B", false, fireA}, {31, "C", false, fireA},
		}, map[string]want{"A": {1, 2, 0}, "B": {0, 0, 1}, "C": {0, 0, 1}}},
		{"one copy lost: copied to one client", []ev{
			{0, "A", true, fireA}, {30, "B", false, fireA},
		}, map[string]want{"A": {1, 1, 0}, "B": {0, 0, 1}}},
		{"identical payload sent twice: two messages, one copy each to each other client", []ev{
			{0, "A", true, fireA}, {10, "A", true, fireA},
			{30, "B", false, fireA}, {31, "C", false, fireA}, {40, "B", false, fireA}, {41, "C", false, fireA},
		}, map[string]want{"A": {2, 4, 0}, "B": {0, 0, 2}, "C": {0, 0, 2}}},
		{"a second copy to the same client is not a copy", []ev{
			{0, "A", true, fireA}, {30, "B", false, fireA}, {40, "B", false, fireA},
		}, map[string]want{"A": {1, 1, 0}, "B": {0, 0, 1}}},
		{"the same bytes back to the sender are not a copy", []ev{
			{0, "A", true, fireA}, {30, "A", false, fireA},
		}, nil},
		{"two clients, two messages, each copied to the third", []ev{
			{0, "A", true, fireA}, {5, "B", true, fireB}, {30, "C", false, fireB}, {31, "C", false, fireA},
		}, map[string]want{"A": {1, 1, 0}, "B": {1, 1, 0}, "C": {0, 0, 2}}},
		{joinedLate, []ev{
			{0, "A", true, fireA}, {500, "B", false, fireA}, {510, "C", false, fireA},
		}, map[string]want{"A": {1, 1, 0}, "C": {0, 0, 1}}},
		{"a copy after the window, or before the message, is not one", []ev{
			{0, "C", false, fireA}, {1, "A", true, fireA}, {2002, "B", false, fireA},
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rt := Relays[string]{}
			got := map[string]want{}
			for _, e := range tt.evs {
				h := MessageHash(e.p)
				if e.send {
					rt.Sent(h, e.client, ms(e.at))
					continue
				}
				joined := time.Time{}
				if tt.name == joinedLate && e.client == "B" {
					joined = ms(400) // B entered the game after A's message
				}
				m, ok := rt.Copied(h, e.client, ms(e.at), joined)
				if !ok {
					continue
				}
				w := got[m.From]
				if m.First {
					w.messages++
				}
				w.copies++
				got[m.From] = w
				w = got[e.client]
				w.received++
				got[e.client] = w
			}
			for _, c := range []string{"A", "B", "C"} {
				if got[c] != tt.want[c] {
					t.Errorf("%s: messages, copies, received %v, want %v", c, got[c], tt.want[c])
				}
			}
		})
	}
}

// A session that closes is forgotten by its server's relay memory, so that
// its live state can serve a later session (Builder.retire): a copy of one
// of its messages still counts as matched but names no sender, and a new
// session in the same memory is a new client, with no copies sent to it
// yet, not the old one.
func TestRelaysForget(t *testing.T) {
	gone, other, peer := &live{}, &live{}, &live{}
	rt := Relays[*live]{Window: 2 * time.Second}
	t0 := stampOf(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	at := func(ms int) stamp { return stampOf(t0.Time().Add(time.Duration(ms) * time.Millisecond)) }
	rt.put(1, gone, at(0))  // gone's message
	rt.put(2, other, at(1)) // other's message, copied to gone below
	if e := rt.match(2, gone, at(2), stamp{}); e == nil || e.src != other {
		t.Fatalf("copy of other's message to gone: %+v", e)
	}
	rt.forget(gone)
	e := rt.match(1, peer, at(3), stamp{})
	if e == nil || e.src != nil || e.copies != 1 {
		t.Fatalf("copy of the forgotten session's message: %+v, want a match with no sender", e)
	}
	// gone's memory, now a new session: other's message was not copied
	// to it yet.
	if e := rt.match(2, gone, at(4), stamp{}); e == nil || e.src != other || e.copies != 2 {
		t.Fatalf("copy of other's message to the new session: %+v, want its second copy", e)
	}
}
