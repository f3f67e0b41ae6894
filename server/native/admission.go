package native

import (
	"net/netip"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/server/native/internal/inorder"
	"github.com/bcwire/bcwire/server/stock"
	"github.com/bcwire/bcwire/server/transport"
)

// Admission control and per-peer bounds.
//
// The protocol has no connect cookie: one datagram from any source address,
// spoofed or not, makes the server answer and hold a slot. A slot is a
// player's only once it has finished the checksum rounds, which a stock
// client does in about a second (five round trips and the hashing of its
// scripts; this server never sends files, so no transfer lengthens them).
// Until then the connection is half-open; one that has not acknowledged
// anything yet is also silent (a spoofed source never can acknowledge).
// Half-open connections are bounded:
//
//   - at most Limits.HalfOpenPerIP from one source address (MaxPeers/4, at
//     least 1: it takes four addresses to hold every slot of a server), and
//     Limits.HalfOpen in all; silent ones hold at most MaxPeers-1 slots,
//     so one is always left for a peer that answers;
//   - at the per-address bound, a new connect from that address takes the
//     place of its oldest silent connection that has been silent at least
//     Limits.EvictAfter (250ms, longer than a real client's round trip),
//     or, at most RepliesPerSecond times a second, of the oldest one silent
//     at least minSilence (50ms, longer than a client on the same LAN takes
//     to answer, so that friends joining at once from one address do not
//     displace each other); otherwise it is dropped;
//   - when the server is full, a new connect takes the place of the
//     answering half-open connection that has waited longest: first those
//     that have answered no checksum request at all, then the others, each
//     by the time of its last step (its connect, or its last checksum
//     answer); a player, who has finished the rounds, never. A client going
//     through the rounds at a real client's pace leaves the first group
//     within a round trip of its connect and answers each round within
//     another, so it is not the one displaced while others stall. The
//     connection displaced hears a "server full" boot (it acknowledged, so
//     its address is real). When no answering connection can give way (or
//     the new connect would make MaxPeers silent ones), a silent one does,
//     by the rules of the per-address bound;
//   - while answering half-open connections are there, each source address
//     displaces at most one connection a second (stallEvictInterval; a
//     real client sends its connect again only after 1s), so a few
//     addresses cannot churn through the slots;
//   - a connect that finds no place is dropped without a reply while
//     half-open connections exist (a real client sends it again after 1s),
//     and refused (server full) when every slot is a player's;
//   - a silent connection is dropped after Limits.SilentTimeout (3s), long
//     before HandshakeTimeout; one that answers but has not finished the
//     checksum rounds Limits.HandshakeLimit (10s) after its connect is
//     dropped too, however much it sends (Timing.HandshakeTimeout counts
//     only silence).
//
// So a flood of connects, whatever its rate, draws at most (MaxPeers-1)
// replies every EvictAfter plus RepliesPerSecond: 78 a second on an
// 8-player server; connects that displace an answering connection add one
// reply each, and each needs an answering connection to displace, which
// only a real address can make (and one a second per source address). A
// stock client ACKs the connect reply at once, so it leaves the silent set
// within one round trip and is not displaced by a flood that starts after
// it.
//
// What one connected peer can make the server hold is bounded too: its
// unfinished fragments (Limits.FragSets, Limits.FragBytes, and
// Limits.FragBytesTotal over all peers), the messages held for a gap in
// its reliable sequence (inorder's count and byte caps), what waits for
// its ACKs (transport's MaxUnacked caps), and the ships kept for late
// joiners (Limits.ShipsPerPeer, each at most maxShipPayload bytes).

