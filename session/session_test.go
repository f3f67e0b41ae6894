package session

import (
	"encoding/json"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
)

func TestNormalJoin(t *testing.T) {
	h := newHarness(t, Options{})
	c, s := testClient, testServer
	ship := game.PlayerObjectID(0)

	h.connect(c, 2)
	h.checksums(c)
	h.lobby(c, 0)
	h.step(4 * time.Second) // choosing a ship
	h.deliver(c, s, h.reliable(c, dissect.TypeData, objCreateTeam(0, 2, ship, 5, "Cady2")))
	h.deliver(s, c, h.control(s, dissect.TypePeerInfo, keepalive(2, c, "Cady2")))
	for i := range 50 {
		h.send(c, s, unreliable(stateUpdate(ship, float32(i)/10)))
		h.send(s, c, unreliable(stateUpdate(ship, float32(i)/10)))
		h.step(100 * time.Millisecond)
		if i%10 == 9 {
			h.deliver(c, s, h.control(c, dissect.TypePeerInfo, keepalive(2, c, "Cady2")))
		}
	}
	h.deliver(c, s, h.gameMsgs(c, &game.Chat{Op: game.OpChat, SenderID: 2, Text: "gg"})...)
	h.deliver(c, s, h.control(c, dissect.TypeDisconnect, dissect.Control{Kind: "disconnect", Slot: slotPtr(2), Addr: c.Addr()}))
	end := h.now.Add(-40 * time.Millisecond)
	h.finish()

	ss := h.only()
	if ss.Slot != 2 || ss.GameSlot != 0 || ss.Name != "Cady2" || ss.Ship != "Sovereign" || ss.Team != 2 {
		t.Errorf("identity: slot %d game slot %d name %q ship %q team %d", ss.Slot, ss.GameSlot, ss.Name, ss.Ship, ss.Team)
	}
	if ss.MidCapture || ss.Reached != PhaseInGame || ss.EndReason != EndDisconnect || ss.EndBy != "client" || len(ss.Inferred) != 0 {
		t.Errorf("state: mid %v reached %v end %v by %q inferred %v", ss.MidCapture, ss.Reached, ss.EndReason, ss.EndBy, ss.Inferred)
	}
	p := ss.Phases
	order := []struct {
		name string
		t    *time.Time
	}{{"connect", p.Connect}, {"connect_reply", p.ConnectReply}, {"checksum_done", p.ChecksumDone},
		{"lobby", p.Lobby}, {"new_player", p.NewPlayer}, {"mission_init", p.MissionInit},
		{"in_game", p.InGame}, {"first_state_update", p.FirstStateUpdate}, {"end", p.End}}
	var prev time.Time
	for _, o := range order {
		if o.t == nil {
			t.Errorf("phase %s missing", o.name)
			continue
		}
		if o.t.Before(prev) {
			t.Errorf("phase %s at %v is before the previous phase (%v)", o.name, o.t, prev)
		}
		prev = *o.t
	}
	if !p.Connect.Equal(testStart) || !p.End.Equal(end) {
		t.Errorf("connect %v end %v, want %v and %v", p.Connect, p.End, testStart, end)
	}
	if p.Destroyed != nil || p.Respawned != nil {
		t.Errorf("destroyed/respawned set without a kill")
	}
	if len(ss.Checksums) != 5 {
		t.Fatalf("%d checksum rounds, want 5", len(ss.Checksums))
	}
	for i, want := range []game.ChecksumRound{0, 1, 2, 3, 0xFF} {
		rd := ss.Checksums[i]
		if rd.Round != want || rd.RTT() <= 0 {
			t.Errorf("checksum %d: round %v rtt %v", i, rd.Round, rd.RTT())
		}
	}
	if ss.ShipsCreated != 1 || len(ss.Ships) != 1 || ss.Ships[0].ID != ship {
		t.Errorf("ships: created %d %+v", ss.ShipsCreated, ss.Ships)
	}
	if len(ss.Chat) != 1 || ss.Chat[0].Text != "gg" || ss.Chat[0].Sender != "Cady2" || ss.Chat[0].Team {
		t.Errorf("chat: %+v", ss.Chat)
	}
	if ka := ss.Keepalive.Client; ka.Count != 5 || ka.Mean < 900*time.Millisecond || ka.Mean > 1100*time.Millisecond {
		t.Errorf("client keepalive %+v", ka)
	}
	if len(ss.StateUpdates) != 2 {
		t.Fatalf("state update rates: %+v", ss.StateUpdates)
	}
	for _, u := range ss.StateUpdates {
		if u.Object != ship || u.Count != 50 || u.PerSecond < 9 || u.PerSecond > 11 {
			t.Errorf("state updates %+v", u)
		}
	}
	for _, d := range []Channels{ss.Reliability.ClientToServer, ss.Reliability.ServerToClient} {
		tot := d.Total()
		if tot.Reliable == 0 || tot.Retransmissions+tot.Duplicates+tot.Unacked+tot.Gaps+tot.OutOfOrder+tot.UnmatchedAcks != 0 || tot.Acked != tot.Reliable {
			t.Errorf("reliability %+v", tot)
		}
		if d.Data.RTT.Samples == 0 || d.Data.RTT.Min != 20*time.Millisecond {
			t.Errorf("rtt %+v", d.Data.RTT)
		}
	}
	if ss.Damaged != 0 {
		t.Errorf("%d damaged records: %+v", ss.Damaged, ss.Events)
	}
	if got := ss.Traffic.Opcodes[0][game.OpStateUpdate].Count; got != 50 {
		t.Errorf("traffic counted %d C->S StateUpdates, want 50", got)
	}
}

