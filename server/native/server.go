// Package native is a Bridge Commander 1.1 dedicated server that speaks the
// stock protocol on its own: it takes clients from connect through the five
// checksum rounds, the 0x28 + Settings + GameInit bundle and MISSION_INIT
// into the game, relays their game messages to each other unchanged, keeps
// them alive, times them out, and answers GameSpy queries on the same
// socket. It behaves, message for message and datagram for datagram, like
// the stock server that server/synth simulates, so a capture of it compares
// cleanly with a stock-like one.
//
// The server simulates no game: it relays what clients send and keeps only
// what the protocol needs: slots, checksum state, ships for late joiners,
// teams for team chat, scores for the join roster. Like the stock host it
// keeps the clients' StateUpdates (0x1C) and CollisionEffects (0x15) rather
// than relaying them, and sends its own StateUpdates about every live ship
// to every client in the game, ten a second (Timing.HostUpdate): the
// subsystem round-robin (flag 0x20) at full health, since it simulates no
// damage, and, about ships the receiver does not own, the motion the
// owner last reported (delta, forward, up, speed, cloak changes). It never
// sends the client-only weapon flag 0x80.
//
// The core (HandleDatagram, Tick, Exec) does no I/O and reads no clock:
// callers pass the time and receive datagrams through a send function, so
// tests drive it on simulated time. Serve runs it on a net.PacketConn.
package native

import (
	"fmt"
	"log/slog"
	"net/netip"
	"sort"
	"sync"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/server/native/internal/inorder"
	"github.com/bcwire/bcwire/server/stock"
	"github.com/bcwire/bcwire/server/transport"
)

// Timing holds the server's clocks. Zero fields take the defaults; tests
// shorten them.
type Timing struct {
	Tick      time.Duration // periodic work: retransmissions, keepalives (100ms)
	Keepalive time.Duration // peer-info to each client (1s)
	Timeout   time.Duration // silence before a client is dropped (45s)
	// RetransmitAfter and MaxRetries are the transport's (1s doubling, 8).
	RetransmitAfter time.Duration
	MaxRetries      int
	// Linger keeps a departed client's connection this long to ACK its
	// resent disconnect and let a boot notice be delivered (3s).
	Linger time.Duration
	// HandshakeTimeout drops a client silent this long during the checksum
	// rounds, which stock clients answer at once (10s): a spoofed connect
	// holds a slot no longer than that.
	HandshakeTimeout time.Duration
	// OrderWait is how long a gap in a client's reliable sequence may stay
	// open before the messages after it are handed on anyway (10s).
	OrderWait time.Duration
	// HostUpdate is the interval of the host's StateUpdates about each
	// live ship to each client in the game (100ms: ten a second, as stock).
	HostUpdate time.Duration
}

func (t Timing) withDefaults() Timing {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&t.Tick, 100*time.Millisecond)
	def(&t.Keepalive, time.Second)
	def(&t.Timeout, 45*time.Second)
	def(&t.RetransmitAfter, time.Second)
	def(&t.Linger, 3*time.Second)
	def(&t.OrderWait, 10*time.Second)
	def(&t.HandshakeTimeout, 10*time.Second)
	def(&t.HostUpdate, 100*time.Millisecond)
	if t.MaxRetries <= 0 {
		t.MaxRetries = 8
	}
	return t
}

// Options configure a Server.
type Options struct {
	Config Config
	// Manifest, when set, is checked against every checksum response; a
	// mismatch gets 0x23 (round-0 version hash) or 0x22 (any other
	// difference) and a boot. Nil accepts every client.
	Manifest Manifest
	Logger   *slog.Logger // nil: discard
	// Tap, when set, sees every datagram the server receives or sends, as on
	// the wire (encrypted), in order. It must not keep wire.
	Tap    func(t time.Time, src, dst netip.AddrPort, wire []byte)
	Timing Timing
	// MaxPeers caps connections at once, handshakes included (default
	// Config.MaxPlayers). A connect beyond it is refused with a boot.
	MaxPeers int
	// RepliesPerSecond caps the replies (GameSpy, refusals) sent to
	// sources that are not connected clients, over all of them (default 50);
	// each source gets at most one a second.
	RepliesPerSecond int
}

