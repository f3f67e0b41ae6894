package native

import (
	"net/netip"
	"time"

	"github.com/bcwire/bcwire/dissect"
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
		s.connected(p, d)
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
		switch {
		case len(d.Payload) == 0:
		case p.phase == phGame:
			s.gameMessage(now, p, d) // relay.go
		default:
			s.joinMessage(now, p, d.Payload) // join.go
		}
	}
	return false
}
