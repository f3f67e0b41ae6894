package native_test

import (
	"bytes"
	"context"
	"net"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/server/native"
	"github.com/bcwire/bcwire/server/replay"
	"github.com/bcwire/bcwire/session/diff"
)

// verifyCapture plays the client side of a bundled capture against a
// fresh native server with the adaptive verifier (asap timing) and checks
// every session's join and, with several players, the relay. It returns
// the verifier's result and a pcap of the server's traffic.
func verifyCapture(t *testing.T, file string) (*replay.Result, []byte) {
	t.Helper()
	c, err := replay.Load("../../testdata/pcaps/"+file, replay.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tap := newPcapTap(t)
	ls := startServer(t, native.Options{Tap: tap.tap})
	// The deadline only guards against a hang: with other test binaries
	// loading both cores, battle alone has taken over 60 s.
	//
	// The answer timeout is the verifier's default, 1 s. It was 150 ms
	// (a faster run: every message the native server does not send, such
	// as a PythonEvent it does not simulate, costs one timeout), but
	// beside two busy loops a checksum request then came later than that:
	// the client sent its captured response first, the round counted as
	// unasked, and battle failed with "4 checksum rounds". Answers on
	// loopback take milliseconds; 1 s leaves a loaded machine a wide margin.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	start := time.Now()
	res, err := replay.Verify(ctx, c, replay.VerifyOptions{Target: ls.addr, Mode: replay.ModeAdaptive,
		Timing: replay.TimingASAP, AnswerTimeout: time.Second,
		Listen: func() (net.PacketConn, error) { return net.ListenPacket("udp4", "127.0.0.1:0") }})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	took := time.Since(start)
	ls.stop()
	sm := res.Summary
	t.Logf("%s: %d sessions, %d joined: %d identical, %d equivalent, %d different, %d missing, %d unexpected, %d not due; %s",
		file, sm.Sessions, sm.Joined, sm.Identical, sm.Equivalent, sm.Different, sm.Missing, sm.Unexpected, sm.NotDue, took.Round(time.Millisecond))
	if sm.Sessions != len(c.Sessions) || sm.Joined != sm.Sessions {
		t.Errorf("%s: %d of %d sessions joined", file, sm.Joined, len(c.Sessions))
	}
	relayed := 0 // sessions after the first that received relayed messages
	for _, s := range res.Sessions {
		t.Logf("  session %d: %d identical, %d equivalent, %d different, %d missing, %d unexpected, %d not due; %d relayed received; divergent kinds: %s",
			s.Session, s.Identical, s.Equivalent, s.Different, s.Missing, s.Unexpected, s.NotDue, s.Relayed, divergentKinds(s))
		if s.Abandoned != "" {
			t.Errorf("session %d abandoned: %s", s.Session, s.Abandoned)
		}
		if s.ChecksumRounds != 5 || !s.Bundle || !s.MissionInit {
			t.Errorf("session %d: %d checksum rounds, bundle %v, MISSION_INIT %v", s.Session, s.ChecksumRounds, s.Bundle, s.MissionInit)
		}
		// The first session's asap script can run out before the others
		// are in the game and firing (the stock-shaped battle fires at
		// about 0.16 events a player-second), so it may see none; on a
		// machine loaded to 12-15 on two cores a later one did too (its
		// script ran out before the others got to firing): which sessions
		// overlap is the load's doing. The relay itself must show: some
		// later session receives the others' messages (below).
		if s.Relayed > 0 && s.Session > 1 {
			relayed++
		} else if len(c.Sessions) > 1 && s.Session > 1 {
			t.Logf("session %d received none of the other clients' game messages (timing: its script may end before the others fire)", s.Session)
		}
		// The join itself (everything up to and including MISSION_INIT's
		// datagram) does not diverge. The GameSpy reply's configured fields
		// are tolerated by the rules; the SCORE roster that comes with
		// MISSION_INIT lists the players in the game at that moment, which
		// an asap run does not reproduce, so a SCORE may be missing or
		// extra there.
		for _, st := range s.Steps {
			roster := len(st.Expected) > 0 && msgName(st.Expected[0]) == "SCORE" || len(st.Got) > 0 && msgName(st.Got[0]) == "SCORE"
			if !st.IsDivergence() || roster || st.Step < 0 || !joinStep(c.Sessions[s.Session-1], st.Step) {
				continue
			}
			// A late joiner is sent an ObjCreateTeam for every ship in play.
			// Which ships the other players have created by then depends on
			// how far their own asap replays have got, which the load on
			// the machine decides, not the server: a missing one is timing.
			if st.Status == replay.StatusMissing && allShipCreations(st.Expected) {
				t.Logf("session %d: a ship in play was not created yet when it joined (timing):\n%s", s.Session, st.Text())
				continue
			}
			t.Errorf("session %d: the join diverges:\n%s", s.Session, st.Text())
		}
	}
	if len(c.Sessions) > 1 && relayed == 0 {
		t.Errorf("%s: no session after the first received any of the other clients' game messages: the server relays nothing", file)
	}
	return res, tap.bytes(t)
}

// allShipCreations reports whether every line of a step's messages is an
// ObjCreate or ObjCreateTeam.
func allShipCreations(lines []string) bool {
	for _, l := range lines {
		if n := msgName(l); n != "ObjCreateTeam" && n != "ObjCreate" {
			return false
		}
	}
	return len(lines) > 0
}

// joinStep reports whether script step i comes no later than the
// server's MISSION_INIT datagram.
func joinStep(sc *replay.Script, i int) bool {
	for j := range sc.Steps {
		d := &sc.Steps[j]
		if !d.IsClient() && !d.GameSpy && strings.Contains(strings.Join(replay.Describe(d.Plain, game.ServerToClient), "\n"), "MISSION_INIT") {
			return i <= j
		}
	}
	return true
}

// divergentKinds summarises a session's divergences by status and the
// name of the captured (or received) message.
func divergentKinds(s *replay.SessionResult) string {
	n := map[string]int{}
	for _, st := range s.Steps {
		if !st.IsDivergence() {
			continue
		}
		line := ""
		if len(st.Expected) > 0 {
			line = st.Expected[0]
		} else if len(st.Got) > 0 {
			line = st.Got[0]
		}
		n[st.Status+" "+msgName(line)]++
	}
	var out []string
	for k, v := range n {
		out = append(out, k+" ×"+strconv.Itoa(v))
	}
	sort.Strings(out)
	return strings.Join(out, ", ")
}

// msgName is the message name in a replay.Step line ("data seq=3  Name ...").
func msgName(line string) string {
	if i := strings.Index(line, "  "); i >= 0 {
		line = line[i+2:]
	} else if strings.HasPrefix(line, "gamespy") {
		return "gamespy"
	}
	if f := strings.Fields(line); len(f) > 0 {
		return f[0]
	}
	return "?"
}

// The adaptive verifier plays the client side of every bundled capture
// against the native server; the capture of the server taken during the
// four-player battle is compared by the diff engine with the stock-like
// capture of four players.
func TestAdaptiveVerifyBundledCaptures(t *testing.T) {
	for _, f := range []string{"join.pcap", "duel.pcapng", "lossy.pcap", "sll.pcap"} {
		t.Run(f, func(t *testing.T) { verifyCapture(t, f) })
	}
	t.Run("battle.pcap", func(t *testing.T) {
		_, pcap := verifyCapture(t, "battle.pcap")
		diffNativeAgainstStockLike(t, pcap, "battle.pcap")
	})
}

// diffNativeAgainstStockLike compares a capture of the native server with
// the stock-like capture file of the same player count: no difference in
// the handshake phase. The other phases' differences are logged; they
// come from what the native server does not simulate (Explosion and the
// kill's messages) and from the asap replay (rates, roster, retransmissions
// to clients that have gone): see the report of issue #8.
func diffNativeAgainstStockLike(t *testing.T, pcap []byte, file string) {
	rules := diff.DefaultRules()
	read := func(name string, b []byte) *diff.Capture {
		rd, err := capture.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		c, err := diff.Read(name, rd, nil, &rules)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	stockBytes, err := os.ReadFile("../../testdata/pcaps/" + file)
	if err != nil {
		t.Fatal(err)
	}
	ours, stock := read("native.pcap", pcap), read(file, stockBytes)
	if len(ours.Sessions) != len(stock.Sessions) {
		t.Fatalf("%d sessions in the native capture, %d in the stock-like one", len(ours.Sessions), len(stock.Sessions))
	}
	res := diff.Compare(ours, stock, &rules)
	byPhase := map[diff.Phase]int{}
	for _, d := range res.Differences {
		byPhase[d.Phase]++
		t.Logf("%s %s %s: %s", d.Phase, d.Severity, d.Kind, d.Summary)
		// The server holds the connect's ACK for the datagram that carries
		// its next answer, as stock does, and sends it alone one tick later
		// when the client's checksum response is late; on a loaded machine
		// the asap client is late now and then. That standalone ACK is the
		// client's timing, not the server's behaviour.
		if d.Phase == diff.PhaseHandshake && strings.HasSuffix(d.Summary, ": ours adds ack") {
			t.Logf("tolerated (client timing): %s", d.Summary)
			continue
		}
		if d.Phase == diff.PhaseHandshake {
			t.Errorf("handshake difference: %s: %s\n ours:  %s\n stock: %s", d.Kind, d.Summary,
				strings.Join(d.Ours, " | "), strings.Join(d.Stock, " | "))
		}
	}
	t.Logf("differences by phase: handshake %d, lobby %d, gameplay %d, disconnect %d; shared findings %d",
		byPhase[diff.PhaseHandshake], byPhase[diff.PhaseLobby], byPhase[diff.PhaseGameplay], byPhase[diff.PhaseDisconnect], len(res.Shared))
}