func TestMidCapture(t *testing.T) {
	h := newHarness(t, Options{})
	c, s := testClient, testServer
	h.peer(c).id = 3
	ship := game.PlayerObjectID(1)
	for i := range 30 {
		h.send(c, s, unreliable(stateUpdate(ship, float32(i))))
		h.send(s, c, unreliable(stateUpdate(ship, float32(i))))
		h.step(100 * time.Millisecond)
	}
	h.deliver(s, c, h.gameMsgs(s, &game.ChecksumComplete{})...) // a stray one must not move the session back
	h.finish()

	ss := h.only()
	if !ss.MidCapture || ss.Reached != PhaseInGame || ss.EndReason != EndOpen {
		t.Errorf("mid %v reached %v end %v", ss.MidCapture, ss.Reached, ss.EndReason)
	}
	if ss.Phases.Connect != nil || ss.Phases.ConnectReply != nil || ss.Phases.Lobby != nil || ss.Phases.End != nil {
		t.Errorf("phases before the capture should be null: %+v", ss.Phases)
	}
	if ss.Phases.InGame == nil || !ss.Phases.InGame.Equal(testStart) || len(ss.Inferred) != 1 || ss.Inferred[0] != "in_game" {
		t.Errorf("in_game %v inferred %v", ss.Phases.InGame, ss.Inferred)
	}
	if ss.Slot != 3 || ss.GameSlot != 1 {
		t.Errorf("slot %d game slot %d, want 3 and 1 (from the peer byte and the ship's id)", ss.Slot, ss.GameSlot)
	}
}

func TestLostAckRetransmission(t *testing.T) {
	h := newHarness(t, Options{})
	c, s := testClient, testServer
	h.peer(c).id = 2
	chat := h.gameMsgs(c, &game.Chat{Op: game.OpTeamChat, SenderID: 2, Text: "hello"})[0]
	h.send(c, s, chat)
	h.step(30 * time.Millisecond)
	h.send(s, c, ackOf(chat)) // lost on its way to the client
	h.step(970 * time.Millisecond)
	h.send(c, s, chat) // so the client sends it again
	h.step(30 * time.Millisecond)
	h.send(s, c, ackOf(chat))
	h.finish()

	ss := h.only()
	st := ss.Reliability.ClientToServer.Data
	want := ChannelStats{Reliable: 1, Retransmissions: 1, Duplicates: 1, Acked: 1, DuplicateAcks: 1}
	st.RTT = RTT{}
	if st != want {
		t.Errorf("got  %+v\nwant %+v", st, want)
	}
	if rtt := ss.Reliability.ClientToServer.Data.RTT; rtt.Samples != 1 || rtt.Median != 30*time.Millisecond {
		t.Errorf("rtt %+v, want one 30ms sample (the retransmission's ACK is ambiguous)", rtt)
	}
	if len(ss.Chat) != 1 || !ss.Chat[0].Team {
		t.Errorf("chat logged %d times (%+v), want once, as team chat", len(ss.Chat), ss.Chat)
	}
}

