package native_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/server/native"
	"github.com/bcwire/bcwire/server/native/internal/testclient"
	"github.com/bcwire/bcwire/server/stock"
)

// simNet runs the server core and test clients on simulated time, with
// every datagram delivered in order at the next step.
type simNet struct {
	t        *testing.T
	now      time.Time
	srv      *native.Server
	srvAddr  netip.AddrPort
	clients  map[netip.AddrPort]*testclient.Client
	muted    map[netip.AddrPort]bool
	toServer []pkt
	toClient []pkt
	sent     []pkt // every datagram the server sent
}

type pkt struct {
	addr netip.AddrPort
	wire []byte
}

var simStart = time.Date(2026, 1, 10, 20, 0, 0, 0, time.UTC)

func newSim(t *testing.T, o native.Options) *simNet {
	t.Helper()
	if o.Config.Name == "" {
		o.Config = native.DefaultConfig()
	}
	srv, err := native.New(o)
	if err != nil {
		t.Fatal(err)
	}
	n := &simNet{t: t, now: simStart, srv: srv, srvAddr: netip.MustParseAddrPort("10.0.0.1:22101"),
		clients: map[netip.AddrPort]*testclient.Client{}, muted: map[netip.AddrPort]bool{}}
	srv.Attach(n.srvAddr, func(to netip.AddrPort, wire []byte) {
		p := pkt{to, append([]byte(nil), wire...)}
		n.toClient = append(n.toClient, p)
		n.sent = append(n.sent, p)
	})
	return n
}

func (n *simNet) addClient(name string) (*testclient.Client, netip.AddrPort) {
	addr := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 1, byte(10 + len(n.clients))}), uint16(50000+len(n.clients)))
	c := testclient.New(testclient.Options{Name: name, Addr: addr}, func(wire []byte) {
		if !n.muted[addr] {
			n.toServer = append(n.toServer, pkt{addr, wire})
		}
	})
	n.clients[addr] = c
	c.Connect(n.now)
	n.deliver()
	return c, addr
}

// deliver hands over everything in flight until nothing is.
func (n *simNet) deliver() {
	for i := 0; i < 1000 && len(n.toServer)+len(n.toClient) > 0; i++ {
		ts, tc := n.toServer, n.toClient
		n.toServer, n.toClient = nil, nil
		for _, p := range ts {
			n.srv.HandleDatagram(n.now, p.addr, p.wire)
		}
		for _, p := range tc {
			if c := n.clients[p.addr]; c != nil && !n.muted[p.addr] {
				c.Handle(n.now, p.wire)
			}
		}
	}
}

// run advances the clock by d in 10 ms steps.
func (n *simNet) run(d time.Duration) {
	end := n.now.Add(d)
	for n.now.Before(end) {
		n.now = n.now.Add(10 * time.Millisecond)
		n.srv.Tick(n.now)
		for _, c := range n.clients {
			c.Tick(n.now)
		}
		n.deliver()
	}
}

func (n *simNet) join(name string) (*testclient.Client, netip.AddrPort) {
	n.t.Helper()
	c, a := n.addClient(name)
	n.run(300 * time.Millisecond)
	if s := c.Snapshot(); !s.InGame {
		n.t.Fatalf("%s did not reach the game: %+v", name, s)
	}
	return c, a
}

func shipMsg(gameSlot int, team uint8, name string, subsystemBytes int) []byte {
	sub := make([]byte, subsystemBytes)
	for i := range sub {
		sub[i] = byte(i * 7)
	}
	m := &game.ObjCreate{HasTeam: true, Owner: uint8(gameSlot), Team: team, Class: game.ClassShip,
		Object: game.PlayerObjectID(gameSlot), Species: 1, Orientation: game.Quaternion{W: 1},
		PlayerName: name, SetName: "Multi1", SubsystemData: sub}
	return m.Append(nil)
}

func chat(op game.Opcode, from byte, text string) []byte {
	return (&game.Chat{Op: op, SenderID: int32(from), Text: text}).Append(nil)
}

func received(s testclient.State, payload []byte) int {
	n := 0
	for _, m := range s.Received {
		if bytes.Equal(m.Payload, payload) {
			n++
		}
	}
	return n
}

func opcodes(s testclient.State) []game.Opcode {
	var out []game.Opcode
	for _, m := range s.Received {
		out = append(out, game.Opcode(m.Payload[0]))
	}
	return out
}

