package timelinecmd

import (
	"bytes"
	"flag"
	"net/netip"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/server/transport"
)

var update = flag.Bool("update", false, "rewrite testdata/ (the fixture capture and the golden outputs)")

// FixturePath is the two-player capture the command tests (this package's
// and statscmd's) read. Regenerate it with go test -update.
const FixturePath = "testdata/two-players.pcap"

// The fixture: Bob is already flying when the capture starts (his join is
// not in it); Alice joins through every phase, picks an Akira, chats (the
// server relays the line to Bob), loses one server datagram (the server
// retransmits it), kills Bob (who respawns) and disconnects. Bob then goes
// quiet and times out while a server browser keeps querying GameSpy.
var (
	fxServer  = netip.MustParseAddrPort("10.0.0.1:22101")
	fxAlice   = netip.MustParseAddrPort("10.0.0.2:53000")
	fxBob     = netip.MustParseAddrPort("10.0.0.3:53001")
	fxBrowser = netip.MustParseAddrPort("10.0.0.9:6500")
	fxStart   = time.Date(2024, 5, 1, 20, 0, 0, 0, time.UTC)
)

type fxLink struct {
	addr     netip.AddrPort
	cli, srv *transport.Conn
	drop     int // drop the next server datagrams (after capturing them)
	ship     game.ObjectID
	flying   bool
	slot     uint8
	name     string
}

type fixture struct {
	t      *testing.T
	w      *capture.Writer
	now    time.Duration
	record bool
	links  []*fxLink
	ticks  int
}

func (f *fixture) ts() time.Time { return fxStart.Add(f.now) }

func (f *fixture) write(src, dst netip.AddrPort, plain []byte) {
	if !f.record {
		return
	}
	enc := make([]byte, len(plain))
	dissect.Encrypt(enc, plain)
	if dissect.IsGameSpy(plain) {
		copy(enc, plain) // GameSpy travels in clear
	}
	if err := f.w.WriteUDP(f.ts(), src, dst, enc); err != nil {
		f.t.Fatal(err)
	}
}

// flush moves everything queued on l, both ways, with ACKs and
// retransmissions as stock peers do them. The client's ACKs of what the
// server sent leave 15 ms later.
func (f *fixture) flush(l *fxLink) {
	l.cli.Retransmit(f.now)
	l.srv.Retransmit(f.now)
	f.clientFlush(l, f.now)
	for _, d := range l.srv.Flush(f.now) {
		f.write(fxServer, l.addr, d)
		if l.drop > 0 {
			l.drop--
			continue
		}
		l.cli.Receive(d, f.now)
	}
	f.clientFlush(l, f.now+15*time.Millisecond)
}

func (f *fixture) clientFlush(l *fxLink, at time.Duration) {
	now := f.now
	f.now = at
	for _, d := range l.cli.Flush(at) {
		f.write(l.addr, fxServer, d)
		l.srv.Receive(d, at)
	}
	f.now = now
}

func (f *fixture) step(d time.Duration) {
	f.now += d
	for _, l := range f.links {
		f.flush(l)
	}
}

func data(c *transport.Conn, msgs ...game.Message) {
	for _, m := range msgs {
		c.Queue(dissect.TypeData, m.Append(nil), true, true)
	}
}

func raw(c *transport.Conn, b []byte, reliable bool) {
	c.Queue(dissect.TypeData, b, reliable, reliable)
}

func control(c *transport.Conn, t dissect.TransportType, ctl dissect.Control) {
	c.Queue(t, dissect.AppendControl(nil, &ctl), true, true)
}

func objCreateTeam(owner, team uint8, id game.ObjectID, species uint8, name string) []byte {
	return (&game.ObjCreate{HasTeam: true, Owner: owner, Team: team, Class: game.ClassShip, Object: id,
		Species: game.Species(species), PlayerName: name, SetName: "Multi1"}).Append(nil)
}

func stateUpdate(id game.ObjectID, t float64) []byte {
	return (&game.StateUpdate{Object: id, GameTime: float32(t)}).Append(nil)
}

// join plays l's connection, checksums and lobby, ending with its ship.
func (f *fixture) join(l *fxLink, gameSlot uint8, species uint8, team uint8) {
	control(l.cli, dissect.TypeConnectAck, dissect.Control{Kind: "connect-request", Addr: l.addr.Addr(),
		Port: l.addr.Port(), Reserved: []byte{0, 0, 0, 0}})
	for _, d := range l.cli.Flush(f.now) {
		f.write(l.addr, fxServer, d)
		l.srv.Receive(d, f.now)
	}
	f.now += 4 * time.Millisecond
	slot := l.slot
	control(l.srv, dissect.TypeConnectAck, dissect.Control{Kind: "slot-assignment", Slot: &slot})
	req := func(rd game.ChecksumRound, dir, filter string, rec bool) {
		data(l.srv, &game.ChecksumRequest{Round: rd, Dir: dir, Filter: filter, Recursive: rec})
	}
	req(0, "scripts/", "App.pyc", false)
	for _, d := range l.srv.FlushMessages(f.now) { // the stock reply leaves the ACK for later
		f.write(fxServer, l.addr, d)
		l.cli.Receive(d, f.now)
	}
	l.cli.LocalID = l.slot
	rounds := []struct {
		rd          game.ChecksumRound
		dir, filter string
		rec         bool
	}{{1, "scripts/", "Autoexec.pyc", false}, {2, "scripts/ships", "*.pyc", true},
		{3, "scripts/mainmenu", "*.pyc", false}, {game.FinalChecksumRound, "Scripts/Multiplayer", "*.pyc", true}}
	respond := func(rd game.ChecksumRound, files int) {
		resp := &game.ChecksumResponse{Round: rd, RefHash: 0x7E0CE243, DirHash: 0x2FCBAF4D}
		for i := range files {
			resp.Tree.Files = append(resp.Tree.Files, game.ChecksumFile{Name: game.Hash32(i + 1), Content: game.Hash32(0xA1E60185 + i)})
		}
		data(l.cli, resp)
	}
	f.step(40 * time.Millisecond)
	respond(0, 1)
	for _, r := range rounds {
		f.step(15 * time.Millisecond)
		req(r.rd, r.dir, r.filter, r.rec)
		f.step(15 * time.Millisecond)
		files := 1
		if r.rd == 2 {
			files = 80 // large enough to travel in fragments
		}
		respond(r.rd, files)
	}
	f.step(15 * time.Millisecond)
	data(l.srv, &game.ChecksumComplete{},
		&game.Settings{GameTime: 30, CollisionDamage: true, PlayerSlot: gameSlot, Map: "Multiplayer.Episode.Mission1.Mission1"},
		&game.GameInit{})
	f.step(26 * time.Millisecond)
	data(l.cli, &game.NewPlayerInGame{})
	f.step(6 * time.Millisecond)
	data(l.srv, &game.MissionInit{PlayerLimit: 8, System: 1, TimeLimit: game.NoLimit, FragLimit: 10})
	f.step(10 * time.Millisecond)
	f.step(4500 * time.Millisecond) // choosing a ship
	f.spawn(l, gameSlot, species, team, l.ship)
}