func TestFragmentLostThenRetransmitted(t *testing.T) {
	h := newHarness(t, Options{})
	c, s := testClient, testServer
	h.peer(c).id = 2
	big := (&game.ChecksumRequest{Round: 2, Dir: strings.Repeat("d", 1000), Filter: "*.pyc", Recursive: true}).Append(nil)
	m := h.reliable(s, dissect.TypeData, nil)
	var frags []dissect.Message
	for i := range 3 {
		f := m
		f.Fragment, f.FragIndex = true, uint8(i)
		if i == 0 {
			f.FragTotal = 3
		}
		f.Payload = big[i*len(big)/3 : (i+1)*len(big)/3]
		frags = append(frags, f)
	}
	h.send(s, c, frags[0])
	h.send(s, c, frags[1]) // lost after the capture point
	h.send(s, c, frags[2])
	h.step(40 * time.Millisecond)
	h.send(c, s, ackOf(frags[0]), ackOf(frags[2]))
	h.step(960 * time.Millisecond)
	h.send(s, c, frags[1])
	h.step(40 * time.Millisecond)
	h.send(c, s, ackOf(frags[1]))
	h.finish()

	ss := h.only()
	st := ss.Reliability.ServerToClient.Data
	if st.Reliable != 3 || st.Fragments != 3 || st.Retransmissions != 1 || st.Duplicates != 0 ||
		st.Acked != 3 || st.Unacked != 0 || st.RTT.Samples != 2 || st.Gaps != 0 {
		t.Errorf("%+v", st)
	}
	if len(ss.Checksums) != 1 || ss.Checksums[0].Round != 2 || ss.Checksums[0].Request == nil {
		t.Errorf("reassembled checksum request not seen once: %+v", ss.Checksums)
	}
	if ss.Damaged != 0 {
		t.Errorf("damaged: %+v", ss.Events)
	}
}

func TestSequenceGapsAndUnacked(t *testing.T) {
	h := newHarness(t, Options{})
	c, s := testClient, testServer
	h.peer(c).id = 2
	data := func(seq uint16) dissect.Message {
		return dissect.Message{Type: dissect.TypeData, Reliable: true, Seq: seq, Payload: []byte{byte(game.OpRestartGame)}}
	}
	for _, seq := range []uint16{10, 11, 13, 12, 17} {
		h.send(s, c, data(seq))
		h.step(10 * time.Millisecond)
	}
	h.send(c, s, ackOf(data(10)), ackOf(data(99)))
	h.finish()

	st := h.only().Reliability.ServerToClient.Data
	// 13 skips 12 (which arrives late), 17 skips 14-16.
	if st.Reliable != 5 || st.Gaps != 2 || st.Missing != 3 || st.OutOfOrder != 1 ||
		st.Acked != 1 || st.Unacked != 4 || st.UnmatchedAcks != 1 {
		t.Errorf("%+v", st)
	}
}

func TestTimeout(t *testing.T) {
	h := newHarness(t, Options{})
	c, s := testClient, testServer
	h.connect(c, 2)
	last := h.now.Add(-10 * time.Millisecond)
	// Silence from this client; another client's traffic moves the clock.
	h.peer(testClient2).id = 3
	for range 50 {
		h.step(time.Second)
		h.send(testClient2, s, unreliable(stateUpdate(game.PlayerObjectID(1), 0)))
	}
	if len(h.sessions) != 1 {
		t.Fatalf("%d sessions emitted before the end, want the timed-out one", len(h.sessions))
	}
	ss := h.sessions[0]
	if ss.EndReason != EndTimeout || ss.Phases.End == nil || !ss.Phases.End.Equal(last) || ss.Reached != PhaseChecksum {
		t.Errorf("end %v at %v (want %v), reached %v", ss.EndReason, ss.Phases.End, last, ss.Reached)
	}
	if h.b.Live() != 1 {
		t.Errorf("%d live sessions, want 1", h.b.Live())
	}
	// The client comes back: a new session, seen mid-way.
	h.send(c, s, unreliable(stateUpdate(game.PlayerObjectID(0), 0)))
	h.finish()
	if len(h.sessions) != 3 {
		t.Fatalf("%d sessions, want 3", len(h.sessions))
	}
	for _, ss := range h.sessions[1:] {
		if !ss.MidCapture || ss.EndReason != EndOpen {
			t.Errorf("%v: mid %v end %v", ss.Client, ss.MidCapture, ss.EndReason)
		}
	}
}

