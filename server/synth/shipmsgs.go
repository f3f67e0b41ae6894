package synth

import (
	"math"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/server/stock"
)

// Ship creation, StateUpdates and the player-list messages.

func (s *sim) gameTime() float32 { return s.game.gameTime() }

// selectShip is the player picking a ship in the lobby: the client sends
// ObjCreateTeam (0x03) and the host relays it to everyone else.
func (g *gameState) selectShip(p *player) {
	if p.gone || p.leaving || p.ship != nil {
		return
	}
	ships := game.StockShips()
	g.spawn(p, ships[(p.index*5+3)%len(ships)])
}

// spawn creates (or re-creates, after a kill) p's ship and announces it.
func (g *gameState) spawn(p *player, spec *game.ShipSpec) {
	lives := 0
	if p.ship != nil {
		lives = p.ship.lives + 1
	}
	angle := float64(p.index) * 2 * math.Pi / 16
	sh := &ship{owner: p, spec: spec, alive: true, lives: lives,
		id:     game.PlayerObjectID(p.index) + game.ObjectID(lives*0x400),
		center: dissect.Vec3{X: float32(400 * math.Cos(angle)), Y: float32(400 * math.Sin(angle)), Z: float32(20 * p.index)},
		phase:  angle, rr: map[*player]int{}}
	sh.move(g.s.now)
	sh.lastAbs = sh.pos
	p.ship = sh
	g.ships = append(g.ships, sh)
	p.queueGame(sh.create(), true)
	p.flush()
}

// create is the ship's ObjCreateTeam message.
func (sh *ship) create() game.Message {
	p := sh.owner
	// The stock create form where stock bytes show it; for the classes
	// whose create form no stock bytes show (a pulse weapon system or a
	// cloak), the round-robin form, which decoders keep as bytes.
	subs, ok := sh.spec.AppendCreateStates(nil, sh.spec.FullHealth())
	if !ok {
		subs, _ = sh.spec.AppendSubsystemStates(nil, 0, sh.spec.FullHealth(), true)
	}
	return &game.ObjCreate{HasTeam: true, Owner: uint8(p.index), Team: p.team, Class: game.ClassShip,
		Object: sh.id, Species: sh.spec.Species, Position: sh.pos,
		Orientation: game.Quaternion{W: 1}, Speed: 0, PlayerName: p.name, SetName: "Multi1",
		SubsystemData: subs}
}

// move puts the ship on its circuit at time t: a slow circle around its
// centre, 60 m radius, one lap a minute.
func (sh *ship) move(t time.Duration) {
	a := sh.phase + 2*math.Pi*t.Seconds()/60
	sh.pos = dissect.Vec3{X: sh.center.X + float32(60*math.Cos(a)), Y: sh.center.Y + float32(60*math.Sin(a)), Z: sh.center.Z}
	sh.vel = dissect.Vec3{X: float32(-2 * math.Pi * math.Sin(a)), Y: float32(2 * math.Pi * math.Cos(a))}
}

// stateUpdate is the owner's StateUpdate to the host: position delta (an
// absolute position every 3 s), orientation, speed, and a weapon health
// report (flag 0x80, which client-to-server updates always carry and never
// 0x20).
func (sh *ship) stateUpdate(dir game.Direction) game.Message {
	s := sh.owner.s
	sh.move(s.now)
	m := &game.StateUpdate{Object: sh.id, GameTime: s.gameTime()}
	m.Flags = game.StateForward | game.StateUp | game.StateSpeed | game.StateWeapons
	if sh.updates%30 == 0 {
		m.Flags |= game.StatePosition
		m.Position = sh.pos
		sh.lastAbs = sh.pos
	} else {
		m.Flags |= game.StateDelta
		m.Delta = dissect.EncodeCV4(dissect.Vec3{X: sh.pos.X - sh.lastAbs.X, Y: sh.pos.Y - sh.lastAbs.Y, Z: sh.pos.Z - sh.lastAbs.Z})
	}
	m.Forward = dissect.EncodeDir3(sh.vel)
	m.Up = dissect.Dir3{0, 0, 127}
	m.Speed = dissect.EncodeCF16(float32(math.Hypot(float64(sh.vel.X), float64(sh.vel.Y))))
	if sh.cloakSentC2S != sh.cloaked {
		m.Flags |= game.StateCloak
		m.Cloaked = sh.cloaked
		sh.cloakSentC2S = sh.cloaked
	}
	w := uint8(sh.updates % 8)
	m.Weapons = []game.WeaponHealth{{Index: w, Health: 0xFF}, {Index: (w + 1) % 8, Health: 0xFF}, {Index: (w + 2) % 8, Health: 0xF0}}
	sh.updates++
	return m
}

// hostUpdate is the host's StateUpdate about sh for player to: the
// subsystem round-robin (flag 0x20, never 0x80 from the host), plus motion
// for ships the receiver does not own.
func (sh *ship) hostUpdate(to *player) game.Message {
	s := sh.owner.s
	m := &game.StateUpdate{Object: sh.id, GameTime: s.gameTime()}
	own := to == sh.owner
	if !own {
		m.Flags = game.StateDelta | game.StateForward | game.StateUp | game.StateSpeed
		m.Delta = dissect.EncodeCV4(dissect.Vec3{X: sh.pos.X - sh.lastAbs.X, Y: sh.pos.Y - sh.lastAbs.Y, Z: sh.pos.Z - sh.lastAbs.Z})
		m.Forward = dissect.EncodeDir3(sh.vel)
		m.Up = dissect.Dir3{0, 0, 127}
		m.Speed = dissect.EncodeCF16(float32(math.Hypot(float64(sh.vel.X), float64(sh.vel.Y))))
		if sh.cloakSent[to] != sh.cloaked {
			m.Flags |= game.StateCloak
			m.Cloaked = sh.cloaked
			if sh.cloakSent == nil {
				sh.cloakSent = map[*player]bool{}
			}
			sh.cloakSent[to] = sh.cloaked
		}
	}
	sh.rr[to] = m.FillSubsystems(sh.spec, sh.rr[to], nil, own)
	return m
}

// hostTick sends to's StateUpdates about every live ship (10 Hz, unreliable).
func (g *gameState) hostTick(to *player) {
	if !to.inGame() || to.leaving {
		return
	}
	if d := g.s.cfg.Quirks.StateUpdateDivisor; d > 1 {
		to.hostTicks++
		if to.hostTicks%d != 1 {
			return
		}
	}
	for _, sh := range g.ships {
		if sh.alive && !sh.owner.gone {
			g.s.server.queueData(to, sh.hostUpdate(to).Append(nil), false)
		}
	}
}

// deletePlayerUI is the player-list event the host sends: "new player in
// game" while p joins, "player removed" once p has left.
func deletePlayerUI(p *player) game.Message {
	if p.gone || p.leaving {
		return stock.PlayerRemoved(p.index, p.slot)
	}
	return stock.PlayerJoined(p.index, p.slot)
}

func deletePlayerAnim(p *player) game.Message { return &game.DeletePlayerAnim{Name: p.name} }