// Limits bound what peers can make the server hold. Zero fields take the
// defaults.
type Limits struct {
	HalfOpen      int           // half-open connections in all (default MaxPeers)
	HalfOpenPerIP int           // half-open connections from one address (default MaxPeers/4, at least 1)
	SilentTimeout time.Duration // a half-open connection that ACKs nothing (3s)
	EvictAfter    time.Duration // silence before a connect may take its place (250ms)
	// HandshakeLimit is how long after its connect a connection may stay
	// half-open (10s). Stock clients finish the checksum rounds in about a
	// second; 10s leaves room for five round trips of a slow path, hashing
	// on a slow disk and a lost datagram resent after 1s and again after
	// 2s more. It is no player's time: the rounds come before the game.
	HandshakeLimit time.Duration

	FragSets       int // unfinished fragmented messages per peer (16)
	FragBytes      int // their bytes per peer (256 KiB)
	FragBytesTotal int // their bytes over all peers (4 MiB)
	HeldBytes      int // messages held for a sequence gap, per peer (256 KiB)
	ShipsPerPeer   int // ships kept for late joiners, per peer (8)
}

// minSilence is how long a connection must have been silent before a new
// connect may take its place under the rate limit (see Limits.EvictAfter).
const minSilence = 50 * time.Millisecond

// maxShipPayload is the largest ship creation kept for late joiners; a
// stock one is a few hundred bytes. A larger one is relayed, not kept.
const maxShipPayload = 16 << 10

func (l Limits) withDefaults(maxPeers int) Limits {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&l.HalfOpen, maxPeers)
	def(&l.HalfOpenPerIP, max(1, maxPeers/4))
	def(&l.FragSets, transport.DefaultMaxFragSets)
	def(&l.FragBytes, transport.DefaultMaxFragBytes)
	def(&l.FragBytesTotal, 4<<20)
	def(&l.HeldBytes, 256<<10)
	def(&l.ShipsPerPeer, 8)
	if l.SilentTimeout <= 0 {
		l.SilentTimeout = 3 * time.Second
	}
	if l.EvictAfter <= 0 {
		l.EvictAfter = 250 * time.Millisecond
	}
	if l.HandshakeLimit <= 0 {
		l.HandshakeLimit = 10 * time.Second
	}
	return l
}

// halfOpen reports whether p has not finished the checksum rounds.
func halfOpen(p *peer) bool { return p.phase < phLobby }

// silent reports whether p is half-open and has acknowledged nothing.
func silent(p *peer) bool { return halfOpen(p) && p.conn.AcksHeard() == 0 }

