package synth

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/server/stock"
	"github.com/bcwire/bcwire/server/transport"
)

// The stock server's side of the simulation: it answers each client's
// connect, runs the five checksum rounds one at a time, sends 0x28 + Settings
// + GameInit in one datagram, answers NewPlayerInGame, relays clients' game
// messages to the other clients unchanged, and keeps every client alive.

const tick = 100 * time.Millisecond

// checksumRounds are the stock rounds: index, directory, filter, recursive.
var checksumRounds = stock.ChecksumRounds

type server struct {
	s *sim
}

func newServer(s *sim) *server { return &server{s: s} }

func (sv *server) retransmits() int {
	n := 0
	for _, p := range sv.s.players {
		n += p.srv.Retransmits
	}
	return n
}

// queueGame queues a game message to p on the server's end.
func (sv *server) queueGame(p *player, m game.Message, reliable bool) {
	sv.queueData(p, m.Append(nil), reliable)
}

// queueData queues a game message payload to p, unless a quirk drops it.
func (sv *server) queueData(p *player, payload []byte, reliable bool) {
	if sv.s.drops(payload) {
		return
	}
	p.srv.Queue(dissect.TypeData, payload, reliable, false)
}

func (sv *server) flush(p *player) { sv.s.sendServer(p, p.srv.Flush(sv.s.now)) }

// receive handles a datagram from p that reached the server. After p has
// gone the server still ACKs (a client resends its disconnect until it
// sees the ACK) but does nothing else.
func (sv *server) receive(p *player, plain []byte) {
	if p.gone {
		p.srv.Receive(plain, sv.s.now)
		sv.flush(p)
		return
	}
	ds, err := p.srv.Receive(plain, sv.s.now)
	if err != nil {
		sv.s.err = fmt.Errorf("server: %v", err)
		return
	}
	holdAcks := false
	for _, d := range ds {
		switch d.Type {
		case dissect.TypeConnectAck, dissect.TypeConnect:
			if len(d.Payload) >= 6 && !p.connected {
				p.connected = true
				p.srv.Queue(dissect.TypeConnectAck, []byte{p.slot}, true, true)
				if sv.s.cfg.Quirks.NoBundling {
					sv.s.sendServer(p, p.srv.FlushMessages(sv.s.now))
				}
				sv.queueGame(p, sv.s.checksumRequest(0), true)
				holdAcks = true // stock sends the connect reply without the connect's ACK
			}
		case dissect.TypeDisconnect:
			sv.disconnect(p)
		case dissect.TypeData:
			sv.gameMessage(p, d.Payload)
		}
	}
	if holdAcks {
		sv.s.sendServer(p, p.srv.FlushMessages(sv.s.now))
		return
	}
	sv.flush(p)
}

func (sv *server) gameMessage(p *player, payload []byte) {
	op := game.Opcode(payload[0])
	switch op {
	case game.OpChecksumResponse:
		round := payload[1]
		for i, r := range checksumRounds {
			if byte(r.Round) != round {
				continue
			}
			if i+1 < len(checksumRounds) {
				sv.queueGame(p, sv.s.checksumRequest(i+1), true)
				return
			}
			// All five rounds passed: 0x28, Settings and GameInit travel in
			// one datagram.
			sv.queueGame(p, &game.ChecksumComplete{}, true)
			sv.unbundle(p)
			sv.queueGame(p, stock.DefaultMatch.Settings(sv.s.gameTime(), p.index), true)
			sv.unbundle(p)
			sv.queueGame(p, &game.GameInit{}, true)
			p.lobby = true
		}
	case game.OpNewPlayerInGame:
		sv.s.game.newPlayerInGame(p)
	default:
		sv.s.game.fromClient(p, payload)
	}
}

// unbundle ends the datagram being built for p when the NoBundling quirk
// is on.
func (sv *server) unbundle(p *player) {
	if sv.s.cfg.Quirks.NoBundling {
		sv.flush(p)
	}
}

// relay forwards a client's game message unchanged to every other client in
// the game (or to its team only), as the stock server does.
func (sv *server) relay(from *player, payload []byte, reliable bool, team bool) {
	if sv.s.cfg.Quirks.NoRelay {
		return
	}
	for _, q := range sv.s.players {
		if q == from || !q.inGame() || (team && q.team != from.team) {
			continue
		}
		if sv.s.drops(payload) {
			continue
		}
		q.srv.Queue(dissect.TypeData, payload, reliable, false)
		sv.flush(q)
	}
}

func (sv *server) disconnect(p *player) {
	if p.gone {
		return
	}
	sv.flush(p) // the ACK of the disconnect
	p.gone = true
	sv.s.game.playerLeft(p)
}

// tickPlayer runs the server's periodic work for p: retransmissions and
// pending ACKs every tick, a keepalive about once a second.
func (sv *server) tickPlayer(p *player) {
	if p.gone {
		return
	}
	if p.srv.Retransmit(sv.s.now) {
		p.gone = true // the client stopped answering
		sv.s.game.playerLeft(p)
		return
	}
	if p.connected && sv.s.now >= p.nextServerKeepalive {
		p.nextServerKeepalive = sv.s.now + sv.s.jitter(time.Second)
		c := p.identity()
		p.srv.Queue(dissect.TypePeerInfo, dissect.AppendControl(nil, &c), true, true)
	}
	sv.s.game.hostTick(p)
	if p.srv.Pending() {
		sv.flush(p)
	}
	sv.s.at(tick, func() { sv.tickPlayer(p) })
}

