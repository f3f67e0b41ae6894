package replay

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/server/manifest"
	"github.com/bcwire/bcwire/server/native"
	"github.com/bcwire/bcwire/session/diff"
)

// Behaviour against servers that are not a replay of the capture: a
// per-address connect limit, checksum answers from a manifest, a server
// that goes silent. Each is a replay server behind a PacketConn wrapper
// that behaves as such a server does.

// oneClientPerAddress drops every datagram from a second port of an
// address it has already heard from: a strict form of a server's
// per-address reconnect limit (OpenBC refuses a connect from an address
// within 2 s of its last disconnect).
type oneClientPerAddress struct {
	net.PacketConn
	mu      sync.Mutex
	port    map[netip.Addr]uint16
	refused int
}

func (p *oneClientPerAddress) ReadFrom(b []byte) (int, net.Addr, error) {
	for {
		n, addr, err := p.PacketConn.ReadFrom(b)
		if err != nil {
			return n, addr, err
		}
		ap := addr.(*net.UDPAddr).AddrPort()
		p.mu.Lock()
		first, seen := p.port[ap.Addr()]
		if !seen {
			p.port[ap.Addr()] = ap.Port()
		}
		refuse := seen && first != ap.Port()
		if refuse {
			p.refused++
		}
		p.mu.Unlock()
		if !refuse {
			return n, addr, nil
		}
	}
}