type phase uint8

const (
	phChecksum phase = iota + 1 // connect answered, checksum rounds running
	phLobby                     // Settings and GameInit sent, waiting for NewPlayerInGame
	phGame                      // MISSION_INIT sent: in the game
	phClosing                   // gone, kept to ACK and to deliver a boot
)

func (p phase) String() string {
	switch p {
	case phChecksum:
		return "checksum"
	case phLobby:
		return "lobby"
	case phGame:
		return "game"
	case phClosing:
		return "closing"
	}
	return "?"
}

type peer struct {
	addr  netip.AddrPort
	slot  byte // wire peer id, 2 and up
	index int  // game slot, 0 and up
	ip    netip.Addr
	name  string
	team  int // -1 until the player's ship says
	conn  *transport.Conn
	order inorder.Buffer
	phase phase
	round int // index of the checksum request outstanding

	joinedAt      time.Time
	connectedAt   time.Time
	lastHeard     time.Time
	nextKeepalive time.Time
	closeAt       time.Time
	score         game.Score
	dirty         bool
	nextUpdate    time.Time // the next host StateUpdates to this client
}

type ship struct {
	owner   *peer
	payload []byte         // the ObjCreate(Team) message as the owner sent it
	spec    *game.ShipSpec // from the ObjCreate species; nil when unknown

	// The motion the owner last reported, passed on in the host's
	// StateUpdates to the other clients: the position change since the
	// last absolute position (zero right after one), orientation, speed.
	moving    bool // the owner has reported motion
	delta     dissect.CV4
	fwd, up   dissect.Dir3
	speed     dissect.CF16
	cloaked   bool
	rr        map[*peer]int  // subsystem round-robin position per receiver
	cloakSent map[*peer]bool // cloak state last sent to each receiver
}

// Stats count what the server has done.
type Stats struct {
	DatagramsIn, DatagramsOut int
	GameSpy                   int // queries answered
	Dropped                   int // datagrams ignored: garbage, unknown sources, rate limited
	Joined                    int // clients that reached the game
	Relayed                   int // copies of client game messages forwarded
	HostUpdates               int // the host's own StateUpdates sent
	Refused                   int // connects refused (server full)
	Retransmits               int
}

// Server is the native server. Its methods are safe for concurrent use.
type Server struct {
	mu    sync.Mutex
	o     Options
	t     Timing
	match stock.Match
	log   *slog.Logger
	start time.Time
	local netip.AddrPort
	send  func(to netip.AddrPort, wire []byte)
	peers map[netip.AddrPort]*peer
	ships map[game.ObjectID]*ship
	lim   limiter
	dg    dissect.Datagram
	plain []byte
	dec   *game.Decoder
	endAt time.Time
	ended bool
	stats Stats
}

// New returns a server. local is the address it serves on (for Tap; any
// valid address will do) and send delivers its datagrams; Serve sets both.
func New(o Options) (*Server, error) {
	if err := o.Config.Validate(); err != nil {
		return nil, err
	}
	if o.MaxPeers <= 0 {
		o.MaxPeers = o.Config.MaxPlayers
	}
	if o.RepliesPerSecond <= 0 {
		o.RepliesPerSecond = 50
	}
	lg := o.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	s := &Server{o: o, t: o.Timing.withDefaults(), match: o.Config.match(), log: lg,
		peers: map[netip.AddrPort]*peer{}, ships: map[game.ObjectID]*ship{}, dec: game.NewDecoder(),
		send: func(netip.AddrPort, []byte) {}}
	s.lim = limiter{perSecond: o.RepliesPerSecond, last: map[netip.AddrPort]time.Time{}}
	return s, nil
}

// Attach sets the server's own address and the function that sends its
// datagrams. Serve calls it; tests that drive the core call it directly.
func (s *Server) Attach(local netip.AddrPort, send func(to netip.AddrPort, wire []byte)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.local, s.send = local, send
}

