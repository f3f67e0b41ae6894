package native_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand"
	"net"
	"net/netip"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/server/native"
	"github.com/bcwire/bcwire/server/native/internal/testclient"
	"github.com/bcwire/bcwire/server/stock"
	"github.com/bcwire/bcwire/session"
)

// liveServer runs a server on a loopback socket until the test ends.
type liveServer struct {
	addr netip.AddrPort
	srv  *native.Server
	stop func()
}

func startServer(t *testing.T, o native.Options) *liveServer {
	t.Helper()
	if o.Config.Name == "" {
		o.Config = native.DefaultConfig()
	}
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := native.New(o)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, pc) }()
	ls := &liveServer{addr: pc.LocalAddr().(*net.UDPAddr).AddrPort(), srv: srv}
	var once sync.Once
	ls.stop = func() {
		once.Do(func() {
			cancel()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("Serve: %v", err)
				}
			case <-time.After(5 * time.Second):
				t.Error("Serve did not return within 5 s of cancel")
			}
			pc.Close()
		})
	}
	t.Cleanup(ls.stop)
	return ls
}

func dial(t *testing.T, ctx context.Context, ls *liveServer, name string, loss float64, seed int64, o testclient.Options) *testclient.UDP {
	t.Helper()
	o.Name = name
	c, err := testclient.Dial(ctx, ls.addr, o, loss, seed)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func inGame(s *testclient.State) bool { return s.InGame }

// pcapTap collects the server's traffic in a pcap.
type pcapTap struct {
	mu  sync.Mutex
	buf bytes.Buffer
	w   *capture.Writer
	err error
}

func newPcapTap(t *testing.T) *pcapTap {
	p := &pcapTap{}
	w, err := capture.NewWriter(&p.buf, capture.PCAP, capture.Ethernet)
	if err != nil {
		t.Fatal(err)
	}
	p.w = w
	return p
}

func (p *pcapTap) tap(ts time.Time, src, dst netip.AddrPort, wire []byte) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.w.WriteUDP(ts, src, dst, wire); err != nil && p.err == nil {
		p.err = err
	}
}

func (p *pcapTap) bytes(t *testing.T) []byte {
	p.mu.Lock()
	defer p.mu.Unlock()
	if err := p.w.Flush(); err != nil || p.err != nil {
		t.Fatalf("pcap: %v %v", err, p.err)
	}
	return append([]byte(nil), p.buf.Bytes()...)
}

