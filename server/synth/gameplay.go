package synth

import (
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/server/stock"
)

// Game-level behaviour: what players do once in a ship, at the rates of the
// stock traces in PROTOCOL.md (see clientTick), and what the host does about
// it. Explosion (0x29) is not generated: neither stock trace in PROTOCOL.md
// has one, not even the session with a kill.

type gameState struct {
	s     *sim
	ships []*ship
	// damages is the host's repair-list policy, drawing from the sim's
	// random source.
	damages *stock.HostDamage
	scores  map[byte]*game.Score // by wire peer id
	// scripted once-per-capture events
	cloaked, warped, killed bool
	chatLine                int
}

func newGameState(s *sim) *gameState {
	return &gameState{s: s, damages: stock.NewHostDamage(s.rng), scores: map[byte]*game.Score{}}
}

// gameTime is the server's game clock in seconds (it had been running for
// a while before the capture started).
func (g *gameState) gameTime() float32 {
	return 76.1 + float32(g.s.now.Seconds())
}

// gamespyReply answers a \status\ or \basic\ query: the default match,
// the players connected so far (by name, in join order), and the game mode,
// "openplaying" once someone is in the game. The queries carry no query
// id, so the reply's is 1.1.
func (g *gameState) gamespyReply(kind string) []byte {
	info := stock.DefaultMatch.ServerInfo()
	info.Hostname, info.GameMode = "bcwire synthetic server", stock.GameModeSettings
	for _, p := range g.s.players {
		if p.connected && !p.gone {
			info.NumPlayers++
			info.Players = append(info.Players, p.name)
		}
		if p.inGame() {
			info.GameMode = stock.GameModePlaying
		}
	}
	return stock.GameSpyReply(kind, info, "1.1")
}

// checksumResponse is a stock client's answer to checksum round round of
// this server (whose quirks may have changed the round's directory).
func (s *sim) checksumResponse(round byte) *game.ChecksumResponse {
	req := &game.ChecksumRequest{Round: game.ChecksumRound(round)}
	for i, r := range checksumRounds {
		if byte(r.Round) == round {
			req = s.checksumRequest(i)
		}
	}
	return stock.ChecksumResponseTo(req)
}

// newPlayerInGame is the server's answer to 0x2A: MISSION_INIT, the
// DeletePlayerUI the stock host sends, the score of every player, then the
// ships already in play (late-join replication).
func (g *gameState) newPlayerInGame(p *player) {
	sv := g.s.server
	sv.queueGame(p, stock.DefaultMatch.MissionInit(0), true)
	sv.queueGame(p, deletePlayerUI(p), true)
	if g.scores[p.slot] == nil {
		g.scores[p.slot] = &game.Score{PlayerID: int32(p.slot)}
	}
	for _, q := range g.s.players {
		if sc := g.scores[q.slot]; sc != nil && !q.gone {
			sv.queueGame(p, sc, true)
		}
	}
	for _, sh := range g.ships {
		if sh.alive {
			sv.queueGame(p, sh.create(), true)
		}
	}
	p.joined = true
}

// fromClient handles a game message a client sent once in the game.
func (g *gameState) fromClient(p *player, payload []byte) {
	sv := g.s.server
	op := game.Opcode(payload[0])
	if op == game.OpCollisionEffect || op == game.OpBeamFire || op == game.OpTorpedoFire {
		g.hit(payload)
	}
	// What the stock host keeps, relays or sends to a team (the generator's
	// clients send nothing the host must answer).
	switch stock.HostRoute(op) {
	case stock.RouteRelay:
		sv.relay(p, payload, true, false)
	case stock.RouteTeam:
		sv.relay(p, payload, true, true)
	}
}

// Per-player rates (events a second) from the stock 2-player trace
// (PROTOCOL.md: 10,459 client StateUpdates at 10 a second per ship put it
// at about 520 s): StartFiring 330 messages, sent as duplicate pairs, so
// 165 firing events, 0.16 a player a second; TorpedoFire 76 (0.07); BeamFire
// 68, 0.4 of the firing events; SetPhaserLevel 5, CollisionEffect 5
// (0.005). The 3-player 15-minute session agrees within a factor of two.
const (
	rateFiring       = 0.16
	beamHitShare     = 0.4
	rateTorpedo      = 0.08
	rateCollision    = 0.008
	ratePhaserLevel  = 0.005
	rateSubsysStatus = 0.005
	rateChat         = 0.04
)

// clientTick is a player's game activity for one tick. Clients never send
// PythonEvent (0x06): those come from the host (see damage).
func (g *gameState) clientTick(p *player) {
	s := g.s
	if p.leaving || !p.inGame() || p.ship == nil {
		return
	}
	sh := p.ship
	if !sh.alive {
		return
	}
	p.queueGame(sh.stateUpdate(), false)
	if chance := func(perSecond float64) bool { return s.rng.Float64() < perSecond*tick.Seconds() }; chance(rateChat) {
		g.chat(p)
	}
	// Combat needs someone to fight.
	enemy := g.enemyOf(p)
	if enemy == nil {
		return
	}
	g.combat(p, sh, enemy)
}