func TestBoot(t *testing.T) {
	h := newHarness(t, Options{})
	c, s := testClient, testServer
	h.connect(c, 2)
	h.deliver(c, s, h.gameMsgs(c, &game.ChecksumResponse{Round: 0, DirHash: 1})...)
	h.deliver(s, c, h.gameMsgs(s, &game.ChecksumFail{Op: game.OpVersionMismatch, File: "scripts/App.pyc"})...)
	boot := h.control(s, dissect.TypeBoot, dissect.Control{Kind: "boot", Extra: []byte{4}})
	h.send(s, c, boot)
	h.step(time.Second)
	h.send(s, c, boot) // retransmitted while lingering: counted, not a new session
	h.step(20 * time.Millisecond)
	h.send(c, s, ackOf(boot))
	h.step(time.Second)
	h.connect(c, 2) // tries again
	h.finish()

	if len(h.sessions) != 2 {
		t.Fatalf("%d sessions, want 2", len(h.sessions))
	}
	ss := h.sessions[0]
	if ss.EndReason != EndBoot || ss.Reached != PhaseChecksum || ss.Phases.End == nil {
		t.Errorf("end %v reached %v", ss.EndReason, ss.Reached)
	}
	kinds := map[string]int{}
	for _, e := range ss.Events {
		kinds[e.Kind]++
	}
	if kinds[EventChecksumFail] != 1 || kinds[EventBoot] != 1 {
		t.Errorf("events %+v", ss.Events)
	}
	if st := ss.Reliability.ServerToClient.Control; st.Retransmissions != 1 || st.Acked != 2 || st.Reliable != 2 {
		t.Errorf("boot delivery %+v", st)
	}
	if next := h.sessions[1]; next.MidCapture || next.Phases.Connect == nil || next.EndReason != EndOpen {
		t.Errorf("second session: mid %v connect %v end %v", next.MidCapture, next.Phases.Connect, next.EndReason)
	}
}

func TestRetransmitBurst(t *testing.T) {
	h := newHarness(t, Options{})
	c, s := testClient, testServer
	h.peer(c).id = 2
	m := h.gameMsgs(s, &game.RestartGame{})[0]
	for range 6 {
		h.send(s, c, m)
		h.step(300 * time.Millisecond)
	}
	h.finish()
	ss := h.only()
	var bursts []Event
	for _, e := range ss.Events {
		if e.Kind == EventRetransmitBurst {
			bursts = append(bursts, e)
		}
	}
	if len(bursts) != 1 || !strings.HasPrefix(bursts[0].Text, "5 retransmissions in 1.2s: S->C data 5") {
		t.Errorf("bursts %+v", bursts)
	}
	if st := ss.Reliability.ServerToClient.Data; st.Unacked != 1 || st.Retransmissions != 5 {
		t.Errorf("%+v", st)
	}
}