// spawn sends l's ObjCreateTeam and the server's relay to the others.
func (f *fixture) spawn(l *fxLink, gameSlot, species, team uint8, id game.ObjectID) {
	l.ship = id
	oc := objCreateTeam(gameSlot, team, id, species, l.name)
	raw(l.cli, oc, true)
	f.step(20 * time.Millisecond)
	for _, o := range f.links {
		if o != l {
			raw(o.srv, oc, true)
		}
	}
	l.flying = true
}

// fly runs n ticks of 100 ms: StateUpdates, and a keepalive each second.
func (f *fixture) fly(n int) {
	for range n {
		for _, l := range f.links {
			if !l.flying {
				continue
			}
			raw(l.cli, stateUpdate(l.ship, f.now.Seconds()), false)
			for _, o := range f.links {
				if o.flying {
					raw(l.srv, stateUpdate(o.ship, f.now.Seconds()), false)
				}
			}
			if f.ticks%10 == 0 {
				slot := l.slot
				ka := dissect.Control{Kind: "peer-info", Slot: &slot, Addr: l.addr.Addr(), Name: l.name}
				control(l.cli, dissect.TypePeerInfo, ka)
				control(l.srv, dissect.TypePeerInfo, ka)
			}
		}
		f.ticks++
		f.step(100 * time.Millisecond)
	}
}

func (f *fixture) gamespy() {
	q := dissect.GameSpy{Query: true, Kind: "status", Fields: []dissect.GameSpyField{{Key: "status"}}}
	f.write(fxBrowser, fxServer, q.Append(nil))
	f.now += 2 * time.Millisecond
	r := dissect.GameSpy{Fields: []dissect.GameSpyField{{Key: "hostname", Value: "bcwire test"}, {Key: "numplayers", Value: "1"}},
		QueryID: "1.1", Final: true}
	f.write(fxServer, fxBrowser, r.Append(nil))
}

func writeFixture(t *testing.T, path string) {
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, capture.PCAP, capture.Ethernet)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{t: t, w: w}
	alice := &fxLink{addr: fxAlice, cli: transport.NewConn(0xFF, transport.Options{}), srv: transport.NewConn(0x01, transport.Options{}), slot: 3, name: "Alice", ship: game.PlayerObjectID(1)}
	bob := &fxLink{addr: fxBob, cli: transport.NewConn(0xFF, transport.Options{}), srv: transport.NewConn(0x01, transport.Options{}), slot: 2, name: "Bob", ship: game.PlayerObjectID(0)}

	// Bob joins before the capture starts.
	f.now = -time.Minute
	f.links = []*fxLink{bob}
	f.join(bob, 0, 6, 1)
	f.fly(5)
	f.now = 0
	f.record = true
	f.fly(10)

	f.links = append(f.links, alice)
	f.join(alice, 1, 1, 0)
	f.fly(20)

	chat := &game.Chat{Op: game.OpChat, SenderID: 3, Text: "hello Bob"}
	data(alice.cli, chat)
	f.step(10 * time.Millisecond)
	data(bob.srv, chat)
	f.fly(10)

	alice.drop = 1 // the next server datagram to Alice is lost after the capture point
	data(alice.srv, &game.Score{PlayerID: 2, Kills: 0, Deaths: 0, Score: 0})
	f.fly(20)

	for _, l := range f.links {
		data(l.srv, &game.ScoreChange{KillerID: 3, KillerKills: 1, KillerScore: 100, VictimID: 2, VictimDeaths: 1})
	}
	bob.flying = false
	f.fly(30)
	f.spawn(bob, 0, 7, 1, bob.ship+1)
	f.fly(20)

	slot := alice.slot
	control(alice.cli, dissect.TypeDisconnect, dissect.Control{Kind: "disconnect", Slot: &slot, Addr: fxAlice.Addr()})
	f.step(30 * time.Millisecond)
	alice.flying = false
	f.fly(5)
	f.links = []*fxLink{alice} // Bob goes quiet
	f.fly(10)
	for range 6 {
		f.now += 10 * time.Second
		f.gamespy()
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	// Write and rename, so that statscmd's tests, which read the file and
	// may run at the same time, never see half of it.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// TestFixture regenerates the fixture capture with -update.
func TestFixture(t *testing.T) {
	if *update {
		writeFixture(t, FixturePath)
	}
	if _, err := os.Stat(FixturePath); err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
}