// Stats returns the counters so far.
func (s *Server) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	for _, p := range s.peers {
		st.Retransmits += p.conn.Retransmits
	}
	return st
}

// rel is now on the transport's clock.
func (s *Server) rel(now time.Time) time.Duration {
	if s.start.IsZero() {
		s.start = now
	}
	return now.Sub(s.start)
}

// gameTime is the host's game clock in seconds.
func (s *Server) gameTime(now time.Time) float32 { return float32(s.rel(now).Seconds()) }

func (s *Server) tap(now time.Time, src, dst netip.AddrPort, wire []byte) {
	if s.o.Tap != nil {
		s.o.Tap(now, src, dst, wire)
	}
}

func (s *Server) sendWire(now time.Time, to netip.AddrPort, wire []byte) {
	s.tap(now, s.local, to, wire)
	s.stats.DatagramsOut++
	s.send(to, wire)
}

func (s *Server) sendPlain(now time.Time, to netip.AddrPort, plain []byte) {
	wire := make([]byte, len(plain))
	dissect.Encrypt(wire, plain)
	s.sendWire(now, to, wire)
}

// flush sends what is queued for p; withAcks false keeps its ACKs for the
// next datagram (the stock connect reply goes without the connect's ACK).
func (s *Server) flush(now time.Time, p *peer, withAcks bool) {
	var dgs [][]byte
	if withAcks {
		dgs = p.conn.Flush(s.rel(now))
	} else {
		dgs = p.conn.FlushMessages(s.rel(now))
	}
	for _, d := range dgs {
		s.sendPlain(now, p.addr, d)
	}
	p.dirty = false
}

func (s *Server) flushDirty(now time.Time) {
	for _, p := range s.sortedPeers() {
		if p.dirty {
			s.flush(now, p, true)
		}
	}
}

func (s *Server) sortedPeers() []*peer {
	ps := make([]*peer, 0, len(s.peers))
	for _, p := range s.peers {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i].slot < ps[j].slot })
	return ps
}

func (s *Server) queueGame(p *peer, m game.Message) {
	p.conn.Queue(dissect.TypeData, m.Append(nil), true, false)
	p.dirty = true
}

// HandleDatagram processes one datagram that arrived from from at now.
// Nothing it receives makes it panic.
func (s *Server) HandleDatagram(now time.Time, from netip.AddrPort, b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.DatagramsIn++
	s.tap(now, from, s.local, b)
	s.rel(now)
	if len(b) == 0 {
		s.stats.Dropped++
		return
	}
	if dissect.IsGameSpy(b) {
		s.gamespy(now, from, b)
		return
	}
	if cap(s.plain) < len(b) {
		s.plain = make([]byte, len(b), max(len(b), 2048))
	}
	plain := s.plain[:len(b)]
	dissect.Decrypt(plain, b)

	p := s.peers[from]
	if p == nil || (p.phase >= phLobby && p.phase != phClosing && plain[0] == stock.ConnectingPeer && s.isConnect(plain)) {
		if !s.isConnect(plain) {
			s.stats.Dropped++
			return
		}
		if p != nil {
			// The same address connects again: the client restarted.
			s.drop(now, p, "reconnected")
			delete(s.peers, p.addr)
		}
		if p = s.admit(now, from, plain); p == nil {
			return
		}
	}
	if plain[0] != stock.ConnectingPeer && (plain[0] < stock.FirstClientPeer || plain[0] >= stock.FirstClientPeer+stock.MaxPlayers) {
		// No client's peer id: garbage. (A client's own id is not insisted
		// on: a replaying tool may keep the ids of the capture it replays.)
		s.stats.Dropped++
		return
	}
	s.receive(now, p, plain)
	s.flushDirty(now)
}

