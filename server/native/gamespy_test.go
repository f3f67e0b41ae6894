package native_test

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/server/native"
	"github.com/bcwire/bcwire/server/native/internal/testclient"
	"github.com/bcwire/bcwire/server/stock"
)

// query sends b to the sim server from from and returns the replies to
// from, parsed.
func (n *simNet) query(from netip.AddrPort, b string) []dissect.GameSpy {
	n.t.Helper()
	before := len(n.sent)
	n.srv.HandleDatagram(n.now, from, []byte(b))
	var out []dissect.GameSpy
	for _, p := range n.sent[before:] {
		if p.addr == from {
			g, err := dissect.ParseGameSpy(p.wire)
			if err != nil || g.Query {
				n.t.Fatalf("reply to %s: %q (%v)", b, p.wire, err)
			}
			out = append(out, g)
		}
	}
	n.toClient = nil
	return out
}

func field(g dissect.GameSpy, key string) (string, bool) {
	for _, f := range g.Fields {
		if f.Key == key {
			return f.Value, true
		}
	}
	return "", false
}

// TestGameSpyQueryForms: a query that carries \queryid\ is answered with
// that queryid (OpenBC's test harness sends \status\\queryid\99.1\);
// \echo\ is echoed; \secure\ is answered with info and \validate\, whose
// value OpenBC's running server gives for the same challenge; a reply sent
// to the server is dropped as no query.
func TestGameSpyQueryForms(t *testing.T) {
	n := newSim(t, native.Options{})
	src := func(i int) netip.AddrPort {
		return netip.AddrPortFrom(netip.MustParseAddr("10.9.0.1"), uint16(40000+i))
	}

	r := n.query(src(1), `\status\\queryid\99.1\`)
	if len(r) != 1 || r[0].QueryID != "99.1" || !r[0].Final {
		t.Fatalf("status with queryid: %+v", r)
	}
	if v, _ := field(r[0], "hostname"); v != native.DefaultConfig().Name {
		t.Errorf("hostname %q", v)
	}
	r = n.query(src(2), `\echo\ping 42`)
	if len(r) != 1 || len(r[0].Fields) != 1 || r[0].Fields[0] != (dissect.GameSpyField{Key: "echo", Value: "ping 42"}) || r[0].QueryID != "1.1" {
		t.Errorf("echo: %+v", r)
	}
	r = n.query(src(3), `\secure\abc123`)
	if len(r) != 1 {
		t.Fatalf("secure: %+v", r)
	}
	if v, _ := field(r[0], "validate"); v != "kmbZGkkf" {
		t.Errorf("validate %q, want kmbZGkkf", v)
	}
	if v, _ := field(r[0], "gamename"); v != "bcommander" {
		t.Errorf("secure reply gamename %q", v)
	}
	if r := n.query(src(4), `\gamename\bcommander\final\\queryid\1.1`); len(r) != 0 {
		t.Errorf("a reply was answered: %+v", r)
	}
	st := n.srv.Stats()
	if st.GameSpy != 3 || st.Drops[native.DropGameSpyBad] != 1 {
		t.Errorf("stats: %+v", st)
	}
}

// TestGameSpyAmplification checks the bound the README states: a source
// gets at most one reply a second, all sources together at most
// RepliesPerSecond, and no reply is longer than worstReply bytes, the
// \status\ reply of a server whose every field is as long as it can be, so
// a source is sent at most worstReply bytes a second for at least 8 bytes
// (\status\) it sent.
func TestGameSpyAmplification(t *testing.T) {
	// Bytes; README "GameSpy" and "Reliability and limits" state them: the
	// longest \status\, and the longest reply to any query (that \status\,
	// one \echo\ and one \validate\ of MaxGameSpyValue-byte texts).
	const worstStatus, worstReply = 1888, 2056
	cfg := native.DefaultConfig()
	cfg.Name = strings.Repeat("N", 100)
	cfg.Password = "x"
	cfg.Map = strings.Repeat("M", 200)
	cfg.MaxPlayers = 16
	cfg.TimeLimit, cfg.FragLimit = 254, 254
	n := newSim(t, native.Options{Config: cfg})
	for i := 0; i < 16; i++ {
		c, _ := n.addClient(strings.Repeat(string(rune('a'+i)), 80))
		_ = c
	}
	n.run(3 * time.Second) // names arrive with the keepalives

	// Issue 34.6: \status\ with 226 \secure\ got 3,419 bytes back. Now the
	// first \echo\ and the first \secure\ are answered, their texts cut.
	worstQuery := []byte(`\status\\echo\` + strings.Repeat("e", 300) + `\secure\` + strings.Repeat("c", 300) +
		strings.Repeat(`\secure\a`, 226) + strings.Repeat(`\echo\b`, 100))
	victim := netip.MustParseAddrPort("10.9.9.9:5000")
	var replies, bytesOut int
	longest := 0
	for ms := 0; ms < 5000; ms += 10 { // a query every 10 ms for 5 s
		before := len(n.sent)
		n.srv.HandleDatagram(n.now, victim, worstQuery)
		for _, p := range n.sent[before:] {
			if p.addr == victim {
				replies++
				bytesOut += len(p.wire)
				longest = max(longest, len(p.wire))
			}
		}
		n.run(10 * time.Millisecond)
	}
	if replies > 5 || replies < 4 {
		t.Errorf("%d replies to one source in 5 s, want one a second", replies)
	}
	if replies > 0 && bytesOut > replies*worstReply {
		t.Errorf("%d bytes in %d replies, more than %d each", bytesOut, replies, worstReply)
	}
	t.Logf("one source, a query every 10 ms: %d replies, %d bytes in 5 s", replies, bytesOut)

	// Each query once, from sources of their own, on the worst server.
	for i, q := range [][]byte{[]byte(`\status\`), worstQuery} {
		from := netip.AddrPortFrom(netip.MustParseAddr("10.9.9.10"), uint16(6000+i))
		before := len(n.sent)
		n.srv.HandleDatagram(n.now, from, q)
		if len(n.sent) != before+1 {
			t.Fatalf("query %d: %d replies", i, len(n.sent)-before)
		}
		reply := n.sent[before].wire
		want := []int{worstStatus, worstReply}[i]
		if len(reply) > want {
			t.Errorf("reply of %d bytes to a %d-byte query, more than the stated %d", len(reply), len(q), want)
		}
		if len(reply) < want-2*16 {
			// Within the names' digits of the bound, or the test does not
			// build the worst case it claims to.
			t.Errorf("reply of %d bytes: the test's server is not the worst case (%d)", len(reply), want)
		}
		if got := bytes.Count(reply, []byte(`\validate\`)) + bytes.Count(reply, []byte(`\echo\`)); i == 1 && got != 2 {
			t.Errorf("%d \\validate\\ and \\echo\\ fields answered, want one of each", got)
		}
		t.Logf("a %d-byte query: %d bytes back (%.1fx)", len(q), len(reply), float64(len(reply))/float64(len(q)))
	}

	// The worst case computed from the limits alone.
	var players []string
	for i := 0; i < 16; i++ {
		players = append(players, strings.Repeat("p", 64))
	}
	in := stock.ServerInfo{Hostname: cfg.Name, Password: true, MissionScript: cfg.Map, MapName: cfg.Map,
		NumPlayers: 16, MaxPlayers: 16, GameMode: stock.GameModePlaying, TimeLimit: 254, FragLimit: 254, Players: players}
	if got := len(stock.GameSpyReply("status", in, "1.1")); got != worstStatus {
		t.Errorf("worst-case status reply is %d bytes, the test and README say %d", got, worstStatus)
	}
	long := strings.Repeat("x", stock.MaxGameSpyValue)
	worst := stock.GameSpyAnswer(&dissect.GameSpy{Query: true, Fields: []dissect.GameSpyField{
		{Key: "status"}, {Key: "echo", Value: long}, {Key: "secure", Value: long}}}, in)
	if len(worst) != worstReply {
		t.Errorf("worst-case reply is %d bytes, the test and README say %d", len(worst), worstReply)
	}

	// Many sources: RepliesPerSecond (50) in all.
	n2 := newSim(t, native.Options{})
	total := 0
	for i := 0; i < 1000; i++ {
		from := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 8, byte(i >> 8), byte(i)}), 7000)
		before := len(n2.sent)
		n2.srv.HandleDatagram(n2.now, from, []byte(`\status\`))
		total += len(n2.sent) - before
	}
	if total != 50 {
		t.Errorf("1000 sources within a second got %d replies, want 50", total)
	}

	// The worst query from 1000 sources to the worst server within a
	// second: at most 50 worst replies leave, the stated rate.
	n.run(time.Second)
	before, out := len(n.sent), 0
	for i := 0; i < 1000; i++ {
		n.srv.HandleDatagram(n.now, netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 7, byte(i >> 8), byte(i)}), 7000), worstQuery)
	}
	for _, p := range n.sent[before:] {
		if p.addr.Addr().As4()[1] == 7 {
			out += len(p.wire)
		}
	}
	if out > 50*worstReply || out < 50*(worstReply-32) {
		t.Errorf("1000 worst queries within a second: %d bytes back, want 50 replies of about %d", out, worstReply)
	}
	t.Logf("1000 worst queries within a second: %d bytes back", out)
	if d := n2.srv.Stats().Drops[native.DropRateLimited]; d != 950 {
		t.Errorf("rate-limited drops %d, want 950", d)
	}
}

// fakeMaster is a GameSpy master server on loopback.
type fakeMaster struct {
	t  *testing.T
	pc net.PacketConn
}

func newFakeMaster(t *testing.T) *fakeMaster {
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	return &fakeMaster{t: t, pc: pc}
}

func (m *fakeMaster) addr() netip.AddrPort { return m.pc.LocalAddr().(*net.UDPAddr).AddrPort() }

// recv waits up to d for a datagram; it returns nil on timeout.
func (m *fakeMaster) recv(d time.Duration) ([]byte, netip.AddrPort) {
	buf := make([]byte, 4096)
	_ = m.pc.SetReadDeadline(time.Now().Add(d))
	n, from, err := m.pc.ReadFrom(buf)
	if err != nil {
		return nil, netip.AddrPort{}
	}
	return buf[:n], from.(*net.UDPAddr).AddrPort()
}

func (m *fakeMaster) send(to netip.AddrPort, b string) {
	if _, err := m.pc.WriteTo([]byte(b), net.UDPAddrFromAddrPort(to)); err != nil {
		m.t.Fatal(err)
	}
}

// TestMasterRegistration runs the master handshake of OpenBC's GameSpy
// document against a fake master on loopback: the initial heartbeat, the
// \secure\ challenge answered with \validate\ (and the master's \status\
// right after it answered too), the periodic heartbeat (interval shortened
// to 300 ms), a state-change heartbeat when a client enters the game, and
// the final heartbeat on shutdown.
func TestMasterRegistration(t *testing.T) {
	m := newFakeMaster(t)
	ls := startServer(t, native.Options{Masters: []netip.AddrPort{m.addr()},
		Timing: native.Timing{Heartbeat: 300 * time.Millisecond}})
	hb := func(what string) string {
		t.Helper()
		for {
			b, from := m.recv(2 * time.Second)
			if b == nil {
				t.Fatalf("no %s heartbeat", what)
			}
			if from != ls.addr {
				t.Fatalf("heartbeat from %v, not the game socket %v", from, ls.addr)
			}
			if s := string(b); strings.HasPrefix(s, `\heartbeat\`) {
				return s
			}
		}
	}
	port := func(s string) string { return strings.ReplaceAll(s, "PORT", strconv.Itoa(int(ls.addr.Port()))) }

	if got, want := hb("initial"), port(`\heartbeat\PORT\gamename\bcommander\`); got != want {
		t.Fatalf("initial heartbeat %q, want %q", got, want)
	}
	reply := func() []byte { // the next datagram that is no heartbeat
		for range 20 {
			b, _ := m.recv(2 * time.Second)
			if !strings.HasPrefix(string(b), `\heartbeat\`) {
				return b
			}
		}
		return nil
	}
	m.send(ls.addr, `\secure\MOCKCH`)
	b := reply()
	if want := `\gamename\bcommander\gamever\60\location\0\validate\ZYDxvBjd\final\\queryid\1.1`; string(b) != want {
		t.Fatalf("secure answer %q, want %q", b, want)
	}
	m.send(ls.addr, `\status\`)
	b = reply()
	if g, err := dissect.ParseGameSpy(b); err != nil || g.Query {
		t.Fatalf("master's status query right after secure: %q %v", b, err)
	} else if v, _ := field(g, "gamemode"); v != stock.GameModeSettings {
		t.Errorf("gamemode %q before anyone joined", v)
	}
	if got, want := hb("periodic"), port(`\heartbeat\PORT\gamename\bcommander\`); got != want {
		t.Fatalf("periodic heartbeat %q, want %q", got, want)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := dial(t, ctx, ls, "Sisko", 0, 1, testclient.Options{})
	if err := c.Wait(5*time.Second, "join", inGame); err != nil {
		t.Fatal(err)
	}
	// Periodic heartbeats (every 300 ms) queue up while the join runs, and
	// on a loaded machine the join can take seconds: look past any number
	// of them for 10 s, not past a fixed count.
	until := func(what, want string) bool {
		t.Helper()
		for end := time.Now().Add(10 * time.Second); time.Now().Before(end); {
			if hb(what) == want {
				return true
			}
		}
		return false
	}
	// Off the stock port the real port, not stock's 0 (which a master
	// reads as 22101: TestHeartbeatPort in server/stock).
	if !until("state-change", port(`\heartbeat\PORT\gamename\bcommander\statechanged\1`)) {
		t.Fatal("no state-change heartbeat when the game started")
	}
	ls.stop()
	if !until("final", port(`\heartbeat\PORT\gamename\bcommander\final\`)) {
		t.Fatal("no final heartbeat on shutdown")
	}
}

// TestDropReasons: each kind of ignored datagram is counted under its
// reason, logged at debug level with its source, and the debug lines are
// capped at ten a second however many datagrams are dropped.
func TestDropReasons(t *testing.T) {
	var logBuf bytes.Buffer
	lg := slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	n := newSim(t, native.Options{Logger: lg})
	src := netip.MustParseAddrPort("10.7.0.1:1234")
	n.srv.HandleDatagram(n.now, src, nil)                            // empty
	n.srv.HandleDatagram(n.now, src, []byte(`\hostname\x\final\`))   // a reply
	n.srv.HandleDatagram(n.now, src, []byte{0x02, 0x03, 0x01, 0x02}) // not a connect, unknown source
	n.srv.HandleDatagram(n.now, src, []byte(`\status\`))             // answered
	n.srv.HandleDatagram(n.now, src, []byte(`\status\`))             // rate limited
	legacy := []byte{0xFF, 0x01, 0x03, 0x08, 0x01, 0, 0, 0, 0x7F, 0} // OpenBC's test clients' connect
	wire := make([]byte, len(legacy))
	dissect.Encrypt(wire, legacy)
	n.srv.HandleDatagram(n.now, src, wire)
	st := n.srv.Stats()
	want := native.Drops{}
	want[native.DropEmpty], want[native.DropGameSpyBad], want[native.DropNotConnect] = 1, 1, 1
	want[native.DropRateLimited], want[native.DropLegacyFraming] = 1, 1
	if st.Drops != want || st.Dropped != 5 {
		t.Errorf("drops %v (total %d), want %v", st.Drops, st.Dropped, want)
	}
	for _, r := range []string{"empty", "gamespy-not-query", "not-connect", "rate-limited", "legacy-framing"} {
		if !strings.Contains(logBuf.String(), "reason="+r+" source=10.7.0.1:1234") {
			t.Errorf("no debug line for %s:\n%s", r, logBuf.String())
		}
	}
	// A flood of 10,000 in one second: ten lines, then one that counts the
	// rest once the next second starts.
	logBuf.Reset()
	n.now = n.now.Add(time.Second)
	for i := 0; i < 10000; i++ {
		n.srv.HandleDatagram(n.now, src, []byte{0x42})
	}
	n.now = n.now.Add(time.Second)
	n.srv.HandleDatagram(n.now, src, []byte{0x42})
	lines := strings.Count(logBuf.String(), "datagram dropped")
	if lines != 11 || !strings.Contains(logBuf.String(), "unlogged_before=9990") {
		t.Errorf("%d drop lines for 10,001 drops:\n%s", lines, logBuf.String())
	}
}

// TestMastersConfig: masters come from the config file's masters key and
// must be HOST:PORT.
func TestMastersConfig(t *testing.T) {
	dir := t.TempDir()
	path := dir + "/server.toml"
	if err := os.WriteFile(path, []byte("masters = [\"master.example:27900\", \"127.0.0.1:27901\"]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := native.LoadConfig(path, native.DefaultConfig())
	if err != nil || len(c.Masters) != 2 || c.Masters[0] != "master.example:27900" || c.Validate() != nil {
		t.Errorf("masters from toml: %+v %v", c.Masters, err)
	}
	c.Masters = []string{"master.example"}
	if c.Validate() == nil {
		t.Error("a master without a port accepted")
	}
}

// TestStopLineDrops: the stop line counts drops by reason, in text and in
// JSON.
func TestStopLineDrops(t *testing.T) {
	for _, c := range []struct {
		json bool
		want string
	}{{false, "dropped=2 drops.empty=1 drops.not-connect=1"}, {true, `"dropped":2,"drops":{"empty":1,"not-connect":1}`}} {
		var buf bytes.Buffer
		var h slog.Handler = slog.NewTextHandler(&buf, nil)
		if c.json {
			h = slog.NewJSONHandler(&buf, nil)
		}
		n := newSim(t, native.Options{Logger: slog.New(h)})
		n.srv.HandleDatagram(n.now, netip.MustParseAddrPort("10.0.0.9:9"), nil)
		n.srv.HandleDatagram(n.now, netip.MustParseAddrPort("10.0.0.9:9"), []byte{0x42, 0x42})
		n.srv.Shutdown(n.now)
		if !strings.Contains(buf.String(), c.want) {
			t.Errorf("stop line lacks %s:\n%s", c.want, buf.String())
		}
	}
}

// TestMasterQueriesFromAnotherPort: a master checks servers from another
// port than the one it takes heartbeats on (333networks' Masterserver-Qt5
// from its port + 1), and one that learned of the server from another
// master sends \secure\ and \status\ back to back from there: both are
// answered. Another host still gets one reply a second.
func TestMasterQueriesFromAnotherPort(t *testing.T) {
	m := newFakeMaster(t)
	ls := startServer(t, native.Options{Masters: []netip.AddrPort{m.addr()}})
	// answers counts the replies to two back-to-back queries: it waits up
	// to 10 s for the expected ones (a loaded machine can take more than
	// the 1 s of silence it used to end on), then 500 ms for any more.
	answers := func(local string, want int) int {
		pc, err := net.ListenPacket("udp4", local)
		if err != nil {
			t.Skipf("cannot bind %s: %v", local, err)
		}
		defer pc.Close()
		for _, q := range []string{`\secure\MOCKCH`, `\status\`} {
			if _, err := pc.WriteTo([]byte(q), net.UDPAddrFromAddrPort(ls.addr)); err != nil {
				t.Fatal(err)
			}
		}
		n := 0
		buf := make([]byte, 4096)
		for wait := time.Now().Add(10 * time.Second); ; {
			if n >= want {
				wait = time.Now().Add(500 * time.Millisecond)
			}
			_ = pc.SetReadDeadline(wait)
			if _, _, err := pc.ReadFrom(buf); err != nil {
				return n
			}
			n++
		}
	}
	if n := answers("127.0.0.1:0", 2); n != 2 {
		t.Errorf("the master's host, another port: %d of 2 queries answered", n)
	}
	if n := answers("127.0.0.2:0", 1); n != 1 {
		t.Errorf("another host: %d of 2 back-to-back queries answered, want 1", n)
	}
}

// Issue 34.6: a client still in the checksum rounds is no player: GameSpy
// neither lists it nor counts it. It does once it has finished them.
func TestGameSpyListsOnlyPlayers(t *testing.T) {
	n := newSim(t, native.Options{})
	addr := netip.MustParseAddrPort("192.0.2.1:20000")
	staller := testclient.New(testclient.Options{Name: "Staller", Addr: addr, Stall: true}, func(wire []byte) {
		n.toServer = append(n.toServer, pkt{addr, wire})
	})
	n.clients[addr] = staller
	staller.Connect(n.now)
	n.run(3 * time.Second) // its name arrives with its keepalives
	if ps := n.srv.Players(n.now); len(ps) != 1 || ps[0].Name != "Staller" || ps[0].Phase != "checksum" {
		t.Fatalf("the stalling client is not there under its name: %+v", ps)
	}
	query := func(i int) dissect.GameSpy {
		from := netip.AddrPortFrom(netip.MustParseAddr("10.9.9.11"), uint16(7000+i))
		before := len(n.sent)
		n.srv.HandleDatagram(n.now, from, []byte(`\status\`))
		if len(n.sent) != before+1 {
			t.Fatalf("no reply to \\status\\")
		}
		g, err := dissect.ParseGameSpy(n.sent[before].wire)
		if err != nil {
			t.Fatal(err)
		}
		return g
	}
	fields := func(g dissect.GameSpy) map[string]string {
		m := map[string]string{}
		for _, f := range g.Fields {
			m[f.Key] = f.Value
		}
		return m
	}
	f := fields(query(0))
	if f["numplayers"] != "0" || f["player_0"] != "" {
		t.Errorf("a client in the checksum rounds is listed: numplayers %q, player_0 %q", f["numplayers"], f["player_0"])
	}
	n.join("Sisko")
	n.run(2 * time.Second)
	f = fields(query(1))
	if f["numplayers"] != "1" || f["player_0"] != "Sisko" || f["player_1"] != "" {
		t.Errorf("after a player joined: numplayers %q, player_0 %q, player_1 %q", f["numplayers"], f["player_0"], f["player_1"])
	}
}
