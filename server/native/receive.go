package native

import (
	"net/netip"
	"sort"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/server/stock"
	"github.com/bcwire/bcwire/server/transport"
)

// HandleDatagram processes one datagram that arrived from from at now.
// Nothing it receives makes it panic.
func (s *Server) HandleDatagram(now time.Time, from netip.AddrPort, b []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.DatagramsIn++
	s.tap(now, from, s.local, b)
	s.rel(now)
	if len(b) == 0 {
		s.dropDatagram(now, from, DropEmpty)
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
	if p == nil || (p.phase >= phLobby && p.phase != phClosing && plain[0] == stock.ConnectingPeer &&
		(s.isConnect(plain) || (s.o.AcceptLegacyFraming && s.isLegacyConnect(plain)))) {
		legacy := false
		if !s.isConnect(plain) {
			switch {
			case !s.isLegacyConnect(plain):
				s.dropDatagram(now, from, DropNotConnect)
				return
			case !s.o.AcceptLegacyFraming:
				s.dropDatagram(now, from, DropLegacyFraming)
				return
			}
			legacy = true
		}
		if p != nil {
			// The same address connects again: the client restarted.
			s.drop(now, p, "reconnected")
			s.forget(p)
		}
		if p = s.admit(now, from, plain); p == nil {
			return
		}
		if legacy {
			p.legacy = true
			s.log.Warn("client connects with the legacy [type][len][flags] framing, which stock clients never use: accepted (--accept-legacy-framing)", "client", from, "slot", p.slot)
		}
	}
	if plain[0] != stock.ConnectingPeer && (plain[0] < stock.FirstClientPeer || plain[0] >= stock.FirstClientPeer+stock.MaxPlayers) {
		// No client's peer id: garbage. (A client's own id is not insisted
		// on: a replaying tool may keep the ids of the capture it replays.)
		s.dropDatagram(now, from, DropBadPeer)
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

// receive hands one datagram to p's connection and acts on what it
// delivers.
func (s *Server) receive(now time.Time, p *peer, plain []byte) {
	if p.legacy && isLegacyDisconnect(plain) && p.phase != phClosing {
		s.log.Info("client left (legacy transport type 0x06)", "client", p.addr, "slot", p.slot, "name", p.name)
		s.drop(now, p, "disconnect")
		delete(s.peers, p.addr) // nothing to ACK: the message is not reliable
		return
	}
	ds, err := p.conn.Receive(plain, s.rel(now))
	switch {
	case err != nil && len(ds) == 0:
		// Nothing in it could be used: dropped.
		s.dropDatagram(now, p.addr, DropDamaged, "err", err)
	case err != nil:
		s.debugLimited(now, "damaged datagram, its first messages used", "source", p.addr, "err", err)
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
		if (len(d.Payload) < 6 && !p.legacy) || p.phase != 0 {
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
		s.stats.ChecksumFailures++
		// The message is the cause, so that an operator reading the log
		// sees which hash differed and what was sent.
		s.log.Warn("checksum boot: "+checksumCause(want, payload, fail.Op), "client", p.addr, "slot", p.slot,
			"round", req.Round, "reply", fail.Op)
		s.queueGame(p, fail)
		s.boot(now, p, stock.BootChecksum, "checksum")
		return
	}
	p.waitingSince = now
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