// isConnect reports whether plain is a connecting client's datagram that
// carries a connect request.
func (s *Server) isConnect(plain []byte) bool {
	if plain[0] != stock.ConnectingPeer {
		return false
	}
	_ = s.dg.Parse(plain)
	for i := range s.dg.Messages {
		m := &s.dg.Messages[i]
		if (m.Type == dissect.TypeConnectAck || m.Type == dissect.TypeConnect) && m.Reliable && len(m.Payload) >= 6 {
			return true
		}
	}
	return false
}

// admit makes a peer for a new client, or refuses it when the server is full.
func (s *Server) admit(now time.Time, from netip.AddrPort, plain []byte) *peer {
	slot := s.freeSlot()
	if len(s.peers) >= s.o.MaxPeers || slot == 0 {
		s.stats.Refused++
		if s.lim.allow(now, from) {
			s.log.Info("connect refused: server full", "client", from, "players", len(s.peers))
			// One small reliable boot, numbered as the first control
			// message of a connection that never opens.
			d := dissect.Datagram{Peer: stock.ServerPeer, Messages: []dissect.Message{
				{Type: dissect.TypeBoot, Reliable: true, Ordered: true, Payload: []byte{stock.BootFull}}}}
			s.sendPlain(now, from, d.Append(nil))
		} else {
			s.stats.Dropped++
		}
		return nil
	}
	p := &peer{addr: from, slot: slot, index: int(slot) - stock.FirstClientPeer, team: -1, lastHeard: now,
		nextKeepalive: now, connectedAt: now,
		conn:  transport.NewConn(stock.ServerPeer, transport.Options{RetransmitAfter: s.t.RetransmitAfter, MaxRetries: s.t.MaxRetries}),
		order: inorder.Buffer{MaxWait: s.t.OrderWait}}
	p.ip = from.Addr().Unmap()
	s.peers[from] = p
	return p
}

func (s *Server) freeSlot() byte {
	used := map[byte]bool{}
	for _, p := range s.peers {
		used[p.slot] = true
	}
	for i := 0; i < s.o.Config.MaxPlayers; i++ {
		if sl := byte(stock.FirstClientPeer + i); !used[sl] {
			return sl
		}
	}
	return 0
}

// receive hands one datagram to p's connection and acts on what it
// delivers.
func (s *Server) receive(now time.Time, p *peer, plain []byte) {
	ds, err := p.conn.Receive(plain, s.rel(now))
	if err != nil {
		s.log.Debug("damaged datagram", "client", p.addr, "err", err)
	}
	if len(ds) == 0 && err != nil && p.phase == 0 {
		s.stats.Dropped++
	}
	p.lastHeard = now
	p.dirty = p.dirty || p.conn.Pending()
	if p.phase == phClosing {
		s.flush(now, p, true) // ACK a resent disconnect, nothing else
		return
	}
	hold := false
	for _, d := range p.order.Push(now, ds) {
		if s.deliver(now, p, &d) {
			hold = true
		}
		if _, ok := s.peers[p.addr]; !ok || p.phase == phClosing {
			break
		}
	}
	if hold {
		s.flush(now, p, false)
	}
}

// deliver acts on one message from p; it reports whether the reply must go
// without the pending ACKs (the connect reply).
func (s *Server) deliver(now time.Time, p *peer, d *transport.Delivery) (holdAcks bool) {
	switch d.Type {
	case dissect.TypeConnect, dissect.TypeConnectAck:
		if len(d.Payload) < 6 || p.phase != 0 {
			return false
		}
		if c, err := dissect.ParseControl(&dissect.Message{Type: d.Type, Payload: d.Payload}); err == nil && c.Addr.Is4() && !c.Addr.IsUnspecified() {
			p.ip = c.Addr
		}
		p.phase, p.round = phChecksum, 0
		p.conn.Queue(dissect.TypeConnectAck, []byte{p.slot}, true, true)
		s.queueGame(p, &stock.ChecksumRounds[0])
		s.log.Info("client connected", "client", p.addr, "slot", p.slot)
		return true
	case dissect.TypePeerInfo:
		c, err := dissect.ParseControl(&dissect.Message{Type: d.Type, Payload: d.Payload})
		if err == nil && c.Name != "" {
			name := c.Name
			if len(name) > 64 {
				name = name[:64]
			}
			if name != p.name {
				p.name = name
				s.log.Debug("client name", "client", p.addr, "slot", p.slot, "name", name)
			}
		}
	case dissect.TypeDisconnect:
		// The stock disconnect is reliable and carries [slot][ipv4]; other
		// shapes are not acted on (a stray byte pattern must not end a game).
		if !d.Reliable || len(d.Payload) != 5 {
			return false
		}
		s.log.Info("client left", "client", p.addr, "slot", p.slot, "name", p.name)
		s.drop(now, p, "disconnect")
	case dissect.TypeData:
		if len(d.Payload) > 0 {
			s.gameMessage(now, p, d)
		}
	}
	return false
}