// admit makes a peer for a new client, or refuses it when the server is full.
func (s *Server) admit(now time.Time, from netip.AddrPort, plain []byte) *peer {
	room, refuse := s.makeRoom(now, from)
	if !room && !refuse {
		return nil
	}
	slot := s.freeSlot()
	if !room || len(s.peers) >= s.o.MaxPeers || slot == 0 {
		s.stats.Refused++
		if s.lim.allow(now, from) {
			s.log.Info("connect refused: server full", "client", from, "players", len(s.peers))
			// One small reliable boot, numbered as the first control
			// message of a connection that never opens.
			d := dissect.Datagram{Peer: stock.ServerPeer, Messages: []dissect.Message{
				{Type: dissect.TypeBoot, Reliable: true, Ordered: true, Payload: []byte{stock.BootFull}}}}
			s.sendPlain(now, from, d.Append(nil))
		} else {
			s.dropDatagram(now, from, DropRateLimited)
		}
		return nil
	}
	p := &peer{addr: from, slot: slot, index: int(slot) - stock.FirstClientPeer, team: -1, lastHeard: now,
		nextKeepalive: now, connectedAt: now, waitingSince: now}
	p.conn, p.order = s.newPeerConn()
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

// makeRoom applies the half-open bounds before a connect from from is
// admitted, evicting a half-open connection when a bound is reached. It
// reports whether the connect may be admitted; refuse tells a refusal the
// client should hear of (server full) from a connect dropped without a
// word (a real client sends it again).
func (s *Server) makeRoom(now time.Time, from netip.AddrPort) (ok, refuse bool) {
	ip := from.Addr().Unmap()
	sameIP := func(p *peer) bool { return p.addr.Addr().Unmap() == ip }
	evicted := false
	old := func(match func(*peer) bool) func(*peer) bool {
		return func(p *peer) bool { return match(p) && now.Sub(p.connectedAt) >= s.lims.EvictAfter }
	}
	young := func(match func(*peer) bool) bool {
		m := func(p *peer) bool { return match(p) && now.Sub(p.connectedAt) >= minSilence }
		return s.countPeers(m) > 0 && s.youngEvictions.take(now) && s.evictOldest(now, m)
	}
	sameIPSilent := func(p *peer) bool { return silent(p) && sameIP(p) }
	if s.countPeers(func(p *peer) bool { return halfOpen(p) && sameIP(p) }) >= s.lims.HalfOpenPerIP {
		if evicted = s.evictOldest(now, old(sameIPSilent)) || young(sameIPSilent); !evicted {
			s.dropDatagram(now, from, DropHalfOpen, "bound", "per address")
			return false, false
		}
	}
	maxSilent := max(1, s.o.MaxPeers-1) // one slot is left for a peer that answers
	room := func() bool { return len(s.peers) < s.o.MaxPeers && s.countPeers(halfOpen) < s.lims.HalfOpen }
	if evicted || (room() && s.countPeers(silent) < maxSilent) {
		return room(), evicted
	}
	// No room. The answering connection that has waited longest for its
	// next step gives its place up, as long as the new connect (silent
	// until it answers) stays within the silent bound; else a silent one,
	// silent long (EvictAfter) or, at the young-eviction rate, a little
	// (minSilence). While answering connections are there (stalling
	// clients), every eviction counts against the connect's address (one
	// a second), so that a few stalling hosts churn through no more than a
	// few places a second, whichever kind.
	answering := s.countPeers(func(p *peer) bool { return halfOpen(p) && !silent(p) }) > 0
	budget := func(match func(*peer) bool) bool {
		return s.countPeers(match) > 0 && (!answering || s.stallEvictions.allow(now, netip.AddrPortFrom(ip, 0)))
	}
	if (s.countPeers(silent) < maxSilent && s.evictStalled(now, from)) ||
		(budget(old(silent)) && s.evictOldest(now, old(silent))) ||
		(budget(func(p *peer) bool { return silent(p) && now.Sub(p.connectedAt) >= minSilence }) && young(silent)) {
		return room(), true
	}
	if s.countPeers(halfOpen) > 0 {
		// A place may come free: the client's resent connect (after 1s)
		// finds its address allowed to displace a stalled one again.
		s.dropDatagram(now, from, DropHalfOpen, "bound", "in all")
		return false, false
	}
	return false, true // full of players (and of those leaving)
}

// stallEvictInterval is how often one source address may displace an
// answering half-open connection (makeRoom).
const stallEvictInterval = time.Second

// evictStalled forgets the answering half-open connection that has waited
// longest (those that have answered no checksum request first, then by
// their last step), telling it the server is full, and reports whether
// there was one. A source address does this at most once every
// stallEvictInterval.
func (s *Server) evictStalled(now time.Time, from netip.AddrPort) bool {
	var oldest *peer
	before := func(p, q *peer) bool {
		if (p.round == 0) != (q.round == 0) {
			return p.round == 0
		}
		if !p.waitingSince.Equal(q.waitingSince) {
			return p.waitingSince.Before(q.waitingSince)
		}
		return p.slot < q.slot
	}
	for _, p := range s.peers {
		if halfOpen(p) && !silent(p) && (oldest == nil || before(p, oldest)) {
			oldest = p
		}
	}
	if oldest == nil || !s.stallEvictions.allow(now, netip.AddrPortFrom(from.Addr().Unmap(), 0)) {
		return false
	}
	s.stats.Evicted++
	s.log.Info("stalled handshake evicted for a new connect", "client", oldest.addr, "slot", oldest.slot,
		"round", oldest.round, "waiting", now.Sub(oldest.waitingSince).Round(time.Millisecond), "by", from)
	oldest.conn.Queue(dissect.TypeBoot, []byte{stock.BootFull}, true, true)
	s.flush(now, oldest, true)
	s.drop(now, oldest, "evicted")
	s.forget(oldest)
	return true
}

// tokenBucket allows perSecond events a second, in bursts of up to
// perSecond.
type tokenBucket struct {
	perSecond int
	tokens    float64
	at        time.Time
}

func (b *tokenBucket) take(now time.Time) bool {
	if b.at.IsZero() {
		b.tokens = float64(b.perSecond)
	} else if d := now.Sub(b.at); d > 0 {
		b.tokens = min(float64(b.perSecond), b.tokens+d.Seconds()*float64(b.perSecond))
	}
	b.at = now
	if b.tokens < 1 {
		return false
	}
	b.tokens--
	return true
}

func (s *Server) countPeers(match func(*peer) bool) int {
	n := 0
	for _, p := range s.peers {
		if match(p) {
			n++
		}
	}
	return n
}

// evictOldest forgets the longest-connected peer that match accepts and
// reports whether there was one.
func (s *Server) evictOldest(now time.Time, match func(*peer) bool) bool {
	var oldest *peer
	for _, p := range s.peers {
		if match(p) && (oldest == nil || p.connectedAt.Before(oldest.connectedAt) ||
			(p.connectedAt.Equal(oldest.connectedAt) && p.slot < oldest.slot)) {
			oldest = p
		}
	}
	if oldest == nil {
		return false
	}
	s.stats.Evicted++
	s.log.Debug("half-open connection evicted for a new connect", "client", oldest.addr, "slot", oldest.slot)
	s.drop(now, oldest, "evicted")
	s.forget(oldest)
	return true
}

// handshakeOverdue reports whether p is a half-open connection that has
// acknowledged nothing for Limits.SilentTimeout, or has not finished the
// checksum rounds within Limits.HandshakeLimit.
func (s *Server) handshakeOverdue(now time.Time, p *peer) bool {
	if !halfOpen(p) {
		return false
	}
	age := now.Sub(p.connectedAt)
	return age > s.lims.HandshakeLimit || (p.conn.AcksHeard() == 0 && age > s.lims.SilentTimeout)
}

// newPeerConn is the transport end of a new peer, under the per-peer and
// total caps.
func (s *Server) newPeerConn() (*transport.Conn, inorder.Buffer) {
	c := transport.NewConn(stock.ServerPeer, transport.Options{RetransmitAfter: s.t.RetransmitAfter, MaxRetries: s.t.MaxRetries,
		MaxFragSets: s.lims.FragSets, MaxFragBytes: s.lims.FragBytes, Budget: &s.fragBudget})
	return c, inorder.Buffer{MaxWait: s.t.OrderWait, MaxHeldBytes: s.lims.HeldBytes}
}

// forget removes p at once, giving its fragment memory back.
func (s *Server) forget(p *peer) {
	st := p.conn.FragStats()
	s.stats.FragEvicted += st.Evicted
	s.stats.FragRefused += st.Refused
	p.conn.Close()
	delete(s.peers, p.addr)
}

// keepShip reports whether p's ship creation may be kept for late joiners:
// not too large, and p keeps fewer than Limits.ShipsPerPeer.
func (s *Server) keepShip(p *peer, payload []byte) bool {
	if len(payload) > maxShipPayload {
		return false
	}
	n := 0
	for _, sh := range s.ships {
		if sh.owner == p {
			n++
		}
	}
	return n < s.lims.ShipsPerPeer
}

// fragTotals adds the fragment counters of the live peers to st.
func (s *Server) fragTotals(st *Stats) {
	for _, p := range s.peers {
		f := p.conn.FragStats()
		st.FragEvicted += f.Evicted
		st.FragRefused += f.Refused
	}
	st.FragBytes = s.fragBudget.Used()
}