func TestJoinSequence(t *testing.T) {
	n := newSim(t, native.Options{})
	c, _ := n.join("Cady2")
	s := c.Snapshot()
	if s.Slot != 2 || s.GameSlot != 0 {
		t.Errorf("slot %d game slot %d, want 2 and 0", s.Slot, s.GameSlot)
	}
	var want []game.ChecksumRound
	for _, r := range stock.ChecksumRounds {
		want = append(want, r.Round)
	}
	if fmt.Sprint(s.Rounds) != fmt.Sprint(want) {
		t.Errorf("checksum rounds %v, want %v", s.Rounds, want)
	}
	if !s.ConnectDG || !s.Bundle {
		t.Errorf("connect reply with round 0 in one datagram: %v; 0x28+Settings+GameInit in one: %v", s.ConnectDG, s.Bundle)
	}
	got := fmt.Sprint(opcodes(s))
	wantOps := fmt.Sprint([]game.Opcode{0x20, 0x20, 0x20, 0x20, 0x20, 0x28, 0x00, 0x01, 0x35, 0x17, 0x37})
	if got != wantOps {
		t.Errorf("server sent %s, want %s", got, wantOps)
	}
	// The connect reply is the server's first datagram and carries no ACK.
	var d dissect.Datagram
	plain := make([]byte, len(n.sent[0].wire))
	dissect.Decrypt(plain, n.sent[0].wire)
	if err := d.Parse(plain); err != nil || len(d.Messages) != 2 || d.Peer != stock.ServerPeer ||
		d.Messages[0].Type != dissect.TypeConnectAck || d.Messages[1].Type != dissect.TypeData {
		t.Errorf("connect reply % X: want slot assignment + checksum request, no ACK", plain)
	}
	// Keepalives: peer-info with the client's slot, address and name.
	n.run(3 * time.Second)
	ka := 0
	for _, p := range n.sent {
		pl := make([]byte, len(p.wire))
		dissect.Decrypt(pl, p.wire)
		if d.Parse(pl) != nil {
			continue
		}
		for i := range d.Messages {
			if m := &d.Messages[i]; m.Type == dissect.TypePeerInfo {
				c, err := dissect.ParseControl(m)
				if err != nil || c.Slot == nil || *c.Slot != 2 || c.Addr.String() != "10.0.1.10" {
					t.Errorf("keepalive %+v %v", c, err)
				}
				if c.Name == "Cady2" {
					ka++
				}
			}
		}
	}
	if ka < 2 || ka > 5 {
		t.Errorf("%d keepalives naming the client in about 3 s, want about one a second", ka)
	}
}

func TestRelayChatTeamsAndLateJoin(t *testing.T) {
	n := newSim(t, native.Options{})
	a, _ := n.join("A")
	b, _ := n.join("B")
	c, _ := n.join("C")
	shipA, shipB, shipC := shipMsg(0, 0, "A", 40), shipMsg(1, 1, "B", 40), shipMsg(2, 0, "C", 40)
	a.Send(n.now, shipA, true)
	b.Send(n.now, shipB, true)
	c.Send(n.now, shipC, true)
	n.run(100 * time.Millisecond)
	fire := []byte{0x07, 0xFF, 0xFF, 0xFF, 0x3F, 0x01, 0x02}
	a.Send(n.now, fire, true)
	all := chat(game.OpChat, 2, "hello all")
	team := chat(game.OpTeamChat, 2, "team only")
	a.Send(n.now, all, true)
	a.Send(n.now, team, true)
	host := []byte{0x0D, 1, 2, 3} // PythonEvent2: for the host only
	a.Send(n.now, host, true)
	n.run(100 * time.Millisecond)

	sa, sb, sc := a.Snapshot(), b.Snapshot(), c.Snapshot()
	for _, tc := range []struct {
		who     string
		s       testclient.State
		payload []byte
		want    int
	}{
		{"B gets A's ship", sb, shipA, 1}, {"C gets A's ship", sc, shipA, 1}, {"A does not get its own ship", sa, shipA, 0},
		{"A gets B's ship", sa, shipB, 1}, {"B gets A's fire", sb, fire, 1}, {"C gets A's fire", sc, fire, 1},
		{"B gets chat", sb, all, 1}, {"C gets chat", sc, all, 1}, {"A not its own chat", sa, all, 0},
		{"C (team 0) gets team chat", sc, team, 1}, {"B (team 1) no team chat", sb, team, 0},
		{"nobody gets 0x0D", sb, host, 0},
	} {
		if got := received(tc.s, tc.payload); got != tc.want {
			t.Errorf("%s: %d copies, want %d", tc.who, got, tc.want)
		}
	}
	// A late joiner gets every live ship after MISSION_INIT.
	d, _ := n.join("D")
	sd := d.Snapshot()
	for i, sh := range [][]byte{shipA, shipB, shipC} {
		if received(sd, sh) != 1 {
			t.Errorf("late joiner missing ship %d", i)
		}
	}
	// C leaves: the others are told, and D's late-join list no longer has C's ship.
	c.Leave(n.now)
	n.run(200 * time.Millisecond)
	removed := stock.PlayerRemoved(2, 4).Append(nil)
	if got := received(a.Snapshot(), removed); got != 1 {
		t.Errorf("A told of C leaving %d times", got)
	}
	e, _ := n.join("E")
	if received(e.Snapshot(), shipC) != 0 || received(e.Snapshot(), shipA) != 1 {
		t.Errorf("after C left, a new joiner should get A's ship and not C's")
	}
	if c.Unacked() != 0 {
		t.Errorf("C's disconnect not acknowledged")
	}
}