// player is one simulated stock client.
type player struct {
	s     *sim
	index int // join order, 0-based; the player slot in Settings
	slot  byte
	addr  netip.AddrPort
	name  string
	team  uint8

	upLink, downLink link // client to server, server to client

	conn *transport.Conn // the client's end
	srv  *transport.Conn // the server's end of this client's connection

	connected, lobby, joined, gone bool
	leaving                        bool // the client sent its disconnect
	stopped                        bool // the client end has finished
	leaveAt                        time.Duration
	nextKeepalive                  time.Duration
	nextServerKeepalive            time.Duration
	hostTicks                      int // in-game server ticks (StateUpdateDivisor)

	ship *ship
}

func (p *player) inGame() bool { return p.joined && !p.gone }

// identity is the peer-info payload both ends exchange as keepalive: the
// client's slot, address and name.
func (p *player) identity() dissect.Control {
	return stock.Identity(p.slot, p.addr.Addr(), p.name)
}

var playerNames = []string{"Cady2", "Picard", "Worf", "Kira", "Sisko", "Data", "Riker", "Troi",
	"Garak", "Martok", "Tomalak", "Dukat", "Sela", "Gowron", "Ezri", "Odo"}

func (s *sim) schedulePlayers() {
	for i := 0; i < s.cfg.Players; i++ {
		srvAddr := s.cfg.Server.Addr().As4()
		ip := netip.AddrFrom4([4]byte{srvAddr[0], srvAddr[1], 1, byte(10 + i)})
		p := &player{s: s, index: i, slot: byte(2 + i), addr: netip.AddrPortFrom(ip, uint16(50000+i*7)),
			name: playerNames[i], team: uint8(i % 2)}
		p.conn = transport.NewConn(0xFF, transport.Options{})
		p.srv = transport.NewConn(0x01, transport.Options{})
		s.players = append(s.players, p)
		// Staggered joins within the first quarter of the capture; every
		// player but the first leaves a little before the end, the first
		// stays to the end.
		join := time.Duration(i)*s.cfg.Duration/4/time.Duration(s.cfg.Players) + s.jitter(500*time.Millisecond)
		p.leaveAt = s.cfg.Duration + time.Second
		if i > 0 || s.cfg.Players == 1 {
			p.leaveAt = s.cfg.Duration - time.Duration(s.cfg.Players-i)*s.cfg.Duration/40 - 500*time.Millisecond
		}
		s.at(join, func() { p.start() })
	}
}

// start is the client's first action: a GameSpy query, then the connect.
func (p *player) start() {
	s := p.s
	query := []byte(`\status\`)
	if p.index%2 == 1 {
		query = []byte(`\basic\`)
	}
	s.gamespyExchange(p, query, s.game.gamespyReply(string(query[1:len(query)-1])))
	s.at(200*time.Millisecond, func() {
		req := dissect.Control{Kind: "connect-request", Addr: p.addr.Addr(), Port: p.addr.Port(), Reserved: make([]byte, 4)}
		p.conn.Queue(dissect.TypeConnectAck, dissect.AppendControl(nil, &req), true, true)
		p.flush()
		s.at(tick, p.tick)
		s.at(tick, func() { s.server.tickPlayer(p) })
		s.at(p.leaveAt-s.now, p.leave)
	})
}

func (p *player) flush() { p.s.sendClient(p, p.conn.Flush(p.s.now)) }

func (p *player) queueGame(m game.Message, reliable bool) {
	p.conn.Queue(dissect.TypeData, m.Append(nil), reliable, false)
}

// receive handles a datagram from the server.
func (p *player) receive(plain []byte) {
	if p.stopped {
		return
	}
	ds, err := p.conn.Receive(plain, p.s.now)
	if err != nil {
		p.s.err = fmt.Errorf("client %d: %v", p.index, err)
		return
	}
	for _, d := range ds {
		switch {
		case d.Type == dissect.TypeConnectAck && len(d.Payload) == 1:
			p.conn.LocalID = d.Payload[0]
		case d.Type == dissect.TypeData:
			p.gameMessage(d.Payload)
		}
	}
	p.flush()
}

func (p *player) gameMessage(payload []byte) {
	switch game.Opcode(payload[0]) {
	case game.OpChecksumRequest:
		p.queueGame(p.s.checksumResponse(payload[1]), true)
	case game.OpGameInit:
		p.s.at(p.s.jitter(400*time.Millisecond), func() {
			p.queueGame(&game.NewPlayerInGame{}, true)
			p.flush()
		})
	case game.OpMissionInit:
		p.s.at(2*time.Second+p.s.jitter(2*time.Second), func() { p.s.game.selectShip(p) })
	}
}

// tick is the client's periodic work: retransmissions, keepalive, and
// game traffic while in a ship.
func (p *player) tick() {
	s := p.s
	if p.stopped {
		return
	}
	if p.conn.Retransmit(s.now) || (p.leaving && p.conn.Unacked() == 0) {
		p.flush()
		p.stopped = true // the client is done: no more ticks
		return
	}
	if p.conn.LocalID != 0xFF && s.now >= p.nextKeepalive {
		p.nextKeepalive = s.now + s.jitter(time.Second)
		c := p.identity()
		p.conn.Queue(dissect.TypePeerInfo, dissect.AppendControl(nil, &c), true, true)
	}
	s.game.clientTick(p)
	if p.conn.Pending() {
		p.flush()
	}
	s.at(tick, p.tick)
}

// leave sends a graceful disconnect.
func (p *player) leave() {
	if p.gone || !p.connected {
		return
	}
	s := p.s
	payload := []byte{p.slot}
	a := p.addr.Addr().As4()
	payload = append(payload, a[:]...)
	p.leaving = true // no more game traffic; the tick resends until ACKed
	p.conn.Queue(dissect.TypeDisconnect, payload, true, true)
	p.flush()
	_ = s
}