func TestRelayKillsAndScores(t *testing.T) {
	h := newHarness(t, Options{})
	a, b, s := testClient, testClient2, testServer
	h.peer(a).id, h.peer(b).id = 2, 3
	shipA, shipB := game.PlayerObjectID(0), game.PlayerObjectID(1)
	// Both players pick a ship; the server relays each creation to the other.
	createA := objCreateTeam(0, 0, shipA, 1, "Alice")
	createB := objCreateTeam(1, 1, shipB, 6, "Bob")
	h.deliver(a, s, h.reliable(a, dissect.TypeData, createA))
	h.deliver(s, b, h.reliable(s, dissect.TypeData, createA))
	h.deliver(b, s, h.reliable(b, dissect.TypeData, createB))
	h.deliver(s, a, h.reliable(s, dissect.TypeData, createB))
	// Alice chats; the server relays the line to Bob.
	line := &game.Chat{Op: game.OpChat, SenderID: 2, Text: "hi"}
	h.send(a, s, h.gameMsgs(a, line)...)
	h.step(5 * time.Millisecond)
	h.send(s, b, h.gameMsgs(s, line)...)
	// Alice kills Bob: every client gets the ScoreChange (stock deaths send
	// no DestroyObject).
	kill := &game.ScoreChange{KillerID: 2, KillerKills: 1, KillerScore: 100, VictimID: 3, VictimDeaths: 1}
	for _, to := range []netip.AddrPort{a, b} {
		h.send(s, to, h.gameMsgs(s, kill)...)
	}
	h.step(5 * time.Second)
	h.deliver(b, s, h.reliable(b, dissect.TypeData, objCreateTeam(1, 1, shipB+1, 7, "Bob")))
	// Alice leaves; the host removes her ship from Bob's game.
	h.deliver(a, s, h.control(a, dissect.TypeDisconnect, dissect.Control{Kind: "disconnect", Slot: slotPtr(2), Addr: a.Addr()}))
	h.deliver(s, b, h.reliable(s, dissect.TypeData, destroyObject(shipA)))
	h.finish()

	if len(h.sessions) != 2 {
		t.Fatalf("%d sessions", len(h.sessions))
	}
	alice, bob := h.sessions[0], h.sessions[1]
	if alice.Client != a {
		alice, bob = bob, alice
	}
	if alice.Relay.Messages != 2 || alice.Relay.Copies != 2 || alice.Relay.FanOut != 1 || bob.Relay.Received != 2 {
		t.Errorf("relay: alice %+v bob %+v", alice.Relay, bob.Relay)
	}
	if len(alice.Chat) != 1 || len(bob.Chat) != 0 {
		t.Errorf("chat: alice %+v bob %+v", alice.Chat, bob.Chat)
	}
	if alice.Score != (Score{Kills: 1, Score: 100}) || bob.Score != (Score{Deaths: 1}) {
		t.Errorf("scores: alice %+v bob %+v", alice.Score, bob.Score)
	}
	count := func(s *Session, kind string) (n int) {
		for _, e := range s.Events {
			if e.Kind == kind {
				n++
			}
		}
		return n
	}
	if count(alice, EventKill) != 1 || count(bob, EventKill) != 1 {
		t.Errorf("kill events: alice %+v bob %+v", alice.Events, bob.Events)
	}
	if bob.ShipsCreated != 2 || bob.ShipsDestroyed != 1 || bob.Phases.Destroyed == nil || bob.Phases.Respawned == nil ||
		bob.Ship != "Vorcha" || count(bob, EventRespawn) != 1 || alice.ShipsCreated != 1 || alice.ShipsDestroyed != 1 {
		t.Errorf("ships: bob created %d destroyed %d %+v; alice created %d", bob.ShipsCreated, bob.ShipsDestroyed, bob.Phases, alice.ShipsCreated)
	}
	if alice.Name != "Alice" || bob.Name != "Bob" || alice.Team != 0 || bob.Team != 1 {
		t.Errorf("names %q %q teams %d %d", alice.Name, bob.Name, alice.Team, bob.Team)
	}
}

func TestSessionJSON(t *testing.T) {
	h := newHarness(t, Options{})
	h.connect(testClient, 2)
	h.finish()
	raw, err := json.Marshal(h.only())
	if err != nil {
		t.Fatal(err)
	}
	var v map[string]any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	phases := v["phases"].(map[string]any)
	for _, k := range []string{"connect", "checksum_done", "lobby", "in_game", "end"} {
		if _, ok := phases[k]; !ok {
			t.Errorf("phases lack %q: %s", k, raw)
		}
	}
	if phases["connect"] != "2024-05-01T20:00:00Z" || phases["lobby"] != nil {
		t.Errorf("phases %v", phases)
	}
	rel := v["reliability"].(map[string]any)["S->C"].(map[string]any)["data"].(map[string]any)
	if rtt := rel["rtt"].(map[string]any); rtt["samples"] != 1.0 || rtt["median_ms"] != 30.0 {
		t.Errorf("rtt %v", rtt)
	}
}

func TestBoundedMemory(t *testing.T) {
	h := newHarness(t, Options{MaxEvents: 5, MaxChat: 3})
	c, s := testClient, testServer
	h.peer(c).id = 2
	for i := range 2000 {
		// Never ACKed, so the stream must forget the oldest.
		h.send(c, s, h.gameMsgs(c, &game.Chat{Op: game.OpChat, SenderID: 2, Text: "spam"})...)
		h.send(s, c, h.gameMsgs(s, &game.ChecksumFail{Op: game.OpVersionMismatch, File: "x"})...)
		if i%100 == 0 {
			h.step(time.Second)
		}
	}
	var l *live
	for _, srv := range h.b.servers {
		l = srv.sessions[c]
	}
	if n := len(l.streams[0][dissect.ChannelData].recent); n > recentCap {
		t.Errorf("stream remembers %d messages", n)
	}
	h.finish()
	ss := h.only()
	if len(ss.Chat) != 3 || ss.ChatDropped != 1997 || len(ss.Events) != 5 || ss.EventsDropped != 1995 {
		t.Errorf("chat %d+%d events %d+%d", len(ss.Chat), ss.ChatDropped, len(ss.Events), ss.EventsDropped)
	}
	if st := ss.Reliability.ClientToServer.Data; st.Unacked != 2000 || st.Reliable != 2000 {
		t.Errorf("%+v", st)
	}
}