func (s *Server) gameMessage(now time.Time, p *peer, d *transport.Delivery) {
	payload := d.Payload
	op := game.Opcode(payload[0])
	switch p.phase {
	case phChecksum:
		if op == game.OpChecksumResponse && len(payload) >= 2 {
			s.checksumResponse(now, p, payload)
		}
		return
	case phLobby:
		if op == game.OpNewPlayerInGame {
			s.newPlayerInGame(now, p)
		}
		return
	case phGame:
	default:
		return
	}
	switch op {
	case game.OpChecksumResponse, game.OpNewPlayerInGame, game.OpPythonEvent2:
		// For the host only (0x0D dispatches there without relay).
		return
	case game.OpStateUpdate:
		// Kept, as the stock host keeps them: it sends its own (see
		// hostUpdates) with the motion learnt here.
		s.learnMotion(p, payload)
		return
	case game.OpCollisionEffect:
		// Kept: the stock host applies collision damage itself and tells
		// the clients through its own messages, which a server that
		// simulates no damage has none of.
		return
	case game.OpTeamChat:
		s.relay(p, payload, d.Reliable, true)
		return
	case game.OpObjCreate, game.OpObjCreateTeam:
		if r := s.dec.Decode(payload, game.ClientToServer); r.Err == nil {
			if oc, ok := r.Msg.(*game.ObjCreate); ok && oc.Class == game.ClassShip {
				s.ships[oc.Object] = &ship{owner: p, payload: append([]byte(nil), payload...),
					spec: game.ShipBySpecies(oc.Species), rr: map[*peer]int{}, cloakSent: map[*peer]bool{}}
				if oc.HasTeam {
					p.team = int(oc.Team)
				}
				s.log.Info("ship created", "slot", p.slot, "name", p.name, "object", fmt.Sprintf("0x%08X", uint32(oc.Object)), "species", oc.Species)
			}
		}
	case game.OpDestroyObject:
		if r := s.dec.Decode(payload, game.ClientToServer); r.Err == nil {
			if do, ok := r.Msg.(*game.DestroyObject); ok {
				s.shipGone(do.Object)
			}
		}
	case game.OpPythonEvent:
		if r := s.dec.Decode(payload, game.ClientToServer); r.Err == nil {
			if pe, ok := r.Msg.(*game.PythonEvent); ok && pe.Class == game.EventClassObjectExploding {
				s.shipGone(pe.Source)
			}
		}
	}
	s.relay(p, payload, d.Reliable, false)
}

// learnMotion keeps the motion in a StateUpdate that p sent about its own
// ship.
func (s *Server) learnMotion(p *peer, payload []byte) {
	r := s.dec.Decode(payload, game.ClientToServer)
	if r.Err != nil {
		return
	}
	m, ok := r.Msg.(*game.StateUpdate)
	if !ok {
		return
	}
	sh := s.ships[m.Object]
	if sh == nil || sh.owner != p {
		return
	}
	switch {
	case m.Flags&game.StatePosition != 0:
		sh.delta, sh.moving = dissect.EncodeCV4(dissect.Vec3{}), true
	case m.Flags&game.StateDelta != 0:
		sh.delta, sh.moving = m.Delta, true
	}
	if m.Flags&game.StateForward != 0 {
		sh.fwd = m.Forward
	}
	if m.Flags&game.StateUp != 0 {
		sh.up = m.Up
	}
	if m.Flags&game.StateSpeed != 0 {
		sh.speed = m.Speed
	}
	if m.Flags&game.StateCloak != 0 {
		sh.cloaked = m.Cloaked
	}
}