func TestTimeoutDisconnect(t *testing.T) {
	n := newSim(t, native.Options{})
	a, _ := n.join("A")
	_, addrB := n.join("B")
	n.muted[addrB] = true // B goes silent
	n.run(44 * time.Second)
	if ps := n.srv.Players(n.now); len(ps) != 2 {
		t.Fatalf("B dropped before 45 s of silence: %d players", len(ps))
	}
	n.run(2 * time.Second)
	ps := n.srv.Players(n.now)
	if len(ps) != 1 || ps[0].Name != "A" {
		t.Fatalf("after 46 s of silence: %+v", ps)
	}
	sa := a.Snapshot()
	if received(sa, stock.PlayerRemoved(1, 3).Append(nil)) != 1 || received(sa, (&game.DeletePlayerAnim{Name: "B"}).Append(nil)) != 1 {
		t.Errorf("A was not told that B left: %v", opcodes(sa))
	}
	if sa.Dead {
		t.Errorf("A (answering keepalives) was dropped too")
	}
}

func TestShortTimeoutOption(t *testing.T) {
	n := newSim(t, native.Options{Timing: native.Timing{Timeout: 500 * time.Millisecond}})
	_, addr := n.join("A")
	n.muted[addr] = true
	n.run(700 * time.Millisecond)
	if ps := n.srv.Players(n.now); len(ps) != 0 {
		t.Fatalf("a 500 ms timeout kept %+v", ps)
	}
}

func TestFragmentedRelay(t *testing.T) {
	n := newSim(t, native.Options{})
	a, _ := n.join("A")
	b, _ := n.join("B")
	big := shipMsg(0, 0, "A", 1500) // fragmented both ways (more than 480 bytes)
	a.Send(n.now, big, true)
	n.run(100 * time.Millisecond)
	if got := received(b.Snapshot(), big); got != 1 {
		t.Fatalf("B got the %d-byte ship %d times", len(big), got)
	}
	frags := 0
	var d dissect.Datagram
	for _, p := range n.sent {
		pl := make([]byte, len(p.wire))
		dissect.Decrypt(pl, p.wire)
		if len(p.wire) > 512 {
			t.Errorf("server sent a %d-byte datagram", len(p.wire))
		}
		if d.Parse(pl) == nil {
			for _, m := range d.Messages {
				if m.Fragment {
					frags++
				}
			}
		}
	}
	if frags < 4 {
		t.Errorf("%d fragments sent, want at least 4 for a %d-byte message", frags, len(big))
	}
}

