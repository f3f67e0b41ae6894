package native

import (
	"encoding/binary"
	"fmt"
	"sort"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
)

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
	delete(s.objects, id)
	s.damages.Forget(id)
	if sh := s.ships[id]; sh != nil {
		delete(s.ships, id)
		s.log.Info("ship destroyed", "slot", sh.owner.slot, "object", fmt.Sprintf("0x%08X", uint32(id)))
	}
}

// object is an object other than a ship that a client created.
type object struct {
	owner   *peer
	payload []byte // the ObjCreate(Team) message as the owner sent it
}

// maxObjects caps the objects kept besides ships.
const maxObjects = 256

// objCreateID reads the object id of an ObjCreate (0x02: opcode, owner,
// class u32, object id i32) or ObjCreateTeam (0x03: a team byte after the
// owner) from its envelope alone (OpenBC
// docs/wire-formats/objcreate-wire-format/02-message-envelope.md and
// 03-serialized-object-stream.md), for a body the decoder does not take.
func objCreateID(payload []byte) (game.ObjectID, bool) {
	off := 6
	if len(payload) > 0 && game.Opcode(payload[0]) == game.OpObjCreateTeam {
		off = 7
	}
	if len(payload) < off+4 {
		return 0, false
	}
	return game.ObjectID(binary.LittleEndian.Uint32(payload[off:])), true
}
