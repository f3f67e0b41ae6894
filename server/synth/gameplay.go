package synth

import (
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/server/stock"
)

// Game-level behaviour: what players do once in a ship, at rates taken from
// the stock traffic shape in PROTOCOL.md (per player per second: PythonEvent
// about 1.3, StartFiring 0.85, TorpedoFire 0.33, CollisionEffect 0.03,
// SetPhaserLevel 0.01), and what the server does about it.

type gameState struct {
	s      *sim
	ships  []*ship
	scores map[byte]*game.Score // by wire peer id
	// scripted once-per-capture events
	cloaked, warped, killed bool
	chatLine                int
}

func newGameState(s *sim) *gameState {
	return &gameState{s: s, scores: map[byte]*game.Score{}}
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
	switch {
	case op == game.OpStateUpdate, op == game.OpCollisionEffect:
		// The host keeps these: it sends its own StateUpdates (subsystem
		// flag 0x20) and applies collision damage itself.
	case op == game.OpTeamChat:
		sv.relay(p, payload, true, true)
	case op == game.OpObjCreateTeam:
		sv.relay(p, payload, true, false)
	default:
		sv.relay(p, payload, true, false)
	}
}

// clientTick is a player's game activity for one tick.
func (g *gameState) clientTick(p *player) {
	s := g.s
	if p.leaving || !p.inGame() || p.ship == nil {
		return
	}
	sh := p.ship
	if !sh.alive {
		return
	}
	p.queueGame(sh.stateUpdate(game.ClientToServer), false)
	chance := func(perSecond float64) bool { return s.rng.Float64() < perSecond*tick.Seconds() }
	enemy := g.enemyOf(p)
	if chance(1.3) {
		p.queueGame(g.pythonEvent(sh, enemy), true)
	}
	if chance(0.85) {
		p.queueGame(sh.startFiring(enemy), true)
		p.queueGame(sh.beamFire(enemy), true)
		s.at(s.jitter(800*time.Millisecond), func() {
			if !p.leaving && sh.alive && p.inGame() {
				p.queueGame(sh.stopFiring(), true)
			}
		})
	}
	if chance(0.33) {
		p.queueGame(sh.torpedoFire(enemy), true)
		if enemy != nil {
			s.at(s.jitter(1500*time.Millisecond), func() { g.explosion(enemy) })
		}
	}
	if chance(0.03) {
		p.queueGame(sh.collision(enemy), true)
	}
	if chance(0.012) {
		p.queueGame(sh.setPhaserLevel(uint8(s.rng.Intn(3))), true)
	}
	if chance(0.02) {
		p.queueGame(sh.subsystemStatus(), true)
	}
	if chance(0.04) {
		g.chat(p)
	}
	// One cloak and one warp per capture, by the first two players.
	if !g.cloaked && p.index == 0 && s.now > s.cfg.Duration*2/5 {
		g.cloaked = true
		sh.cloaked = true
		p.queueGame(sh.forward(game.OpStartCloaking), true)
		s.at(4*time.Second, func() {
			if sh.alive && !p.leaving {
				sh.cloaked = false
				p.queueGame(sh.forward(game.OpStopCloaking), true)
			}
		})
	}
	if !g.warped && p.index == len(s.players)-1 && s.now > s.cfg.Duration/2 {
		g.warped = true
		p.queueGame(sh.startWarp(), true)
	}
	// One kill per capture with two or more players in ships.
	if !g.killed && enemy != nil && enemy.ship.alive && s.now > s.cfg.Duration*3/5 {
		g.killed = true
		g.kill(p, enemy)
	}
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

// explosion is the host telling every client a torpedo hit victim's ship.
func (g *gameState) explosion(victim *player) {
	if victim.ship == nil || !victim.ship.alive || victim.gone {
		return
	}
	e := &game.Explosion{Object: victim.ship.id,
		Impact: dissect.EncodeCV4(dissect.Vec3{X: 1.5, Y: -3, Z: 0.5}),
		Radius: dissect.EncodeCF16(15), Damage: dissect.EncodeCF16(50)}
	g.broadcast(e, nil)
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

func (g *gameState) pythonEvent(sh *ship, enemy *player) game.Message {
	ev := game.Event{Class: game.EventClassObjPtr, Code: game.ETWeaponFired, Source: sh.id + 0x20, Dest: sh.id}
	if enemy != nil {
		ev.ObjPtr = enemy.ship.id
	}
	switch g.s.rng.Intn(3) {
	case 1:
		ev = game.Event{Class: game.EventClassSubsystem, Code: game.ETRepairCompleted, Source: sh.id + 0x2A, Dest: sh.id}
	case 2:
		ev = game.Event{Class: game.EventClassObjPtr, Code: game.ETTargetWasChanged, Source: sh.id, Dest: sh.id}
		if enemy != nil {
			ev.ObjPtr = enemy.ship.id
		}
	}
	return &game.PythonEvent{Op: game.OpPythonEvent, Event: ev}
}