func TestChecksumManifest(t *testing.T) {
	good := native.StockManifest()
	bad2 := native.StockManifest()
	bad2[2] = append([]byte(nil), bad2[2]...)
	bad2[2][len(bad2[2])-1] ^= 1
	bad0 := native.StockManifest()
	bad0[0] = append([]byte(nil), bad0[0]...)
	bad0[0][3] ^= 1 // the version hash
	for _, tc := range []struct {
		name string
		m    native.Manifest
		fail game.Opcode
	}{{"good", good, 0}, {"round 2 differs", bad2, game.OpVersionMismatch}, {"version differs", bad0, game.OpSystemChecksumFail}} {
		t.Run(tc.name, func(t *testing.T) {
			var logs bytes.Buffer
			n := newSim(t, native.Options{Manifest: tc.m, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			c, _ := n.addClient("A")
			n.run(time.Second)
			s := c.Snapshot()
			if s.Failed != tc.fail {
				t.Errorf("failure message %v, want %v", s.Failed, tc.fail)
			}
			if tc.fail == 0 {
				if !s.InGame {
					t.Errorf("good client did not join")
				}
				return
			}
			if !s.Booted || s.BootReason != stock.BootChecksum || s.Lobby {
				t.Errorf("booted %v reason %d lobby %v", s.Booted, s.BootReason, s.Lobby)
			}
			// The log says why: which hash, what was expected, what was sent.
			cause := "round 2 response differs from the manifest's"
			if tc.fail == game.OpSystemChecksumFail {
				cause = "round 0 reference hash 0x7E0CE243, the manifest expects 0x7E0CE343: 0x23 sent"
			}
			if !strings.Contains(logs.String(), "checksum boot: "+cause) {
				t.Errorf("the boot's log does not say %q:\n%s", cause, logs.String())
			}
			n.run(4 * time.Second)
			if ps := n.srv.Players(n.now); len(ps) != 0 {
				t.Errorf("booted client still listed: %+v", ps)
			}
		})
	}
}

func TestServerFull(t *testing.T) {
	cfg := native.DefaultConfig()
	cfg.MaxPlayers = 2
	n := newSim(t, native.Options{Config: cfg})
	n.join("A")
	n.join("B")
	c, _ := n.addClient("C")
	n.run(300 * time.Millisecond)
	s := c.Snapshot()
	if !s.Booted || s.BootReason != stock.BootFull || s.Slot != 0 {
		t.Fatalf("third client on a 2-player server: %+v", s)
	}
	if st := n.srv.Stats(); st.Refused == 0 {
		t.Errorf("refusal not counted")
	}
}

func TestConsole(t *testing.T) {
	n := newSim(t, native.Options{})
	a, _ := n.join("A")
	b, _ := n.join("B")
	a.Send(n.now, shipMsg(0, 0, "A", 10), true)
	n.run(100 * time.Millisecond)
	for _, line := range []string{"say welcome", "endgame", "restart"} {
		if out, err := n.srv.Exec(n.now, line); err != nil || out == "" {
			t.Errorf("%s: %q %v", line, out, err)
		}
	}
	out, err := n.srv.Exec(n.now, "players")
	if err != nil || !bytes.Contains([]byte(out), []byte("A")) || !bytes.Contains([]byte(out), []byte("game")) {
		t.Errorf("players: %q %v", out, err)
	}
	n.run(100 * time.Millisecond)
	sb := b.Snapshot()
	if received(sb, chat(game.OpChat, 1, "welcome")) != 1 || received(sb, (&game.EndGame{}).Append(nil)) != 1 ||
		received(sb, (&game.RestartGame{}).Append(nil)) != 1 {
		t.Errorf("B did not get say/endgame/restart: %v", opcodes(sb))
	}
	if _, err := n.srv.Exec(n.now, "boot 3"); err != nil {
		t.Fatal(err)
	}
	n.run(200 * time.Millisecond)
	if s := b.Snapshot(); !s.Booted || s.BootReason != stock.BootKicked {
		t.Errorf("B not booted: %+v", s.Booted)
	}
	if received(a.Snapshot(), stock.PlayerRemoved(1, 3).Append(nil)) != 1 {
		t.Errorf("A not told of the boot")
	}
	for _, bad := range []string{"boot", "boot 99", "say", "frobnicate"} {
		if _, err := n.srv.Exec(n.now, bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	if _, err := n.srv.Exec(n.now, "quit"); err != native.ErrQuit {
		t.Errorf("quit: %v", err)
	}
	// After the restart, a late joiner gets no ships (they were removed).
	c, _ := n.join("C")
	if received(c.Snapshot(), shipMsg(0, 0, "A", 10)) != 0 {
		t.Errorf("ship survived the restart")
	}
}

func TestTimeLimitEndsGame(t *testing.T) {
	cfg := native.DefaultConfig()
	cfg.TimeLimit = 1
	n := newSim(t, native.Options{Config: cfg})
	a, _ := n.join("A")
	n.run(59 * time.Second)
	if received(a.Snapshot(), (&game.EndGame{Reason: game.EndTimeUp}).Append(nil)) != 0 {
		t.Fatal("END_GAME before the time limit")
	}
	n.run(2 * time.Second)
	if received(a.Snapshot(), (&game.EndGame{Reason: game.EndTimeUp}).Append(nil)) != 1 {
		t.Fatal("no END_GAME at the time limit")
	}
}

// The host keeps the clients' StateUpdates and CollisionEffects and sends
// its own StateUpdates, as the stock host does: subsystems (0x20) about
// every ship, the owner's motion about the others' ships, never 0x80.
func TestHostStateUpdates(t *testing.T) {
	n := newSim(t, native.Options{})
	a, _ := n.join("A")
	b, _ := n.join("B")
	sa := a.Snapshot()
	ship := shipMsg(sa.GameSlot, 0, "A", 0)
	a.Send(n.now, ship, true)
	n.run(50 * time.Millisecond)
	id := game.PlayerObjectID(sa.GameSlot)
	delta := dissect.EncodeCV4(dissect.Vec3{X: 1.5, Y: -2, Z: 0.25})
	up := &game.StateUpdate{Object: id, GameTime: 3, Flags: game.StateDelta | game.StateForward | game.StateUp | game.StateSpeed | game.StateCloak | game.StateWeapons,
		Delta: delta, Forward: dissect.Dir3{0, 127, 0}, Up: dissect.Dir3{0, 0, 127}, Speed: dissect.EncodeCF16(6.5), Cloaked: true,
		Weapons: []game.WeaponHealth{{Index: 0, Health: 0xFF}}}
	upBytes := up.Append(nil)
	coll := (&game.CollisionEffect{Class: game.EventClassCollision, Code: game.ETCollisionEffect, Target: id,
		Contacts: []dissect.Contact{{Dir: dissect.Dir3{13, 126, 0}, Mag: 217}}, Force: 1281}).Append(nil)
	a.Send(n.now, upBytes, false)
	a.Send(n.now, coll, true)
	n.run(time.Second)

	if received(b.Snapshot(), upBytes) != 0 || received(b.Snapshot(), coll) != 0 {
		t.Fatal("the client's StateUpdate or CollisionEffect was relayed")
	}
	spec := game.ShipBySpecies(1)
	if spec == nil {
		t.Fatal("species 1 has no ship spec")
	}
	check := func(who string, c *testclient.Client, own bool) {
		t.Helper()
		dec := game.NewDecoder()
		dec.Decode(ship, game.ServerToClient) // the class, for the subsystems
		var ups []*game.StateUpdate
		for _, m := range c.Snapshot().Received {
			if game.Opcode(m.Payload[0]) != game.OpStateUpdate {
				continue
			}
			r := dec.Decode(m.Payload, game.ServerToClient)
			if r.Err != nil {
				t.Fatalf("%s: host StateUpdate % X: %v", who, m.Payload, r.Err)
			}
			u := *r.Msg.(*game.StateUpdate) // the decoder reuses its messages
			ups = append(ups, &u)
		}
		// About 10 a second for the one ship.
		if len(ups) < 8 || len(ups) > 13 {
			t.Fatalf("%s: %d host StateUpdates in about a second, want about 10", who, len(ups))
		}
		cloaks := 0
		for i, u := range ups {
			if u.Object != id || u.Flags&game.StateSubsystems == 0 || u.Flags&game.StateWeapons != 0 {
				t.Fatalf("%s: update %d: object %v flags %v: want the ship, 0x20, never 0x80", who, i, u.Object, u.Flags)
			}
			motion := u.Flags&(game.StateDelta|game.StateForward|game.StateUp|game.StateSpeed) != 0
			if own && (motion || u.Flags&game.StateCloak != 0) {
				t.Errorf("%s: update %d about its own ship carries motion: %v", who, i, u.Flags)
			}
			if !own && i > 0 {
				if !motion || u.Delta != delta || u.Speed != up.Speed || u.Forward != up.Forward {
					t.Errorf("%s: update %d: %v: want the owner's motion", who, i, u)
				}
			}
			if u.Flags&game.StateCloak != 0 {
				cloaks++
			}
		}
		if !own && cloaks != 1 {
			t.Errorf("%s: %d updates with the cloak flag, want 1 (the change)", who, cloaks)
		}
		// The round-robin walks the subsystem list.
		if ups[0].SubsystemStart != 0 || ups[1].SubsystemStart == 0 {
			t.Errorf("%s: round-robin starts %d, %d", who, ups[0].SubsystemStart, ups[1].SubsystemStart)
		}
	}
	check("owner", a, true)
	check("other", b, false)
	if st := n.srv.Stats(); st.HostUpdates == 0 {
		t.Errorf("stats: %+v", st)
	}
}
