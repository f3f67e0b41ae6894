package native

import (
	"fmt"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/server/transport"
)

// gameMessage acts on a game message from p: checksum and join messages
// while p joins, then, in the game, what the host keeps, relays or sends
// to a team.
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
			if oc, ok := r.Msg.(*game.ObjCreate); ok && oc.Class == game.ClassShip && s.keepShip(p, payload) {
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