// combat is a player's fighting for one tick, against enemy.
func (g *gameState) combat(p *player, sh *ship, enemy *player) {
	s := g.s
	chance := func(perSecond float64) bool { return s.rng.Float64() < perSecond*tick.Seconds() }
	if chance(rateFiring) {
		// StartFiring always goes as a duplicate pair: two identical
		// reliable messages in one datagram (OpenBC docs/wire-formats/
		// event-forward-wire-format.md, "StartFiring Duplicate Pair
		// Behavior"); StopFiring goes once.
		sf := sh.startFiring(enemy)
		p.queueGame(sf, true)
		p.queueGame(sf, true)
		if s.rng.Float64() < beamHitShare {
			p.queueGame(sh.beamFire(enemy), true)
		}
		s.at(s.jitter(800*time.Millisecond), func() {
			if !p.leaving && sh.alive && p.inGame() {
				p.queueGame(sh.stopFiring(), true)
			}
		})
	}
	if chance(rateTorpedo) {
		p.queueGame(sh.torpedoFire(enemy), true)
	}
	if chance(rateCollision) {
		p.queueGame(sh.collision(enemy), true)
	}
	if chance(ratePhaserLevel) {
		p.queueGame(sh.setPhaserLevel(uint8(s.rng.Intn(3))), true)
	}
	if chance(rateSubsysStatus) {
		p.queueGame(sh.subsystemStatus(), true)
	}
	// One cloak per capture, by the first player: shown in StateUpdates
	// (flag 0x40) only, since stock multiplayer never sends StartCloaking
	// or StopCloaking (0x0E/0x0F: no instances in the stock traces despite
	// active cloaking, per the same OpenBC page).
	if !g.cloaked && p.index == 0 && s.now > s.cfg.Duration*2/5 {
		g.cloaked = true
		sh.cloaked = true
		s.at(4*time.Second, func() { sh.cloaked = false })
	}
	if !g.warped && p.index == len(s.players)-1 && s.now > s.cfg.Duration/2 {
		g.warped = true
		p.queueGame(sh.startWarp(), true)
	}
	// One kill per capture with two or more players in ships.
	if !g.killed && enemy.ship.alive && s.now > s.cfg.Duration*3/5 {
		g.killed = true
		g.kill(p, enemy)
	}
}

// hit is the host learning of a hit from a client's message as it arrives,
// and damage the hit landing: the stock host's repair-list announcements,
// stock.HostDamage, which the native server shares.
func (g *gameState) hit(payload []byte) {
	h, ok := g.damages.Hit(payload, func(id game.ObjectID) bool { return g.liveShip(id) != nil })
	if !ok {
		return
	}
	sh := g.liveShip(h.Ship)
	g.s.at(h.After, func() { g.damage(sh) })
}

func (g *gameState) liveShip(id game.ObjectID) *ship {
	for _, sh := range g.ships {
		if sh.id == id && sh.alive {
			return sh
		}
	}
	return nil
}

// damage is the host applying a hit to sh: ADD_TO_REPAIR_LIST to every
// client now, REPAIR_COMPLETED when the repair is done.
func (g *gameState) damage(sh *ship) {
	s := g.s
	if sh == nil || !sh.alive {
		return
	}
	r, ok := g.damages.Damage(sh.id)
	if !ok {
		return // already on the repair list
	}
	g.broadcast(r.Added(), nil)
	s.at(g.damages.RepairTime(), func() {
		done := g.damages.Repaired(r)
		if sh.alive && !sh.owner.gone {
			g.broadcast(done, nil)
		}
	})
}

func (g *gameState) enemyOf(p *player) *player {
	for i := 1; i < len(g.s.players); i++ {
		q := g.s.players[(p.index+i)%len(g.s.players)]
		if q.inGame() && !q.leaving && q.ship != nil && q.ship.alive {
			return q
		}
	}
	return nil
}

var chatLines = []string{"hello all", "gg", "watch the asteroid field", "torpedoes away",
	"need repairs", "shields at 20%", "anyone up for a rematch?", "nice shot"}

func (g *gameState) chat(p *player) {
	text := chatLines[g.chatLine%len(chatLines)]
	g.chatLine++
	op := game.OpChat
	if g.chatLine%3 == 0 {
		op = game.OpTeamChat
	}
	p.queueGame(&game.Chat{Op: op, SenderID: int32(p.slot), Text: text}, true)
}

// kill destroys victim's ship: ObjectExploding, DestroyObject, the score
// change, and a respawn five seconds later.
func (g *gameState) kill(killer, victim *player) {
	s := g.s
	sh := victim.ship
	sh.alive = false
	g.broadcast(&game.PythonEvent{Op: game.OpPythonEvent, Event: game.Event{Class: game.EventClassObjectExploding,
		Code: game.ETObjectExploding, Source: sh.id, Dest: ^game.ObjectID(0), FiringPlayer: int32(killer.slot), Lifetime: 2}}, nil)
	g.broadcast(&game.DestroyObject{Object: sh.id}, nil)
	ks, vs := g.score(killer.slot), g.score(victim.slot)
	ks.Kills++
	ks.Score += 10
	vs.Deaths++
	g.broadcast(&game.ScoreChange{KillerID: int32(killer.slot), KillerKills: ks.Kills, KillerScore: ks.Score,
		VictimID: int32(victim.slot), VictimDeaths: vs.Deaths}, nil)
	s.at(5*time.Second, func() {
		if !victim.gone && !victim.leaving {
			g.spawn(victim, sh.spec)
		}
	})
}

func (g *gameState) score(slot byte) *game.Score {
	if g.scores[slot] == nil {
		g.scores[slot] = &game.Score{PlayerID: int32(slot)}
	}
	return g.scores[slot]
}

// broadcast sends a host message to every client in the game but except.
func (g *gameState) broadcast(m game.Message, except *player) {
	b := m.Append(nil)
	if g.s.drops(b) {
		return
	}
	for _, q := range g.s.players {
		if q == except || !q.inGame() {
			continue
		}
		q.srv.Queue(dissect.TypeData, b, true, false)
		g.s.server.flush(q)
	}
}

// playerLeft tells the others that p is gone.
func (g *gameState) playerLeft(p *player) {
	if p.ship != nil && p.ship.alive {
		p.ship.alive = false
	}
	g.broadcast(deletePlayerUI(p), p)
	g.broadcast(deletePlayerAnim(p), p)
}