// hostUpdate is the host's StateUpdate about sh for to: the next batch of
// the subsystem round-robin at full health, and the owner's motion when to
// is someone else. Nil when there is nothing to say.
func (s *Server) hostUpdate(now time.Time, sh *ship, id game.ObjectID, to *peer) *game.StateUpdate {
	m := &game.StateUpdate{Object: id, GameTime: s.gameTime(now)}
	own := to == sh.owner
	if !own && sh.moving {
		m.Flags = game.StateDelta | game.StateForward | game.StateUp | game.StateSpeed
		m.Delta, m.Forward, m.Up, m.Speed = sh.delta, sh.fwd, sh.up, sh.speed
		if sh.cloakSent[to] != sh.cloaked {
			m.Flags |= game.StateCloak
			m.Cloaked = sh.cloaked
			sh.cloakSent[to] = sh.cloaked
		}
	}
	if sh.spec != nil {
		sh.rr[to] = m.FillSubsystems(sh.spec, sh.rr[to], nil, own)
	}
	if m.Flags == 0 {
		return nil
	}
	return m
}

// hostUpdates queues to's StateUpdates about every live ship, unreliable,
// in object order.
func (s *Server) hostUpdates(now time.Time, to *peer) {
	if to.phase != phGame || now.Before(to.nextUpdate) || len(s.ships) == 0 {
		return
	}
	// On a schedule, so a tick that fires a little early or late does
	// not skip a round (ticks and updates share the 100ms period).
	to.nextUpdate = to.nextUpdate.Add(s.t.HostUpdate)
	if !to.nextUpdate.After(now) {
		to.nextUpdate = now.Add(s.t.HostUpdate - s.t.Tick/2)
	}
	ids := make([]game.ObjectID, 0, len(s.ships))
	for id := range s.ships {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		if m := s.hostUpdate(now, s.ships[id], id, to); m != nil {
			to.conn.Queue(dissect.TypeData, m.Append(nil), false, false)
			to.dirty = true
			s.stats.HostUpdates++
		}
	}
}

func (s *Server) shipGone(id game.ObjectID) {
	if sh := s.ships[id]; sh != nil {
		delete(s.ships, id)
		s.log.Info("ship destroyed", "slot", sh.owner.slot, "object", fmt.Sprintf("0x%08X", uint32(id)))
	}
}

// relay forwards a client's game message unchanged to every other client
// in the game, or to its team only.
func (s *Server) relay(from *peer, payload []byte, reliable, team bool) {
	for _, q := range s.peers {
		if q == from || q.phase != phGame || (team && from.team >= 0 && q.team != from.team) {
			continue
		}
		q.conn.Queue(dissect.TypeData, payload, reliable, false)
		q.dirty = true
		s.stats.Relayed++
	}
}

func (s *Server) checksumResponse(now time.Time, p *peer, payload []byte) {
	req := stock.ChecksumRounds[p.round]
	if game.ChecksumRound(payload[1]) != req.Round {
		return // a response to another round: ignored, as stock does
	}
	if want, ok := s.o.Manifest[req.Round]; ok && !bytesEqual(want, payload) {
		fail := &game.ChecksumFail{Op: game.OpVersionMismatch, File: req.Dir + req.Filter}
		if req.Round == 0 && (len(payload) < 6 || len(want) < 6 || !bytesEqual(want[2:6], payload[2:6])) {
			fail.Op = game.OpSystemChecksumFail
		}
		s.log.Warn("checksum mismatch: booting client", "client", p.addr, "slot", p.slot, "round", req.Round, "reply", fail.Op)
		s.queueGame(p, fail)
		s.boot(now, p, stock.BootChecksum, "checksum")
		return
	}
	if p.round+1 < len(stock.ChecksumRounds) {
		p.round++
		s.queueGame(p, &stock.ChecksumRounds[p.round])
		return
	}
	for _, m := range s.match.JoinBundle(s.gameTime(now), p.index) {
		s.queueGame(p, m)
	}
	p.phase = phLobby
	s.log.Info("checksums passed", "client", p.addr, "slot", p.slot)
}