// sessions decodes a capture into sessions; it also returns, per client,
// the server's handshake datagrams as opcode signatures (see handshake).
func sessions(t *testing.T, pcap []byte) ([]*session.Session, map[netip.AddrPort][]string) {
	t.Helper()
	rd, err := capture.NewReader(bytes.NewReader(pcap))
	if err != nil {
		t.Fatal(err)
	}
	var out []*session.Session
	b := session.NewBuilder(session.Options{}, func(s *session.Session) { out = append(out, s) })
	hs := handshake{sig: map[netip.AddrPort][]string{}, done: map[netip.AddrPort]bool{}}
	damaged := 0
	_, err = flow.Run(rd, flow.New(flow.Options{}), func(r *flow.Record) bool {
		if r.Err != nil {
			damaged++
			t.Errorf("damaged record in frame %d: %v", r.Frame, r.Err)
		}
		hs.add(r)
		b.Add(r)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	b.Finish()
	hs.flush()
	return out, hs.sig
}

// handshake collects, per client, the server's datagrams up to and
// including the one with MISSION_INIT, each as the list of its messages
// other than ACKs and keepalives ("connect-ack" for the slot assignment,
// the opcode of game messages); datagrams with nothing else are left out,
// as their timing is the only thing that differs between runs.
type handshake struct {
	sig   map[netip.AddrPort][]string
	done  map[netip.AddrPort]bool
	frame int
	cli   netip.AddrPort
	cur   []string
}

func (h *handshake) flush() {
	if len(h.cur) > 0 && !h.done[h.cli] {
		h.sig[h.cli] = append(h.sig[h.cli], strings.Join(h.cur, "+"))
		for _, s := range h.cur {
			if s == "35" {
				h.done[h.cli] = true
			}
		}
	}
	h.cur = nil
}

func (h *handshake) add(r *flow.Record) {
	if r.Frame != h.frame {
		h.flush()
		h.frame, h.cli = r.Frame, r.Client
	}
	if r.Kind != flow.KindMessage || r.Dir != game.ServerToClient || r.Msg == nil {
		return
	}
	switch r.Msg.Type {
	case dissect.TypeAck, dissect.TypePeerInfo:
	case dissect.TypeData:
		if !r.Msg.Fragment {
			h.cur = append(h.cur, fmt.Sprintf("%02x", r.Msg.Payload[0]))
		}
	default:
		h.cur = append(h.cur, r.Msg.Type.String())
	}
}

func TestLiveJoinRelayCapture(t *testing.T) {
	tap := newPcapTap(t)
	ls := startServer(t, native.Options{Tap: tap.tap, Timing: native.Timing{Keepalive: 200 * time.Millisecond}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	names := []string{"Cady2", "Picard", "Worf"}
	var cs []*testclient.UDP
	for i, n := range names {
		c := dial(t, ctx, ls, n, 0, int64(i), testclient.Options{})
		if err := c.Wait(5*time.Second, n+" joins", inGame); err != nil {
			t.Fatal(err)
		}
		cs = append(cs, c)
	}
	var ships, chats [][]byte
	for i, c := range cs {
		s := c.Snapshot()
		ship := shipMsg(s.GameSlot, uint8(i%2), names[i], 120)
		ships = append(ships, ship)
		c.Send(time.Now(), ship, true)
	}
	for i, c := range cs {
		ch := chat(game.OpChat, c.Snapshot().Slot, "hello from "+names[i])
		chats = append(chats, ch)
		c.Send(time.Now(), ch, true)
		fire := &game.EventForward{Op: game.OpStartFiring, Event: game.Event{Class: game.EventClassStartFiring,
			Code: game.ETStartFiringNotify, Source: game.PlayerObjectID(i) + 0x10, Dest: game.PlayerObjectID(i)}}
		c.Send(time.Now(), fire.Append(nil), true)
	}
	for i, c := range cs {
		err := c.Wait(5*time.Second, "relays", func(s *testclient.State) bool {
			for j := range cs {
				if j != i && (received(*s, ships[j]) != 1 || received(*s, chats[j]) != 1) {
					return false
				}
			}
			return true
		})
		if err != nil {
			t.Fatalf("%s: %v", names[i], err)
		}
	}
	late := dial(t, ctx, ls, "Kira", 0, 9, testclient.Options{})
	if err := late.Wait(5*time.Second, "late joiner gets the ships", func(s *testclient.State) bool {
		return s.InGame && received(*s, ships[0])+received(*s, ships[1])+received(*s, ships[2]) == 3
	}); err != nil {
		t.Fatal(err)
	}
	lateShip := shipMsg(late.Snapshot().GameSlot, 1, "Kira", 120)
	late.Send(time.Now(), lateShip, true)
	if err := cs[0].Wait(5*time.Second, "the late joiner's ship", func(s *testclient.State) bool { return received(*s, lateShip) == 1 }); err != nil {
		t.Fatal(err)
	}
	for _, c := range append(cs, late) {
		c.Leave(time.Now())
	}
	for _, c := range append(cs, late) {
		if err := c.Wait(3*time.Second, "disconnect ACKed", func(*testclient.State) bool { return c.Unacked() == 0 }); err != nil {
			t.Error(err)
		}
	}
	ls.stop()

	pcap := tap.bytes(t)
	if path := os.Getenv("BCWIRE_NATIVE_PCAP"); path != "" {
		_ = os.WriteFile(path, pcap, 0o644) // for looking at with bcwire decode
	}
	ss, sig := sessions(t, pcap)
	if len(ss) != 4 {
		t.Fatalf("%d sessions in the capture, want 4", len(ss))
	}
	for _, s := range ss {
		ph := s.Phases
		for name, p := range map[string]*time.Time{"connect": ph.Connect, "connect reply": ph.ConnectReply,
			"checksum done": ph.ChecksumDone, "lobby": ph.Lobby, "new player": ph.NewPlayer,
			"mission init": ph.MissionInit, "in game": ph.InGame} {
			if p == nil {
				t.Errorf("session %s (%s): no %s phase", s.Client, s.Name, name)
			}
		}
		if len(s.Checksums) != 5 {
			t.Errorf("session %s: %d checksum rounds", s.Client, len(s.Checksums))
		}
		for _, r := range s.Checksums {
			if r.Request == nil || r.Response == nil {
				t.Errorf("session %s: round %v incomplete", s.Client, r.Round)
			}
		}
		if s.EndReason != session.EndDisconnect {
			t.Errorf("session %s ended by %q", s.Client, s.EndReason)
		}
		// The late joiner gets the ships in play as its replication, not as
		// relayed copies (nothing is relayed after it joined but its own
		// ship, which goes to the others).
		if late := s.Name == "Kira"; s.Relay.Messages == 0 || (s.Relay.Received == 0) != late {
			t.Errorf("session %s (%s): relay %+v", s.Client, s.Name, s.Relay)
		}
		t.Logf("%s %-7s slot %d reached %v, relay %+v", s.Client, s.Name, s.Slot, s.Reached, s.Relay)
	}
	// The handshake, datagram by datagram, is the one of the bundled
	// stock-like capture.
	ref := synthHandshake(t)
	want := strings.Join(ref, " | ")
	t.Logf("stock-like handshake (join.pcap), server datagrams: %s", want)
	if len(sig) != 4 {
		t.Errorf("handshakes of %d clients, want 4", len(sig))
	}
	for cli, got := range sig {
		g := strings.Join(got, " | ")
		// The first joiner's MISSION_INIT datagram has one SCORE; later
		// joiners get one per player in the game.
		g = strings.NewReplacer("+37+37+37+37", "+37", "+37+37+37", "+37", "+37+37", "+37").Replace(g)
		if i := strings.Index(g, "+03"); i >= 0 {
			g = g[:i] // late joiner: the ships follow the roster
		}
		if g != want {
			t.Errorf("client %s handshake:\n got %s\nwant %s", cli, g, want)
		}
	}
}

func synthHandshake(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile("../../testdata/pcaps/join.pcap")
	if err != nil {
		t.Fatal(err)
	}
	_, sig := sessions(t, b)
	if len(sig) != 1 {
		t.Fatalf("join.pcap: %d clients", len(sig))
	}
	for _, s := range sig {
		return s
	}
	return nil
}

func TestLiveLossyReliableDelivery(t *testing.T) {
	fast := native.Timing{RetransmitAfter: 40 * time.Millisecond, Keepalive: 300 * time.Millisecond, Tick: 10 * time.Millisecond}
	ls := startServer(t, native.Options{Timing: fast})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	co := testclient.Options{RetransmitAfter: 40 * time.Millisecond, Keepalive: 300 * time.Millisecond}
	a := dial(t, ctx, ls, "A", 0.2, 11, co)
	b := dial(t, ctx, ls, "B", 0.2, 12, co)
	for _, c := range []*testclient.UDP{a, b} {
		if err := c.Wait(15*time.Second, "join over a 20% lossy link", inGame); err != nil {
			t.Fatal(err)
		}
	}
	const count = 150
	var sent [][]byte
	for i := 0; i < count; i++ {
		m := chat(game.OpChat, 2, fmt.Sprintf("line %03d", i))
		sent = append(sent, m)
		a.Send(time.Now(), m, true)
		if i%10 == 9 {
			time.Sleep(5 * time.Millisecond)
		}
	}
	start := time.Now()
	err := b.Wait(15*time.Second, "all lines", func(s *testclient.State) bool {
		n := 0
		for _, m := range s.Received {
			if game.Opcode(m.Payload[0]) == game.OpChat {
				n++
			}
		}
		return n >= count
	})
	if err != nil {
		t.Fatal(err)
	}
	var got [][]byte
	for _, m := range b.Snapshot().Received {
		if game.Opcode(m.Payload[0]) == game.OpChat {
			got = append(got, m.Payload)
		}
	}
	if len(got) != count {
		t.Fatalf("B got %d lines, want %d (duplicates?)", len(got), count)
	}
	for i := range got {
		if !bytes.Equal(got[i], sent[i]) {
			t.Fatalf("line %d out of order or changed: %q", i, got[i])
		}
	}
	ao, ai := a.Lost()
	bo, bi := b.Lost()
	st := ls.srv.Stats()
	t.Logf("%d reliable messages relayed in order in %v; shim dropped A %d/%d, B %d/%d (out/in); server retransmits %d, client A %d",
		count, time.Since(start).Round(time.Millisecond), ao, ai, bo, bi, st.Retransmits, a.Snapshot().Retransmits)
	if ao+ai+bo+bi == 0 || st.Retransmits == 0 {
		t.Errorf("the shim dropped nothing or nothing was retransmitted")
	}
}

func TestLiveSixteenClients(t *testing.T) {
	cfg := native.DefaultConfig()
	cfg.MaxPlayers = 16
	ls := startServer(t, native.Options{Config: cfg})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var cs []*testclient.UDP
	for i := 0; i < 16; i++ {
		cs = append(cs, dial(t, ctx, ls, fmt.Sprintf("P%02d", i), 0, int64(i), testclient.Options{}))
	}
	slots := map[byte]bool{}
	for _, c := range cs {
		if err := c.Wait(10*time.Second, "join", inGame); err != nil {
			t.Fatal(err)
		}
		slots[c.Snapshot().Slot] = true
	}
	for s := byte(2); s < 18; s++ {
		if !slots[s] {
			t.Errorf("slot %d not given out: %v", s, slots)
		}
	}
	for _, c := range cs {
		c.Send(time.Now(), chat(game.OpChat, c.Snapshot().Slot, "hi"), true)
	}
	for _, c := range cs {
		err := c.Wait(10*time.Second, "15 chats", func(s *testclient.State) bool {
			n := 0
			for _, m := range s.Received {
				if game.Opcode(m.Payload[0]) == game.OpChat {
					n++
				}
			}
			return n == 15
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	extra := dial(t, ctx, ls, "P16", 0, 99, testclient.Options{})
	if err := extra.Wait(5*time.Second, "17th client refused", func(s *testclient.State) bool { return s.Booted }); err != nil {
		t.Fatal(err)
	}
	if s := extra.Snapshot(); s.BootReason != stock.BootFull || s.Slot != 0 {
		t.Errorf("17th client: %+v", s)
	}
	if st := ls.srv.Stats(); st.Joined != 16 {
		t.Errorf("joined %d", st.Joined)
	}
	ls.stop()
	for _, c := range cs[:3] {
		if err := c.Wait(2*time.Second, "server's disconnect", func(s *testclient.State) bool { return s.ServerLeft }); err != nil {
			t.Error(err)
		}
	}
}

func TestLiveGameSpy(t *testing.T) {
	cfg := native.DefaultConfig()
	cfg.Name = "test server"
	cfg.Password = "secret"
	ls := startServer(t, native.Options{Config: cfg})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := dial(t, ctx, ls, "Sisko", 0, 1, testclient.Options{})
	if err := c.Wait(5*time.Second, "join", inGame); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond) // the client's keepalive names it
	want := map[string]map[string]string{
		"status": {"gamename": "bcommander", "gamever": "60", "location": "0", "hostname": "*test server",
			"missionscript": stock.DefaultMap, "mapname": "Mission1", "numplayers": "1", "maxplayers": "8",
			"gamemode": "openplaying", "timelimit": "-1", "fraglimit": "10", "system": "Multi1", "password": "1",
			"player_0": "Sisko"},
		"info": {"gamename": "bcommander", "gamever": "60", "location": "0"},
		"basic": {"hostname": "*test server", "missionscript": stock.DefaultMap, "mapname": "Mission1",
			"numplayers": "1", "maxplayers": "8", "gamemode": "openplaying"},
		"rules":   {"fraglimit": "10", "timelimit": "-1", "system": "Multi1", "password": "1"},
		"players": {"player_0": "Sisko"},
	}
	// Off the stock port (the test's server has a port of its own) the
	// replies that carry the basic fields name the real port.
	hostport := strconv.Itoa(int(ls.addr.Port()))
	want["status"]["hostport"], want["basic"]["hostport"] = hostport, hostport
	for kind, fields := range want {
		pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		query := func() (dissect.GameSpy, error) {
			if _, err := pc.WriteTo([]byte(`\`+kind+`\`), net.UDPAddrFromAddrPort(ls.addr)); err != nil {
				return dissect.GameSpy{}, err
			}
			buf := make([]byte, 2048)
			_ = pc.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
			n, _, err := pc.ReadFrom(buf)
			if err != nil {
				return dissect.GameSpy{}, err
			}
			return dissect.ParseGameSpy(buf[:n])
		}
		g, err := query()
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		got := map[string]string{}
		for _, f := range g.Fields {
			got[f.Key] = f.Value
		}
		for k, v := range fields {
			if got[k] != v {
				t.Errorf("\\%s\\: %s=%q, want %q (%v)", kind, k, got[k], v, g.Fields)
			}
		}
		if !g.Final || g.QueryID != "1.1" || len(g.Fields) != len(fields) {
			t.Errorf("\\%s\\: final %v queryid %q, %d fields (%v)", kind, g.Final, g.QueryID, len(g.Fields), g.Fields)
		}
		// A second query within the second gets no answer.
		if _, err := query(); err == nil {
			t.Errorf("\\%s\\: answered twice within a second", kind)
		}
		pc.Close()
	}
}

// TestGarbageFlood throws 100,000 random datagrams from random sources (and
// from a connected client's address) at the core: no panic, memory and
// replies bounded, and the connected clients still work.
func TestGarbageFlood(t *testing.T) {
	for seed := int64(1); seed <= 2; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) { garbageFlood(t, seed) })
	}
}

func garbageFlood(t *testing.T, seed int64) {
	n := newSim(t, native.Options{})
	a, addrA := n.join("A")
	b, _ := n.join("B")
	rng := rand.New(rand.NewSource(seed))
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	n.sent = nil
	start := time.Now()
	const total = 100_000
	simStartFlood := n.now
	buf := make([]byte, 1024)
	for i := 0; i < total; i++ {
		size := rng.Intn(len(buf))
		p := buf[:size]
		rng.Read(p)
		from := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, byte(rng.Intn(256)), byte(rng.Intn(256)), byte(rng.Intn(256))}), uint16(rng.Intn(65536)))
		switch i % 8 {
		case 0: // a GameSpy-looking query
			if size > 0 {
				p[0] = '\\'
			}
			if i%16 == 0 {
				p = []byte(`\status\`)
			}
		case 1: // a connecting client's header with random messages
			if size > 0 {
				p[0] = 0xFF
			}
		case 2: // a well-formed connect request from a new source
			req := stock.ConnectRequest(from)
			d := dissect.Datagram{Peer: 0xFF, Messages: []dissect.Message{{Type: dissect.TypeConnectAck, Reliable: true, Ordered: true,
				Seq: uint16(rng.Intn(3)), Payload: dissect.AppendControl(nil, &req)}}}
			plain := d.Append(nil)
			p = make([]byte, len(plain))
			dissect.Encrypt(p, plain)
		case 3: // garbage from the connected client A's address
			from = addrA
		}
		n.srv.HandleDatagram(n.now, from, p)
		if i%100 == 99 {
			n.now = n.now.Add(time.Millisecond) // 100k datagrams over 1 s
			n.srv.Tick(n.now)
		}
		n.toClient = n.toClient[:0]
	}
	elapsed := time.Since(start)
	floodSeconds := n.now.Sub(simStartFlood).Seconds()
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	growth := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	replies := 0
	for _, p := range n.sent {
		if p.addr != addrA {
			replies++
		}
	}
	st := n.srv.Stats()
	t.Logf("%d datagrams in %v (%.0f/s), heap %+d KiB, %d replies to strangers over %.1f simulated s, peers %d, stats %+v",
		total, elapsed.Round(time.Millisecond), total/elapsed.Seconds(), growth/1024, replies, floodSeconds, len(n.srv.Players(n.now)), st)
	if elapsed > 30*time.Second {
		t.Errorf("flood took %v", elapsed)
	}
	if growth > 32<<20 {
		t.Errorf("heap grew by %d MiB", growth>>20)
	}
	// At most RepliesPerSecond (50) a second to strangers, plus the
	// handshakes of the connects admitted (at most MaxPeers of them) and
	// their retransmissions.
	if limit := int(50*(floodSeconds+1)) + 8*20; replies > limit {
		t.Errorf("%d replies to strangers, limit %d", replies, limit)
	}
	if ps := n.srv.Players(n.now); len(ps) > 8 {
		t.Errorf("%d peers on an 8-player server", len(ps))
	}
	// The real clients still talk to each other.
	n.toClient = nil
	a.Send(n.now, chat(game.OpChat, 2, "still here"), true)
	n.run(200 * time.Millisecond)
	if received(b.Snapshot(), chat(game.OpChat, 2, "still here")) != 1 {
		t.Errorf("relay broken after the flood")
	}
	// The spoofed connects that took slots never answer: they are dropped
	// after the handshake timeout.
	n.run(11 * time.Second)
	if ps := n.srv.Players(n.now); len(ps) != 2 {
		t.Errorf("%d peers 11 s after the flood, want the 2 real clients", len(ps))
	}
}

func TestLoadConfig(t *testing.T) {
	dir := t.TempDir()
	toml := dir + "/server.toml"
	yml := dir + "/server.yaml"
	os.WriteFile(toml, []byte("name = \"Toml\"\nport = 22102\nmax_players = 4\nfriendly_fire = true\ntime_limit = 20\n"), 0o644)
	os.WriteFile(yml, []byte("name: Yaml\nmap: Multiplayer.Episode.Mission2.Mission2\nfrag_limit: 0\ncollision_damage: false\n"), 0o644)
	c, err := native.LoadConfig(toml, native.DefaultConfig())
	if err != nil || c.Name != "Toml" || c.Port != 22102 || c.MaxPlayers != 4 || !c.FriendlyFire || c.TimeLimit != 20 || c.FragLimit != 10 {
		t.Errorf("toml: %+v %v", c, err)
	}
	c, err = native.LoadConfig(yml, native.DefaultConfig())
	if err != nil || c.Name != "Yaml" || c.FragLimit != 0 || c.CollisionDamage || c.MaxPlayers != 8 {
		t.Errorf("yaml: %+v %v", c, err)
	}
	os.WriteFile(toml, []byte("nmae = \"typo\"\n"), 0o644)
	if _, err := native.LoadConfig(toml, native.DefaultConfig()); err == nil {
		t.Error("unknown toml key accepted")
	}
	os.WriteFile(yml, []byte("nmae: typo\n"), 0o644)
	if _, err := native.LoadConfig(yml, native.DefaultConfig()); err == nil {
		t.Error("unknown yaml key accepted")
	}
	bad := native.DefaultConfig()
	bad.MaxPlayers = 17
	if _, err := native.New(native.Options{Config: bad}); err == nil {
		t.Error("17 players accepted")
	}
	// Manifests round-trip.
	var buf bytes.Buffer
	if err := native.WriteManifest(&buf, native.StockManifest()); err != nil {
		t.Fatal(err)
	}
	mf := dir + "/manifest.toml"
	os.WriteFile(mf, buf.Bytes(), 0o644)
	m, err := native.LoadManifest(mf)
	if err != nil || len(m) != 5 || !bytes.Equal(m[0xFF], native.StockManifest()[0xFF]) {
		t.Errorf("manifest round trip: %d rounds, %v", len(m), err)
	}
	os.WriteFile(mf, []byte("[rounds]\n2 = \"21 03 00\"\n"), 0o644)
	if _, err := native.LoadManifest(mf); err == nil {
		t.Error("a round-3 response under round 2 accepted")
	}
	_ = io.Discard
}
