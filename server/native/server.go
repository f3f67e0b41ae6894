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
// teams for team chat, scores for the join roster. Like the stock host
// (stock.HostRoute) it keeps the clients' StateUpdates (0x1C),
// CollisionEffects (0x15), PythonEvent2 (0x0D) and HostMsg (0x13) rather
// than relaying them, answers ObjNotFound and RequestObject itself,
// announces the damage that clients' weapons and
// collisions do with PythonEvent (0x06) repair-list events
// (stock.HostDamage), and sends its own StateUpdates about every live ship
// to every client in the game, ten a second (Timing.HostUpdate): the
// subsystem round-robin (flag 0x20) at full health, since it keeps no
// health, and, about ships the receiver does not own, the motion the
// owner last reported (delta, forward, up, speed, cloak changes). It never
// sends the client-only weapon flag 0x80.
//
// Around that: admission control and per-peer bounds against floods and
// stalling clients (admission.go), GameSpy master heartbeats (master.go),
// the operator's console (console.go), the reasons datagrams are dropped
// (drops.go), and, on request, OpenBC's legacy-framed test clients
// (legacy.go).
//
// The core (HandleDatagram, Tick, Exec) does no I/O and reads no clock:
// callers pass the time and receive datagrams through a send function, so
// tests drive it on simulated time. Serve runs it on a net.PacketConn.
package native

import (
	"log/slog"
	"math"
	"net/netip"
	"sort"
	"sync"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
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
	// Heartbeat is the interval of the master-server heartbeats
	// (stock.HeartbeatInterval, 60s).
	Heartbeat time.Duration
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
	def(&t.Heartbeat, stock.HeartbeatInterval)
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
	// Masters are the GameSpy master servers to register with (none by
	// default): each gets a heartbeat at the first Tick, every
	// Timing.Heartbeat, when the game state changes and on Shutdown, and
	// its \secure\ challenge is answered. Queries from a master are
	// limited to mastersRepliesPerSecond each rather than one a second.
	Masters []netip.AddrPort
	// AcceptLegacyFraming accepts clients that frame their connect with the
	// legacy [type][len:u8][flags:u8] header and leave with transport type
	// 0x06, as OpenBC's test clients do (see legacy.go). Stock clients
	// never do; off, those datagrams are dropped (DropLegacyFraming).
	AcceptLegacyFraming bool
	// Limits bound half-open connections and what one peer can make the
	// server hold (admission.go).
	Limits Limits
}

// Stats count what the server has done.
type Stats struct {
	DatagramsIn, DatagramsOut int
	GameSpy                   int   // queries answered
	Dropped                   int   // datagrams ignored: garbage, unknown sources, rate limited
	Drops                     Drops // Dropped by reason
	Joined                    int   // clients that reached the game
	Boots                     int   // clients booted (server full, console kick, checksum)
	ChecksumFailures          int   // clients whose checksum response did not match the manifest
	Relayed                   int   // copies of client game messages forwarded
	ObjectsSent               int   // ObjNotFound/RequestObject answered with an ObjCreate(Team)
	HostUpdates               int   // the host's own StateUpdates sent
	Refused                   int   // connects refused (server full)
	Retransmits               int
	Evicted                   int // half-open connections dropped for a new connect
	FragEvicted, FragRefused  int // unfinished fragment sets evicted, fragments refused for room
	FragBytes                 int // fragment memory held now, over all peers
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
	// objects are the other objects clients created (an ObjCreate(Team)
	// whose class is no ship, or whose body does not decode), kept by id
	// to answer object requests; at most maxObjects.
	objects map[game.ObjectID]*object
	lim     limiter
	dg      dissect.Datagram
	plain   []byte
	dec     *game.Decoder
	endAt   time.Time
	ended   bool
	stats   Stats
	// damages is the host's repair-list policy (damage.go); timers the
	// later work it schedules.
	damages *stock.HostDamage
	timers  []timer

	dropLog dropLog
	// master is the master-server registration (Options.Masters).
	master masterState

	lims       Limits
	fragBudget transport.FragmentBudget
	// youngEvictions rate-limits connects taking the place of a silent
	// connection younger than Limits.EvictAfter (admission.go).
	youngEvictions tokenBucket
	// stallEvictions allows each source address to displace an answering
	// half-open connection once every stallEvictInterval (admission.go).
	stallEvictions limiter
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
		peers: map[netip.AddrPort]*peer{}, ships: map[game.ObjectID]*ship{}, objects: map[game.ObjectID]*object{}, dec: game.NewDecoder(),
		damages: newDamages(), send: func(netip.AddrPort, []byte) {}}
	s.lim = limiter{perSecond: o.RepliesPerSecond, interval: time.Second, last: map[netip.AddrPort]time.Time{}}
	s.master = newMasterState(o.Masters)
	s.lims = o.Limits.withDefaults(o.MaxPeers)
	s.fragBudget.MaxBytes = s.lims.FragBytesTotal
	s.youngEvictions.perSecond = o.RepliesPerSecond
	s.stallEvictions = limiter{perSecond: math.MaxInt, interval: stallEvictInterval, last: map[netip.AddrPort]time.Time{}}
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
	s.fragTotals(&st)
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
				s.forget(p)
				continue
			}
		} else if now.Sub(p.lastHeard) > s.t.Timeout || (p.phase == phChecksum && now.Sub(p.lastHeard) > s.t.HandshakeTimeout) || s.handshakeOverdue(now, p) {
			s.log.Info("client timed out", "client", p.addr, "slot", p.slot, "name", p.name, "silent", now.Sub(p.lastHeard).Round(time.Millisecond))
			s.drop(now, p, "timeout")
			s.forget(p)
			continue
		} else if p.conn.Retransmit(s.rel(now)) {
			s.log.Info("client stopped acknowledging", "client", p.addr, "slot", p.slot, "name", p.name)
			s.drop(now, p, "retries")
			s.forget(p)
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
	s.runTimers(now)
	if !s.endAt.IsZero() && !s.ended && !now.Before(s.endAt) {
		s.endGame(game.EndTimeUp)
	}
	s.flushDirty(now)
	s.lim.prune(now)
	s.stallEvictions.prune(now)
	s.heartbeats(now)
}