func bytesEqual(a, b []byte) bool { return string(a) == string(b) }

// newPlayerInGame answers 0x2A: MISSION_INIT, DeletePlayerUI, the score
// of every player in the game, then every live ship (late-join
// replication).
func (s *Server) newPlayerInGame(now time.Time, p *peer) {
	if s.endAt.IsZero() && s.match.TimeLimit > 0 {
		s.endAt = now.Add(time.Duration(s.match.TimeLimit) * time.Minute)
	}
	end := int32(0)
	if !s.endAt.IsZero() {
		end = int32(s.gameTime(s.endAt))
	}
	s.queueGame(p, s.match.MissionInit(end))
	s.queueGame(p, stock.PlayerJoined(p.index, p.slot))
	p.phase, p.joinedAt = phGame, now
	p.score.PlayerID = int32(p.slot)
	for _, q := range s.sortedPeers() {
		if q.phase == phGame {
			sc := q.score
			s.queueGame(p, &sc)
		}
	}
	ids := make([]game.ObjectID, 0, len(s.ships))
	for id := range s.ships {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		p.conn.Queue(dissect.TypeData, s.ships[id].payload, true, false)
	}
	s.stats.Joined++
	s.log.Info("player in game", "client", p.addr, "slot", p.slot, "name", p.name, "ships", len(ids))
}

// drop ends p's time on the server: the others are told it left, its ships
// are forgotten, and its connection lingers (Timing.Linger) to ACK and
// deliver what is queued, unless the caller deletes it at once.
func (s *Server) drop(now time.Time, p *peer, reason string) {
	if p.phase == phClosing {
		return
	}
	wasInGame := p.phase == phGame
	p.phase = phClosing
	p.closeAt = now.Add(s.t.Linger)
	for id, sh := range s.ships {
		if sh.owner == p {
			delete(s.ships, id)
		}
	}
	if wasInGame {
		for _, q := range s.peers {
			if q != p && q.phase == phGame {
				s.queueGame(q, stock.PlayerRemoved(p.index, p.slot))
				s.queueGame(q, &game.DeletePlayerAnim{Name: p.name})
			}
		}
	}
	s.log.Debug("peer closing", "client", p.addr, "slot", p.slot, "reason", reason)
}

// boot sends p a boot notice (type 0x04 with the reason byte) and drops it.
func (s *Server) boot(now time.Time, p *peer, reason byte, why string) {
	p.conn.Queue(dissect.TypeBoot, []byte{reason}, true, true)
	p.dirty = true
	s.drop(now, p, "boot: "+why)
}

// Tick runs the periodic work due at now: retransmissions, keepalives,
// timeouts, the time limit. Call it every Timing.Tick.
func (s *Server) Tick(now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rel(now)
	for _, p := range s.sortedPeers() {
		if p.phase == phClosing {
			p.conn.Retransmit(s.rel(now))
			if now.After(p.closeAt) || (p.conn.Unacked() == 0 && !p.conn.Pending() && !p.dirty && now.Sub(p.lastHeard) > s.t.Tick*5) {
				delete(s.peers, p.addr)
				continue
			}
		} else if now.Sub(p.lastHeard) > s.t.Timeout || (p.phase == phChecksum && now.Sub(p.lastHeard) > s.t.HandshakeTimeout) {
			s.log.Info("client timed out", "client", p.addr, "slot", p.slot, "name", p.name, "silent", now.Sub(p.lastHeard).Round(time.Millisecond))
			s.drop(now, p, "timeout")
			delete(s.peers, p.addr)
			continue
		} else if p.conn.Retransmit(s.rel(now)) {
			s.log.Info("client stopped acknowledging", "client", p.addr, "slot", p.slot, "name", p.name)
			s.drop(now, p, "retries")
			delete(s.peers, p.addr)
			continue
		} else {
			// The keepalive echoes the client's identity, so the first one
			// waits for the client's own (or two intervals, whichever is
			// first): a stock server's keepalive always names the player.
			if p.phase >= phChecksum && !now.Before(p.nextKeepalive) &&
				(p.name != "" || now.Sub(p.connectedAt) >= 2*s.t.Keepalive) {
				p.nextKeepalive = now.Add(s.t.Keepalive)
				c := stock.Identity(p.slot, p.ip, p.name)
				p.conn.Queue(dissect.TypePeerInfo, dissect.AppendControl(nil, &c), true, true)
			}
			for _, d := range p.order.Flush(now, nil) {
				s.deliver(now, p, &d)
			}
			s.hostUpdates(now, p)
		}
		if p.conn.Pending() {
			p.dirty = true
		}
	}
	if !s.endAt.IsZero() && !s.ended && !now.Before(s.endAt) {
		s.endGame(game.EndTimeUp)
	}
	s.flushDirty(now)
	s.lim.prune(now)
}

