package native

import (
	"fmt"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/server/stock"
	"github.com/bcwire/bcwire/server/transport"
)

// gameMessage acts on a game message from p, a player in the game: what
// the host keeps, relays or sends to a team. (Game messages before that are
// the join's: joinMessage, join.go.)
func (s *Server) gameMessage(now time.Time, p *peer, d *transport.Delivery) {
	payload := d.Payload
	op := game.Opcode(payload[0])
	// What the host learns from the message.
	switch op {
	case game.OpStateUpdate:
		// The motion goes into the host's own StateUpdates (hostUpdates).
		s.learnMotion(p, payload)
	case game.OpObjCreate, game.OpObjCreateTeam:
		r := s.dec.Decode(payload, game.ClientToServer)
		if oc, ok := r.Msg.(*game.ObjCreate); ok && r.Err == nil && oc.Class == game.ClassShip {
			if !s.keepShip(p, payload) {
				break // relayed, not kept for late joiners (admission.go)
			}
			s.ships[oc.Object] = &ship{owner: p, payload: append([]byte(nil), payload...),
				spec: game.ShipBySpecies(oc.Species), rr: map[*peer]int{}, cloakSent: map[*peer]bool{}}
			delete(s.objects, oc.Object)
			if oc.HasTeam {
				p.team = int(oc.Team)
			}
			s.log.Info("ship created", "slot", p.slot, "name", p.name, "object", fmt.Sprintf("0x%08X", uint32(oc.Object)), "species", oc.Species)
		} else if id, ok := objCreateID(payload); ok && s.ships[id] == nil && (s.objects[id] != nil || len(s.objects) < maxObjects) {
			s.objects[id] = &object{owner: p, payload: append([]byte(nil), payload...)}
			s.log.Debug("object created", "slot", p.slot, "object", fmt.Sprintf("0x%08X", uint32(id)))
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
	// A weapon or collision that hits a known ship: the host announces the
	// damage itself (damage.go).
	s.hit(now, payload)
	// Where it goes: stock.HostRoute is the stock host's policy. The host
	// keeps CollisionEffects: its damage announcements stand for them.
	switch stock.HostRoute(op) {
	case stock.RouteRelay:
		s.relay(p, payload, d.Reliable, false)
	case stock.RouteTeam:
		s.relay(p, payload, d.Reliable, true)
	case stock.RouteAnswer:
		s.answerObjectRequest(p, payload)
	}
}

// answerObjectRequest answers ObjNotFound (0x1D) and RequestObject (0x1E)
// as the stock host does (OpenBC
// docs/wire-formats/objnotfound-requestobj-wire-format.md): with the
// object's ObjCreate/ObjCreateTeam, unicast and reliable to the requester
// only, for an object the host has. The host here knows the live ships and
// the other objects clients created: their ObjCreate(Team) as the owner
// sent it. It keeps no explosions, so none are replayed after the answer.
//
// A RequestObject for an object the host does not have is answered with
// ObjNotFound for it, as the stock host answers a message about an object
// it cannot find (enter-set-wire-format.md, "Host-Side Behavior"; the stock
// 2-player trace has ObjNotFound server to client only, 12 times, such as
// 1D FF FF FF 3F in shared/vectors). An ObjNotFound for an object the host
// does not have either is not answered: two sides that both lack it would
// otherwise send it back and forth.
func (s *Server) answerObjectRequest(p *peer, payload []byte) {
	r := s.dec.Decode(payload, game.ClientToServer)
	var id game.ObjectID
	switch m := r.Msg.(type) {
	case *game.ObjNotFound:
		id = m.Object
	case *game.RequestObject:
		id = m.Object
	}
	if r.Err != nil || r.Msg == nil {
		s.log.Debug("object request not understood", "client", p.addr, "slot", p.slot, "err", r.Err)
		return
	}
	var create []byte
	if sh := s.ships[id]; sh != nil {
		create = sh.payload
	} else if o := s.objects[id]; o != nil {
		create = o.payload
	}
	if create == nil {
		if _, req := r.Msg.(*game.RequestObject); req {
			s.queueGame(p, &game.ObjNotFound{Object: id})
		}
		s.log.Debug("object request for an unknown object", "client", p.addr, "slot", p.slot,
			"object", fmt.Sprintf("0x%08X", uint32(id)), "op", game.Opcode(payload[0]))
		return
	}
	p.conn.Queue(dissect.TypeData, create, true, false)
	p.dirty = true
	s.stats.ObjectsSent++
	s.log.Debug("object request answered", "client", p.addr, "slot", p.slot, "object", fmt.Sprintf("0x%08X", uint32(id)))
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
