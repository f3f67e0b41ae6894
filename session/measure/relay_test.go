package measure

import (
	"math/rand/v2"
	"testing"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/internal/wallclock"
)

// TestStateHashIsMessageHash: the hash relays.take remembers a
// client's StateUpdate by, inline for 16 to 32 bytes, is flow.MessageHash
// of its payload at every length (a server's copy is matched by the same
// code, but the comment says it is MessageHash).
func TestStateHashIsMessageHash(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	rl := relays{keepUntil: keepNone, buckets: make([]int64, minBuckets)}
	cs := &clientState{srv: &serverState{}}
	now := wallclock.Time{Sec: 1 << 40}
	for n := range 70 {
		for range 20 {
			p := make([]byte, n)
			for i := range p {
				p[i] = byte(rng.Uint32())
			}
			rl.take(cs, game.ClientToServer, game.OpStateUpdate, 0, &dissect.Message{Payload: p}, now)
			if got, want := rl.queue[len(rl.queue)-1].hash, flow.MessageHash(p); got != want {
				t.Fatalf("%d bytes %x: hash %#x, MessageHash %#x", n, p, got, want)
			}
		}
	}
}