func (s *Server) broadcast(m game.Message) int {
	n := 0
	for _, q := range s.peers {
		if q.phase == phGame {
			s.queueGame(q, m)
			n++
		}
	}
	return n
}

func (s *Server) endGame(reason game.EndReason) int {
	s.ended = true
	n := s.broadcast(&game.EndGame{Reason: reason})
	s.log.Info("game ended", "reason", reason, "players", n)
	return n
}

// gamespy answers a plaintext query, at most once a second per source.
func (s *Server) gamespy(now time.Time, from netip.AddrPort, b []byte) {
	q, err := dissect.ParseGameSpy(b)
	if err != nil || !q.Query || !s.lim.allow(now, from) {
		s.stats.Dropped++
		return
	}
	s.stats.GameSpy++
	id := q.QueryID
	if id == "" {
		id = "1.1"
	}
	s.sendWire(now, from, stock.GameSpyReply(q.Kind, s.serverInfo(), id))
	s.log.Debug("gamespy", "client", from, "query", q.Kind)
}

// serverInfo is what GameSpy replies say about this server: its match, its
// name, the players connected, and the game mode, which is "openplaying"
// while someone is in the game and the match has not ended, "settings"
// otherwise.
func (s *Server) serverInfo() stock.ServerInfo {
	in := s.match.ServerInfo()
	in.Hostname, in.Password = s.o.Config.Name, s.o.Config.Password != ""
	in.GameMode = stock.GameModeSettings
	for _, p := range s.sortedPeers() {
		if p.phase != phClosing {
			in.NumPlayers++
			if p.name != "" {
				in.Players = append(in.Players, p.name)
			}
		}
		if p.phase == phGame && !s.ended {
			in.GameMode = stock.GameModePlaying
		}
	}
	return in
}

// limiter allows at most one reply a second per source and perSecond in
// all; it remembers at most maxSources sources.
type limiter struct {
	perSecond int
	last      map[netip.AddrPort]time.Time
	window    time.Time
	count     int
}

const maxSources = 4096

func (l *limiter) allow(now time.Time, from netip.AddrPort) bool {
	if now.Sub(l.window) >= time.Second {
		l.window, l.count = now, 0
	}
	if l.count >= l.perSecond {
		return false
	}
	if t, ok := l.last[from]; ok && now.Sub(t) < time.Second {
		return false
	}
	if len(l.last) >= maxSources {
		l.prune(now)
		if len(l.last) >= maxSources {
			return false
		}
	}
	l.last[from] = now
	l.count++
	return true
}

func (l *limiter) prune(now time.Time) {
	for k, t := range l.last {
		if now.Sub(t) >= time.Second {
			delete(l.last, k)
		}
	}
}

func disconnectPayload(p *peer) []byte {
	ip := p.ip
	if !ip.Is4() {
		ip = netip.IPv4Unspecified()
	}
	return stock.Disconnect(p.slot, ip)
}