func verifyAt(t *testing.T, c *Capture, target netip.AddrPort, opts VerifyOptions) *Result {
	t.Helper()
	opts.Target = target
	if opts.AnswerTimeout == 0 {
		opts.AnswerTimeout = 300 * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	res, err := Verify(ctx, c, opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestVerifyOneAddressPerSession(t *testing.T) {
	c := load(t, "duel.pcapng")
	var limit *oneClientPerAddress
	s := serve(t, c, ServerOptions{Timing: TimingASAP}, func(pc net.PacketConn) net.PacketConn {
		limit = &oneClientPerAddress{PacketConn: pc, port: map[netip.Addr]uint16{}}
		return limit
	})
	res := verifyAt(t, c, addrOf(s.pc), VerifyOptions{Mode: ModeAdaptive, Timing: TimingASAP})
	if res.Summary.Joined != 2 || limit.refused != 0 {
		t.Fatalf("default sources against loopback: %d of 2 sessions joined, %d datagrams refused", res.Summary.Joined, limit.refused)
	}
	for i, sr := range res.Sessions {
		if want := netip.AddrFrom4([4]byte{127, 0, 0, byte(2 + i)}); netip.MustParseAddrPort(sr.Client).Addr() != want {
			t.Errorf("session %d sent from %s, want %s", i+1, sr.Client, want)
		}
	}

	// All sessions from one address: the limit refuses the second.
	s2 := serve(t, c, ServerOptions{Timing: TimingASAP}, func(pc net.PacketConn) net.PacketConn {
		limit = &oneClientPerAddress{PacketConn: pc, port: map[netip.Addr]uint16{}}
		return limit
	})
	one := netip.MustParseAddr("127.0.0.1")
	res = verifyAt(t, c, addrOf(s2.pc), VerifyOptions{Mode: ModeAdaptive, Timing: TimingASAP, Sources: []netip.Addr{one}, GiveUp: 2})
	if res.Summary.Joined != 1 || limit.refused == 0 || res.Sessions[1].Joined {
		t.Errorf("--source 127.0.0.1: %d sessions joined (want only the first), %d datagrams refused", res.Summary.Joined, limit.refused)
	}
	// Sharing an address, the second session kept its captured gap after
	// the first even with asap timing.
	gap := c.Sessions[1].Start.Sub(c.Sessions[0].Start)
	p0, p1 := res.Sessions[0].Phases.Connect, res.Sessions[1].Phases.Connect
	if p0 == nil || p1 == nil {
		t.Errorf("one address: connect times %v %v", p0, p1)
	} else if p1.Sub(*p0) < gap-100*time.Millisecond {
		t.Errorf("one address: the second session connected %v after the first, captured gap %v", p1.Sub(*p0), gap)
	}
}

func TestSourcesFor(t *testing.T) {
	lo := VerifyOptions{Target: netip.MustParseAddrPort("127.0.0.1:22101")}
	got, err := sourcesFor(&lo, 3)
	if err != nil || got[0].String() != "127.0.0.2" || got[2].String() != "127.0.0.4" {
		t.Errorf("loopback default: %v %v", got, err)
	}
	lo.Sources = []netip.Addr{netip.MustParseAddr("127.0.0.9"), netip.MustParseAddr("127.0.0.10")}
	got, _ = sourcesFor(&lo, 3)
	if got[0].String() != "127.0.0.9" || got[1].String() != "127.0.0.10" || got[2].String() != "127.0.0.9" {
		t.Errorf("--source list: %v", got)
	}
	lo.Listen = func() (net.PacketConn, error) { return nil, nil }
	if got, _ = sourcesFor(&lo, 2); got[0].IsValid() {
		t.Errorf("with Listen set: %v", got)
	}
}

// sentLog records the datagrams a socket sends.
type sentLog struct {
	net.PacketConn
	sent [][]byte
}

func (p *sentLog) WriteTo(b []byte, addr net.Addr) (int, error) {
	p.sent = append(p.sent, append([]byte(nil), b...))
	return len(b), nil
}

func TestVerifyAnswersFromManifest(t *testing.T) {
	c := load(t, "join.pcap")
	// A made-up manifest for rounds 0-3: round 2's captured response is
	// fragmented (3 fragments over two datagrams), the manifest's fits
	// one message.
	mf, err := manifest.ParseOpenBC([]byte(`{"version_string_hash": "0x7E0CE243", "directories": [
		{"index": 0, "dir_name_hash": "0x4DAFCB2F", "files": [{"name_hash": "0x373EB677", "content_hash": "0x09555159"}]},
		{"index": 1, "dir_name_hash": "0x4DAFCB2F", "files": []},
		{"index": 2, "dir_name_hash": "0xB831D315", "files": [{"name_hash": 1, "content_hash": 2}],
		 "subdirs": [{"name_hash": 3, "files": [{"name_hash": 4, "content_hash": 5}]}]},
		{"index": 3, "dir_name_hash": "0x3F7BF00A", "files": []}]}`))
	if err != nil {
		t.Fatal(err)
	}
	opts := VerifyOptions{Target: netip.MustParseAddrPort("127.0.0.1:9"), Mode: ModeAdaptive, Manifest: mf}
	log := &sentLog{}
	v := &verifier{opts: &opts, script: c.Sessions[0], listen: func() (net.PacketConn, error) {
		log.PacketConn = listen(t)
		return log, nil
	}}
	if err := v.setup(); err != nil {
		t.Fatal(err)
	}
	defer v.pc.Close()
	v.start = time.Now()
	a := newAdaptive(v)
	for _, r := range []byte{0, 1, 2, 3, 0xFF} {
		a.requested[r] = true // as a server asks, round by round
	}
	// Every captured ACK counts as due, so every client message goes.
	for k := range a.captured {
		a.received[k] = true
	}
	for i := range v.script.Steps {
		if v.script.Steps[i].IsClient() {
			if err := a.send(i); err != nil {
				t.Fatal(err)
			}
		}
	}
	responses, fragments := map[byte][]byte{}, 0
	for _, wire := range log.sent {
		if dissect.IsGameSpy(wire) {
			continue
		}
		plain := make([]byte, len(wire))
		dissect.Decrypt(plain, wire)
		var dg dissect.Datagram
		if err := dg.Parse(plain); err != nil {
			t.Fatalf("sent a datagram that does not parse: %v", err)
		}
		for i := range dg.Messages {
			m := &dg.Messages[i]
			switch {
			case m.Type != dissect.TypeData:
			case m.Fragment:
				fragments++
			case len(m.Payload) > 1 && m.Payload[0] == byte(game.OpChecksumResponse):
				responses[m.Payload[1]] = append([]byte(nil), m.Payload...)
			}
		}
	}
	for r := range 4 {
		if !bytes.Equal(responses[byte(r)], mf[game.ChecksumRound(r)]) {
			t.Errorf("round %d: sent % X, want the manifest's % X", r, responses[byte(r)], mf[game.ChecksumRound(r)])
		}
	}
	if fragments != 0 {
		t.Errorf("%d fragments of the captured round-2 response sent besides the manifest's whole one", fragments)
	}
	// Round 0xFF is not in the manifest: the captured response goes.
	if got := responses[0xFF]; len(got) < 2 || bytes.Equal(got, a.responses[0]) || got[1] != 0xFF {
		t.Errorf("round 0xFF: sent % X, want the captured response", got)
	}
	details := 0
	for _, st := range v.res.Steps {
		if strings.Contains(st.Detail, "manifest's response") {
			details++
		}
	}
	if details != 4 {
		t.Errorf("%d sent steps say they carried the manifest's response, want 4", details)
	}
}

// silentAfterRound0 stops answering a client once it has sent its round-0
// checksum response: a server that rejects the answer and drops the client
// without a word.
type silentAfterRound0 struct {
	net.PacketConn
	mu     sync.Mutex
	silent bool
}

func (p *silentAfterRound0) ReadFrom(b []byte) (int, net.Addr, error) {
	n, addr, err := p.PacketConn.ReadFrom(b)
	if err == nil && !dissect.IsGameSpy(b[:n]) {
		plain := make([]byte, n)
		dissect.Decrypt(plain, b[:n])
		var dg dissect.Datagram
		_ = dg.Parse(plain)
		for i := range dg.Messages {
			m := &dg.Messages[i]
			if m.Type == dissect.TypeData && len(m.Payload) > 1 && m.Payload[0] == byte(game.OpChecksumResponse) && m.Payload[1] == 0 {
				p.mu.Lock()
				p.silent = true
				p.mu.Unlock()
			}
		}
	}
	return n, addr, err
}

func (p *silentAfterRound0) WriteTo(b []byte, addr net.Addr) (int, error) {
	p.mu.Lock()
	silent := p.silent
	p.mu.Unlock()
	if silent {
		return len(b), nil
	}
	return p.PacketConn.WriteTo(b, addr)
}

func TestVerifySilentAfterRound0(t *testing.T) {
	c := load(t, "join.pcap")
	// The capture frame of the client's round-0 response.
	frame := 0
	for i := range c.Sessions[0].Steps {
		d := &c.Sessions[0].Steps[i]
		if d.IsClient() && strings.HasPrefix(clientSummary(d), "ChecksumResponse round 0") {
			frame = d.Frame
			break
		}
	}
	if frame == 0 {
		t.Fatal("join.pcap has no round-0 checksum response")
	}
	for _, mode := range []Mode{ModeAdaptive, ModeExact} {
		s := serve(t, c, ServerOptions{Timing: TimingASAP}, func(pc net.PacketConn) net.PacketConn {
			return &silentAfterRound0{PacketConn: pc}
		})
		res := verifyAt(t, c, addrOf(s.pc), VerifyOptions{Mode: mode, Timing: TimingASAP, GiveUp: 2})
		sr := res.Sessions[0]
		want := fmt.Sprintf("no answer after frame %d (ChecksumResponse round 0)", frame)
		if sr.First == nil || sr.First.Status != StatusNoAnswer || sr.First.Detail != want {
			t.Errorf("%s: first divergence %+v, want %q", mode, sr.First, want)
		}
		if sr.Abandoned == "" || sr.NotReached == 0 {
			t.Errorf("%s: abandoned %q, %d steps not reached", mode, sr.Abandoned, sr.NotReached)
		}
		for _, st := range sr.Steps {
			if st.Status == StatusNotReached && st.AtMS != 0 {
				t.Errorf("%s: a step not reached carries timing: %+v", mode, st)
				break
			}
			if st.Status == StatusMissing && st.Detail == "session abandoned" {
				t.Errorf("%s: an abandoned step counts as missing: %+v", mode, st)
				break
			}
		}
		// Missing are only the answers awaited while the server was silent.
		if sr.Missing > 10 {
			t.Errorf("%s: %d missing, %d not reached: abandoned steps counted as missing?", mode, sr.Missing, sr.NotReached)
		}
	}
}

func TestConfigDifferencesApart(t *testing.T) {
	cmp := NewRulesComparer(diff.DefaultRules())
	stock := []byte(`\hostname\stock\missionscript\M\mapname\Mission1\numplayers\0\maxplayers\8\gamemode\settings\timelimit\-1\fraglimit\10\system\Multi1\password\0\final\\queryid\1.1`)
	ours := []byte(`\hostname\OpenBC\missionscript\M\mapname\DM\numplayers\1\maxplayers\5\gamemode\openplaying\timelimit\-1\fraglimit\-1\system\Multi1\password\0\player_0\Dedicated Server\final\\queryid\1.1`)
	v := judgeGameSpyBytes(ours, stock, cmp)
	status, _, config := v.status()
	if status != StatusConfig || len(config) != 6 {
		t.Errorf("GameSpy config only: status %s, config %q (want 6: players, hostname, mapname, maxplayers, gamemode, fraglimit)", status, config)
	}
	for _, key := range []string{"players", "hostname", "mapname", "maxplayers", "gamemode", "fraglimit"} {
		if !strings.Contains(strings.Join(config, "\n"), key+" ") {
			t.Errorf("config differences %q lack %s", config, key)
		}
	}
	// A protocol difference beside them: different, the config still listed.
	renamed := bytes.Replace(ours, []byte(`\system\`), []byte(`\sistem\`), 1)
	status, detail, config := judgeGameSpyBytes(renamed, stock, cmp).status()
	if status != StatusDifferent || !strings.Contains(detail, "sistem") || len(config) != 6 {
		t.Errorf("with a renamed key: %s %q, config %q", status, detail, config)
	}
	// Settings values and MISSION_INIT's match settings are configuration;
	// the Settings player slot is not.
	a := &game.Settings{Map: "Multiplayer.Episode.Mission1.Mission1", CollisionDamage: true}
	b := &game.Settings{Map: "Multiplayer.Episode.Mission2.Mission2", FriendlyFire: true}
	if status, _, config := cmp.judgeGame(a, b).status(); status != StatusConfig || len(config) != 3 {
		t.Errorf("Settings: %s, config %q", status, config)
	}
	b.PlayerSlot = 3
	if status, _, _ := cmp.judgeGame(a, b).status(); status != StatusDifferent {
		t.Errorf("Settings with another slot: %s, want different", status)
	}
	if status, _, config := cmp.judgeGame(&game.MissionInit{FragLimit: 10, PlayerLimit: 8}, &game.MissionInit{FragLimit: game.NoLimit, PlayerLimit: 8}).status(); status != StatusConfig || len(config) != 1 {
		t.Errorf("MISSION_INIT frag limit: %s, config %q", status, config)
	}
	// As a plain Comparer, configuration still counts.
	if ok, _ := cmp.Compare(a, &game.Settings{Map: a.Map}); ok {
		t.Error("Compare holds Settings with other values equivalent")
	}
}

// TestSessionShipClasses: the captured side's decoder knows the ship
// classes of the session's own ObjCreates, the client's included, so the
// StateUpdates about the client's ship decode their subsystems in the
// report; a decoder that has seen nothing cannot.
func TestSessionShipClasses(t *testing.T) {
	c := load(t, "duel.pcapng")
	opts := VerifyOptions{Target: netip.MustParseAddrPort("127.0.0.1:9"), Mode: ModeAdaptive}
	v := &verifier{opts: &opts, script: c.Sessions[0], listen: func() (net.PacketConn, error) { return listen(t), nil }}
	if err := v.setup(); err != nil {
		t.Fatal(err)
	}
	defer v.pc.Close()
	a := newAdaptive(v)
	checked := 0
	for _, e := range a.exp {
		if e.typ != dissect.TypeData || len(e.payload) == 0 || game.Opcode(e.payload[0]) != game.OpStateUpdate {
			continue
		}
		fresh := strings.Join(msgLines(e.typ, e.seq, e.payload, game.NewDecoder()), " ")
		if !strings.Contains(fresh, "ship class unknown") {
			continue // no subsystem section
		}
		checked++
		if got := strings.Join(msgLines(e.typ, e.seq, e.payload, a.dec2), " "); strings.Contains(got, "ship class unknown") {
			t.Fatalf("with the session's ObjCreates: %s", got)
		}
	}
	if checked == 0 {
		t.Fatal("no StateUpdate with a subsystem section in duel's first session")
	}
}

// renamedServer answers GameSpy queries under another host name.
type renamedServer struct{ net.PacketConn }

func (p renamedServer) WriteTo(b []byte, addr net.Addr) (int, error) {
	if dissect.IsGameSpy(b) {
		b = bytes.Replace(b, []byte(`\hostname\bcwire synthetic server`), []byte(`\hostname\Friday night`), 1)
	}
	return p.PacketConn.WriteTo(b, addr)
}

func TestVerifyFailOnConfig(t *testing.T) {
	c := load(t, "join.pcap")
	for _, fail := range []bool{false, true} {
		s := serve(t, c, ServerOptions{Timing: TimingASAP}, func(pc net.PacketConn) net.PacketConn { return renamedServer{pc} })
		res := verifyAt(t, c, addrOf(s.pc), VerifyOptions{Mode: ModeAdaptive, Timing: TimingASAP, FailOnConfig: fail})
		sr := res.Sessions[0]
		if res.Summary.Config != 1 || sr.First != nil && sr.First.Status == StatusConfig {
			t.Fatalf("fail-on-config %v: %d config steps, first divergence %+v", fail, res.Summary.Config, sr.First)
		}
		var cfg *Step
		for i := range sr.Steps {
			if sr.Steps[i].Status == StatusConfig {
				cfg = &sr.Steps[i]
			}
		}
		if cfg == nil || len(cfg.Config) != 1 || !strings.Contains(cfg.Config[0], `hostname "Friday night", captured "bcwire synthetic server"`) {
			t.Fatalf("config step %+v", cfg)
		}
		if !res.Summary.Counts.OK() {
			t.Fatalf("the rest differs too: %+v", res.Summary.Counts)
		}
		if want := !fail; res.Summary.OK != want {
			t.Errorf("fail-on-config %v: summary OK %v, want %v (counts %+v)", fail, res.Summary.OK, want, res.Summary.Counts)
		}
	}
}

// TestVerifyNativeServerWithOpenBCManifest: bcwire's own server checking
// answers against a manifest in OpenBC's JSON form admits verify's client
// only when verify answers from the same manifest.
func TestVerifyNativeServerWithOpenBCManifest(t *testing.T) {
	c := load(t, "join.pcap")
	mf, err := manifest.ParseOpenBC([]byte(`{"version_string_hash": "0x7E0CE243", "directories": [
		{"index": 0, "dir_name_hash": "0x4DAFCB2F", "files": [{"name_hash": "0x373EB677", "content_hash": "0x09555159"}]},
		{"index": 1, "dir_name_hash": "0x4DAFCB2F", "files": []},
		{"index": 2, "dir_name_hash": "0xB831D315", "files": [{"name_hash": 1, "content_hash": 2}]},
		{"index": 3, "dir_name_hash": "0x3F7BF00A", "files": []}]}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, answer := range []bool{true, false} {
		pc := listen(t)
		srv, err := native.New(native.Options{Config: native.DefaultConfig(), Manifest: native.Manifest(mf)})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- srv.Serve(ctx, pc) }()
		opts := VerifyOptions{Mode: ModeAdaptive, Timing: TimingASAP, GiveUp: 2}
		if answer {
			opts.Manifest = mf
		}
		res := verifyAt(t, c, addrOf(pc), opts)
		cancel()
		<-done
		pc.Close()
		if joined := res.Summary.Joined == 1; joined != answer {
			t.Errorf("answering from the manifest %v: joined %v (first divergence %+v)", answer, joined, res.Sessions[0].First)
		}
		// Refused: the report opens with the refusal and the step it answered.
		if f := res.Sessions[0].First; !answer && (f == nil || f.Status != StatusRefused ||
			!strings.Contains(f.Detail, "the server refused the client after frame 5 (ChecksumResponse round 0): data seq=1  VersionMismatch")) {
			t.Errorf("refused: first divergence %+v", f)
		}
	}
}

// TestVerifyFragmentsLargeManifestAnswer: a manifest response too large for
// one message goes as stock fragments, one datagram each, never past the
// 512-byte datagram stock peers receive.
func TestVerifyFragmentsLargeManifestAnswer(t *testing.T) {
	c := load(t, "join.pcap")
	var files strings.Builder
	for i := range 100 {
		if i > 0 {
			files.WriteString(",")
		}
		fmt.Fprintf(&files, `{"name_hash": %d, "content_hash": %d}`, i+1, 1000+i)
	}
	mf, err := manifest.ParseOpenBC([]byte(`{"version_string_hash": "0x7E0CE243", "directories": [
		{"index": 2, "dir_name_hash": "0xB831D315", "files": [` + files.String() + `]}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if len(mf[2]) < 800 {
		t.Fatalf("round 2 is only %d bytes", len(mf[2]))
	}
	opts := VerifyOptions{Target: netip.MustParseAddrPort("127.0.0.1:9"), Mode: ModeAdaptive, Manifest: mf}
	log := &sentLog{}
	v := &verifier{opts: &opts, script: c.Sessions[0], listen: func() (net.PacketConn, error) {
		log.PacketConn = listen(t)
		return log, nil
	}}
	if err := v.setup(); err != nil {
		t.Fatal(err)
	}
	defer v.pc.Close()
	v.start = time.Now()
	a := newAdaptive(v)
	for _, r := range []byte{0, 1, 2, 3, 0xFF} {
		a.requested[r] = true
	}
	for k := range a.captured {
		a.received[k] = true
	}
	for i := range v.script.Steps {
		if v.script.Steps[i].IsClient() {
			if err := a.send(i); err != nil {
				t.Fatal(err)
			}
		}
	}
	var frags [][]byte
	total := 0
	for _, wire := range log.sent {
		if len(wire) > 512 {
			t.Errorf("a %d-byte datagram", len(wire))
		}
		if dissect.IsGameSpy(wire) {
			continue
		}
		plain := make([]byte, len(wire))
		dissect.Decrypt(plain, wire)
		var dg dissect.Datagram
		if err := dg.Parse(plain); err != nil {
			t.Fatal(err)
		}
		for i := range dg.Messages {
			if m := &dg.Messages[i]; m.Type == dissect.TypeData && m.Fragment {
				if m.FragIndex == 0 {
					total = int(m.FragTotal)
				}
				frags = append(frags, append([]byte(nil), m.Payload...))
			}
		}
	}
	if total != 3 || len(frags) != 3 || !bytes.Equal(bytes.Join(frags, nil), mf[2]) {
		t.Errorf("%d fragments (of %d announced) reassemble to %d bytes, want the manifest's %d", len(frags), total, len(bytes.Join(frags, nil)), len(mf[2]))
	}
}
