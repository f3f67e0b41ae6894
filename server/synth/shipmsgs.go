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
	sh.spawnedAt = g.s.now
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

// Motion flags: the StateUpdate fields a ship's owner marks dirty.
const (
	flagsAbsolute = game.StatePosition | game.StateForward | game.StateUp | game.StateSpeed
	motionMask    = game.StatePosition | game.StateDelta | game.StateForward | game.StateUp | game.StateSpeed
)

// maneuvers are what a pilot flies from one update to the next, each with
// the StateUpdate fields it changes, and how many updates in a deck of 85
// fly it. The counts are the client-to-server flag mix of the stock
// 2-player trace (PROTOCOL.md, "Measured in a stock 2-player session":
// 0x9E 58%, 0x96 16%, 0x92 9%, 0x8E 2%; the fifth, 0x9D at 8%, is the
// periodic absolute position, sent every absoluteEvery-th update whatever
// the maneuver): turning and banking while changing speed; a flat turn;
// flying straight while speeding up or slowing down; turning and banking
// at constant speed. Weapons (0x80) go with every client update. Each ship
// deals its updates from a shuffled deck, so that even a short capture
// has the stock mix (a random draw per update would not, and diff reads
// the mix).
var maneuvers = []struct {
	flags game.StateFlags
	count int
}{
	{game.StateDelta | game.StateForward | game.StateUp | game.StateSpeed, 58},
	{game.StateDelta | game.StateForward | game.StateSpeed, 16},
	{game.StateDelta | game.StateSpeed, 9},
	{game.StateDelta | game.StateForward | game.StateUp, 2},
}

// absoluteEvery: one update in twelve (8%) carries the absolute position.
const absoluteEvery = 12

// idleAfterSpawn is how long a new ship sits still before its pilot moves
// it: its owner's updates then carry no motion, and the host's carry only
// the subsystem states (the post-spawn subsystem cycle of PROTOCOL.md).
const idleAfterSpawn = 1500 * time.Millisecond

// nextManeuver deals the ship's next maneuver from its deck.
func (sh *ship) nextManeuver() game.StateFlags {
	if len(sh.deck) == 0 {
		for _, m := range maneuvers {
			for i := 0; i < m.count; i++ {
				sh.deck = append(sh.deck, m.flags)
			}
		}
		sh.owner.s.rng.Shuffle(len(sh.deck), func(i, j int) { sh.deck[i], sh.deck[j] = sh.deck[j], sh.deck[i] })
	}
	f := sh.deck[len(sh.deck)-1]
	sh.deck = sh.deck[:len(sh.deck)-1]
	return f
}

// stateUpdate is the owner's StateUpdate to the host: the fields its
// maneuver changes (an absolute position every absoluteEvery-th update,
// otherwise a delta from the last one), and a weapon health report (flag
// 0x80, which client-to-server updates always carry and never 0x20).
func (sh *ship) stateUpdate() game.Message {
	s := sh.owner.s
	sh.move(s.now)
	m := &game.StateUpdate{Object: sh.id, GameTime: s.gameTime(), Flags: game.StateWeapons}
	switch {
	case s.now-sh.spawnedAt < idleAfterSpawn:
		sh.motion = 0
	case sh.updates%absoluteEvery == 0:
		sh.motion = flagsAbsolute
	default:
		sh.motion = sh.nextManeuver()
	}
	sh.fillMotion(m, sh.motion)
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

// fillMotion sets the motion fields of flags in m from the ship's state.
func (sh *ship) fillMotion(m *game.StateUpdate, flags game.StateFlags) {
	m.Flags |= flags
	if flags&game.StatePosition != 0 {
		m.Position = sh.pos
		sh.lastAbs = sh.pos
	}
	if flags&game.StateDelta != 0 {
		m.Delta = dissect.EncodeCV4(dissect.Vec3{X: sh.pos.X - sh.lastAbs.X, Y: sh.pos.Y - sh.lastAbs.Y, Z: sh.pos.Z - sh.lastAbs.Z})
	}
	if flags&game.StateForward != 0 {
		m.Forward = dissect.EncodeDir3(sh.vel)
	}
	if flags&game.StateUp != 0 {
		bank := math.Sin(sh.phase + float64(sh.updates)/17)
		m.Up = dissect.Dir3{0, int8(40 * bank), 120}
	}
	if flags&game.StateSpeed != 0 {
		v := math.Hypot(float64(sh.vel.X), float64(sh.vel.Y)) * (1 + 0.3*math.Sin(float64(sh.updates)/23))
		m.Speed = dissect.EncodeCF16(float32(v))
	}
}

// hostUpdate is the host's StateUpdate about sh for player to: the
// subsystem round-robin (flag 0x20, never 0x80 from the host), plus, for
// ships the receiver does not own, the motion fields the owner last marked
// dirty. So the host's flag mix follows the clients' (0x9E becomes 0x3E,
// 0x96 0x36, 0x92 0x32, 0x9D 0x3D), and a ship's own owner gets subsystem
// states only (0x20), as in the stock trace.
func (sh *ship) hostUpdate(to *player) game.Message {
	s := sh.owner.s
	m := &game.StateUpdate{Object: sh.id, GameTime: s.gameTime()}
	own := to == sh.owner
	if !own {
		sh.fillMotion(m, sh.motion&motionMask)
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
