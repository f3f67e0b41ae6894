package synth

import (
	"bytes"
	"sort"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
)

// The stock 2-player session of PROTOCOL.md ("Measured in a stock 2-player
// session"), as shares of each direction's StateUpdates.
var (
	stockFlagsS2C = map[game.StateFlags]float64{0x20: 10539, 0x3E: 5867, 0x36: 1389, 0x3D: 823, 0x32: 719}
	stockFlagsC2S = map[game.StateFlags]float64{0x9E: 6079, 0x96: 1632, 0x92: 900, 0x9D: 796, 0x8E: 214}
	stockTotalS2C = 19997.0
	stockTotalC2S = 10459.0
)

// Opcodes the stock trace shows in one direction only (same section).
var (
	stockServerOnly = []game.Opcode{game.OpPythonEvent, game.OpChecksumRequest, game.OpSettings, game.OpGameInit,
		game.OpChecksumComplete, game.OpMissionInit, game.OpDeletePlayerUI, game.OpDeletePlayerAnim}
	stockClientOnly = []game.Opcode{game.OpCollisionEffect, game.OpNewPlayerInGame, game.OpHostMsg}
	stockRelayed    = []game.Opcode{game.OpStartFiring, game.OpTorpedoFire, game.OpBeamFire, game.OpSetPhaserLevel, game.OpSubsystemStatus}
)

// TestShapeMatchesStockSession generates a 2-player, 10-minute session and
// holds its traffic shape against the stock figures: the top three
// StateUpdate flag values per direction within 8 percentage points of
// their stock share, opcodes in the directions stock sends them, StartFiring
// as duplicate pairs in one datagram, and StartFiring : StopFiring between
// 1.6 and 2.4.
func TestShapeMatchesStockSession(t *testing.T) {
	if testing.Short() {
		t.Skip("generates a 10-minute session")
	}
	b, _ := generate(t, Config{Players: 2, Duration: 10 * time.Minute, Seed: 7}, capture.PCAP, capture.Ethernet)
	rd, err := capture.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	flags := map[game.Direction]map[game.StateFlags]int{game.ClientToServer: {}, game.ServerToClient: {}}
	updates := map[game.Direction]int{}
	counts := map[CountKey]int{}
	startFiring := map[int][]string{} // client-to-server StartFiring bodies by frame
	if _, err := flow.Run(rd, flow.New(flow.Options{}), func(r *flow.Record) bool {
		if r.Game == nil {
			return true
		}
		if r.Err != nil || r.Warning != "" || len(r.Game.Unparsed) > 0 {
			t.Errorf("frame %d: %v %q, %d bytes unparsed", r.Frame, r.Err, r.Warning, len(r.Game.Unparsed))
		}
		op := r.Game.Msg.Opcode()
		counts[CountKey{r.Dir, op}]++
		if su, ok := r.Game.Msg.(*game.StateUpdate); ok {
			flags[r.Dir][su.Flags]++
			updates[r.Dir]++
		}
		if op == game.OpStartFiring && r.Dir == game.ClientToServer {
			startFiring[r.Frame] = append(startFiring[r.Frame], r.Game.Msg.(*game.EventForward).String())
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}

	checkTopFlags(t, "server to client", flags[game.ServerToClient], updates[game.ServerToClient], stockFlagsS2C, stockTotalS2C)
	checkTopFlags(t, "client to server", flags[game.ClientToServer], updates[game.ClientToServer], stockFlagsC2S, stockTotalC2S)

	for _, op := range stockServerOnly {
		if n := counts[CountKey{game.ClientToServer, op}]; n != 0 {
			t.Errorf("%v: %d client-to-server, stock sends it from the server only", op, n)
		}
		if counts[CountKey{game.ServerToClient, op}] == 0 {
			t.Errorf("%v: never sent by the server", op)
		}
	}
	for _, op := range stockClientOnly {
		if n := counts[CountKey{game.ServerToClient, op}]; n != 0 {
			t.Errorf("%v: %d server-to-client, stock keeps it at the host", op, n)
		}
	}
	for _, op := range stockRelayed {
		c2s, s2c := counts[CountKey{game.ClientToServer, op}], counts[CountKey{game.ServerToClient, op}]
		if c2s == 0 {
			t.Errorf("%v: never sent", op)
		}
		// Relayed one for one with two players, but for what a client
		// sends while the other is not (yet, or any longer) in the game.
		if s2c > c2s || float64(s2c) < 0.9*float64(c2s) {
			t.Errorf("%v: %d client-to-server, %d relayed; stock relays one for one", op, c2s, s2c)
		}
	}
	for _, op := range []game.Opcode{game.OpExplosion, game.OpStartCloaking, game.OpStopCloaking} {
		if n := counts[CountKey{game.ClientToServer, op}] + counts[CountKey{game.ServerToClient, op}]; n != 0 {
			t.Errorf("%v: %d sent; the stock traces have none", op, n)
		}
	}

	for frame, bodies := range startFiring {
		if len(bodies)%2 != 0 || bodies[0] != bodies[len(bodies)-1] {
			t.Errorf("frame %d: StartFiring %q is not a duplicate pair", frame, bodies)
		}
	}
	start, stop := counts[CountKey{game.ClientToServer, game.OpStartFiring}], counts[CountKey{game.ClientToServer, game.OpStopFiring}]
	if stop == 0 {
		t.Fatal("no StopFiring")
	}
	if r := float64(start) / float64(stop); r < 1.6 || r > 2.4 {
		t.Errorf("StartFiring : StopFiring = %d : %d = %.2f, stock about 2", start, stop, r)
	}
	t.Logf("StartFiring %d, StopFiring %d, PythonEvent %d (server to client), updates %v",
		start, stop, counts[CountKey{game.ServerToClient, game.OpPythonEvent}], updates)
}

// checkTopFlags compares the three most common stock flag values of one
// direction with their shares in got.
func checkTopFlags(t *testing.T, dir string, got map[game.StateFlags]int, total int, stock map[game.StateFlags]float64, stockTotal float64) {
	t.Helper()
	if total == 0 {
		t.Fatalf("%s: no StateUpdates", dir)
	}
	top := make([]game.StateFlags, 0, len(stock))
	for f := range stock {
		top = append(top, f)
	}
	sort.Slice(top, func(i, j int) bool { return stock[top[i]] > stock[top[j]] })
	for _, f := range top[:3] {
		want := 100 * stock[f] / stockTotal
		share := 100 * float64(got[f]) / float64(total)
		t.Logf("%s 0x%02X: %.1f%% (stock %.1f%%)", dir, uint8(f), share, want)
		if d := share - want; d > 8 || d < -8 {
			t.Errorf("%s flags 0x%02X: %.1f%% of StateUpdates, stock %.1f%% (more than 8 points apart)", dir, uint8(f), share, want)
		}
	}
}
