package native

import (
	"sort"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/server/stock"
	"github.com/bcwire/bcwire/server/transport"
)

// The join, after admission (admission.go) has given a client a peer: the
// connect answer, the checksum rounds (phChecksum), the join bundle and the
// wait for NewPlayerInGame (phLobby), then MISSION_INIT and the late-join
// replication that put the player in the game (phGame). From then on its
// game messages are routed by gameMessage (relay.go).

// connected answers p's connect request d: its slot, then the first
// checksum request.
func (s *Server) connected(p *peer, d *transport.Delivery) {
	if c, err := dissect.ParseControl(&dissect.Message{Type: d.Type, Payload: d.Payload}); err == nil && c.Addr.Is4() && !c.Addr.IsUnspecified() {
		p.ip = c.Addr
	}
	p.phase, p.round = phChecksum, 0
	p.conn.Queue(dissect.TypeConnectAck, []byte{p.slot}, true, true)
	s.queueGame(p, &stock.ChecksumRounds[0])
	s.log.Info("client connected", "client", p.addr, "slot", p.slot)
}

// joinMessage acts on a game message from p before it is in the game: a
// checksum answer in the rounds, NewPlayerInGame in the lobby. Anything
// else is ignored.
func (s *Server) joinMessage(now time.Time, p *peer, payload []byte) {
	op := game.Opcode(payload[0])
	switch p.phase {
	case phChecksum:
		if op == game.OpChecksumResponse && len(payload) >= 2 {
			s.checksumResponse(now, p, payload)
		}
	case phLobby:
		if op == game.OpNewPlayerInGame {
			s.newPlayerInGame(now, p)
		}
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
