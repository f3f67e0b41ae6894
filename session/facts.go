package session

import (
	"fmt"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
)

// Game facts: what the messages of a session say about the player - join
// phases, checksum rounds, ships, StateUpdate rates, chat, scores, kills and
// relayed messages.

type objState struct {
	ship int // index into s.Ships, -1 when not listed
	dead bool
}

type rateKey struct {
	id  game.ObjectID
	dir game.Direction
}

// rateIndex finds a session's ShipRate by object and direction. A session
// sees updates for a handful of ships, in turn: a small table by key hash
// remembers where each key was last found, and only when that misses does
// it scan its keys from the one after the last found; only beyond
// manyRates does a map pay.
type rateIndex struct {
	keys  []rateKey       // of s.StateUpdates, in order
	many  map[rateKey]int // index into keys, when they are many
	last  int             // index of the last key found by scanning
	hints [rateHints]rateHint
}

// rateHint is where a key was last found: its index, and the key packed
// into one word (see pack) so that checking it is one comparison. n and
// last are live.add's for StateUpdates: the updates of the key not yet
// counted in its ShipRate (Count) and the latest one's time (Last), which
// flushRate moves there when the hint goes to another key, and finish.
// (Writing the ShipRate on every update touched two or three more cache
// lines, its Count's and its Last's, out of L1 by the ship's next update:
// some 17% of live.add's CPU samples on obc200.pcap.)
type rateHint struct {
	key  uint64
	i    int
	n    int
	last time.Time
}

const (
	manyRates = 16
	rateHints = 64 // a power of two
)

// pack makes k one word, never zero (an empty hint).
func (k rateKey) pack() uint64 { return 1<<63 | uint64(k.id)<<8 | uint64(k.dir) }

func (k rateKey) hint() int {
	return int((uint32(k.id)^uint32(k.dir)<<16)*0x9E3779B1>>26) & (rateHints - 1)
}

// find returns the index of k, or -1.
func (x *rateIndex) find(k rateKey) int {
	if i, ok := x.hinted(k); ok {
		return i
	}
	return x.findSlow(k)
}

// hinted is find's usual case, small enough to inline: the index of k if
// its hint has it.
func (x *rateIndex) hinted(k rateKey) (int, bool) {
	h := &x.hints[k.hint()]
	return h.i, h.key == k.pack()
}

// findSlow is find when the hint misses.
func (x *rateIndex) findSlow(k rateKey) int {
	i := x.search(k)
	if i >= 0 {
		x.hints[k.hint()] = rateHint{key: k.pack(), i: i}
	}
	return i
}

// search is find without the hints.
func (x *rateIndex) search(k rateKey) int {
	if x.many != nil {
		i, ok := x.many[k]
		if !ok {
			return -1
		}
		return i
	}
	n := len(x.keys)
	for j := range n {
		i := x.last + 1 + j
		if i >= n {
			i -= n
		}
		if x.keys[i] == k {
			x.last = i
			return i
		}
	}
	return -1
}

// add appends k (not yet in x) and returns its index.
func (x *rateIndex) add(k rateKey) int {
	i := len(x.keys)
	x.keys = append(x.keys, k)
	switch {
	case x.many != nil:
		x.many[k] = i
	case len(x.keys) > manyRates:
		x.many = make(map[rateKey]int, 2*len(x.keys))
		for j, o := range x.keys {
			x.many[o] = j
		}
	}
	x.last = i
	x.hints[k.hint()] = rateHint{key: k.pack(), i: i}
	return i
}

func (l *live) control(r *flow.Record) {
	s, c := l.s, r.Control
	switch r.Msg.Type {
	case dissect.TypeConnect, dissect.TypeConnectAck:
		switch {
		case isConnectRequest(r):
			if s.setOnce(&s.Phases.Connect, r.Time) && r.Msg.Legacy {
				l.event(r, EventNonStock, "connect request in the legacy [type][len:u8][flags:u8] framing (a third-party client's, not stock)")
			}
		case c.Kind == "slot-assignment" && r.Dir == game.ServerToClient:
			s.setOnce(&s.Phases.ConnectReply, r.Time)
			s.Slot = int(*c.Slot)
		}
	case dissect.TypePeerInfo:
		if r.Dir == game.ClientToServer {
			s.Keepalive.Client.add(r.Time)
		} else {
			s.Keepalive.Server.add(r.Time)
		}
		if c.Slot != nil && c.Name != "" && (s.Slot < 0 || int(*c.Slot) == s.Slot) {
			s.Name = c.Name
			s.Slot = int(*c.Slot)
		}
	case dissect.TypeDisconnect:
		by := "client"
		if r.Dir == game.ServerToClient {
			by = "server"
		}
		l.end(EndDisconnect, r.Time, r.Frame, by, "disconnect from the "+by)
	case dissect.TypeBoot:
		text := "booted by the server"
		if r.Dir == game.ClientToServer {
			text = "boot message from the client"
		}
		l.end(EndBoot, r.Time, r.Frame, "server", text)
	}
}

// game takes a game message other than a StateUpdate (add counts those
// itself); op is its opcode.
func (l *live) game(r *flow.Record, op game.Opcode, p []byte, now stamp) {
	s := l.s
	msg := r.Game.Msg
	c2s := r.Dir == game.ClientToServer
	switch op {
	case game.OpChecksumRequest:
		if rd, ok := checksumRound(msg); ok && !c2s {
			s.setOnce(&l.round(rd).Request, r.Time)
		}
	case game.OpChecksumResponse:
		if rd, ok := checksumRound(msg); ok && c2s {
			s.setOnce(&l.round(rd).Response, r.Time)
		}
	case game.OpChecksumComplete:
		s.setOnce(&s.Phases.ChecksumDone, r.Time)
	case game.OpVersionMismatch, game.OpSystemChecksumFail:
		l.event(r, EventChecksumFail, withArgs(op.String(), msg.String()))
	case game.OpSettings:
		s.setOnce(&s.Phases.Lobby, r.Time)
		if st, ok := msg.(*game.Settings); ok && !c2s {
			s.GameSlot = int(st.PlayerSlot)
		}
	case game.OpGameInit:
		s.setOnce(&s.Phases.Lobby, r.Time)
	case game.OpNewPlayerInGame:
		s.setOnce(&s.Phases.NewPlayer, r.Time)
	case game.OpMissionInit:
		s.setOnce(&s.Phases.MissionInit, r.Time)
	case game.OpObjCreate, game.OpObjCreateTeam:
		if m, ok := msg.(*game.ObjCreate); ok {
			l.objCreate(r, m)
		}
	case game.OpDestroyObject:
		if m, ok := msg.(*game.DestroyObject); ok {
			if o := l.owner(m.Object.Slot()); o != nil {
				o.shipLost(r, m.Object)
			}
		}
	case game.OpChat, game.OpTeamChat:
		l.chat(r)
	case game.OpScoreChange, game.OpScore, game.OpScoreInit, game.OpTeamMessage:
		l.score(r)
	case game.OpEndGame:
		l.event(r, EventEndGame, withArgs("END_GAME", msg.String()))
	case game.OpRestartGame:
		l.event(r, EventRestartGame, "RESTART_GAME")
		l.srv.kills = [len(l.srv.kills)]killKey{} // death counts start again
	}
	l.relay(r, p, now)
}

func withArgs(name, args string) string {
	if args == "" {
		return name
	}
	return name + " " + args
}

// checksumRound reads a checksum message's round: from the decoded message,
// or from the byte after the opcode when it did not decode.
func checksumRound(m game.Message) (game.ChecksumRound, bool) {
	switch m := m.(type) {
	case *game.ChecksumRequest:
		return m.Round, true
	case *game.ChecksumResponse:
		return m.Round, true
	case *game.Raw:
		if len(m.Data) > 0 {
			return game.ChecksumRound(m.Data[0]), true
		}
	}
	return 0, false
}

// maxRounds bounds the checksum rounds a session lists (stock has five).
const maxRounds = 16

func (l *live) round(rd game.ChecksumRound) *ChecksumRound {
	s := l.s
	for i := range s.Checksums {
		if s.Checksums[i].Round == rd {
			return &s.Checksums[i]
		}
	}
	if len(s.Checksums) >= maxRounds {
		return &ChecksumRound{} // counted nowhere: hostile input
	}
	s.Checksums = append(s.Checksums, ChecksumRound{Round: rd})
	return &s.Checksums[len(s.Checksums)-1]
}

// owner finds the live session of the player in player slot slot: l itself
// when it is that player, or another session of the same server.
func (l *live) owner(slot int) *live {
	if l.s.GameSlot == slot {
		return l
	}
	return l.srv.byGameSlot(slot)
}

func (l *live) objCreate(r *flow.Record, m *game.ObjCreate) {
	if m.Class != game.ClassShip {
		return
	}
	owner := int(m.Owner)
	if l.s.GameSlot < 0 && r.Dir == game.ClientToServer {
		l.s.GameSlot = owner // a client creates only its own ship
	}
	if o := l.owner(owner); o != nil {
		o.shipCreated(r, m)
	}
}

// maxObjects bounds the object ids a session remembers, listed or not.
func (l *live) maxObjects() int { return 4 * l.opts.MaxShips }

// remember adds a ship to the object set, within its bound.
func (l *live) remember(id game.ObjectID, st objState) {
	if l.objects == nil {
		l.objects = map[game.ObjectID]objState{}
	}
	if len(l.objects) < l.maxObjects() {
		l.objects[id] = st
	}
}

func (l *live) shipCreated(r *flow.Record, m *game.ObjCreate) {
	s := l.s
	if _, seen := l.objects[m.Object]; seen {
		return // the server's relay of the client's message, or a resend
	}
	class := ShipClass(m.Species)
	s.Ship = class
	subsystems := m.SubsystemSummary()
	st := objState{ship: -1}
	if len(s.Ships) < l.opts.MaxShips {
		st.ship = len(s.Ships)
		s.Ships = append(s.Ships, Ship{ID: m.Object, Class: class, Created: r.Time, Subsystems: subsystems})
	}
	l.remember(m.Object, st)
	l.current, l.flying = m.Object, true
	s.ShipsCreated++
	if m.HasTeam {
		s.Team = int(m.Team)
	}
	if s.Name == "" && m.PlayerName != "" {
		s.Name = m.PlayerName
	}
	s.setOnce(&s.Phases.InGame, r.Time)
	if l.lost {
		s.setOnce(&s.Phases.Respawned, r.Time)
	}
	if l.eventsFull() {
		return
	}
	text := class + " " + idText(m.Object)
	if m.HasTeam {
		text += fmt.Sprintf(" team %d", m.Team)
	}
	if subsystems != "" {
		text += " (" + subsystems + ")"
	}
	if l.lost {
		l.event(r, EventRespawn, "new ship "+text)
	} else {
		l.event(r, EventShipCreated, "ship selected: "+text)
	}
}

// ShipClass names a species byte: the stock class's script name
// ("Sovereign"), or the species as the game package shows it.
func ShipClass(sp game.Species) string {
	if spec := game.ShipBySpecies(sp); spec != nil {
		return spec.Name
	}
	return sp.String()
}

func idText(id game.ObjectID) string { return fmt.Sprintf("0x%08X", uint32(id)) }

// shipLost marks one of the player's ships destroyed: by DestroyObject (the
// host removing a leaving player's ship) or as the victim of a SCORE_CHANGE
// (stock deaths send no DestroyObject). Each ship counts once.
func (l *live) shipLost(r *flow.Record, id game.ObjectID) {
	st, ok := l.objects[id]
	if !ok || st.dead {
		return
	}
	st.dead = true
	l.objects[id] = st
	if id == l.current {
		l.flying = false
	}
	s := l.s
	s.ShipsDestroyed++
	if st.ship >= 0 {
		s.Ships[st.ship].Destroyed = s.times.at(r.Time)
	}
	l.lost = true
	s.setOnce(&s.Phases.Destroyed, r.Time)
	if !l.eventsFull() {
		l.event(r, EventShipDestroyed, fmt.Sprintf("ship %s destroyed", idText(id)))
	}
}

// seen reports whether id is in l.objects.
func (l *live) seen(id game.ObjectID) bool {
	if l.isKnown && id == l.known {
		return true
	}
	if _, ok := l.objects[id]; !ok {
		return false
	}
	l.known, l.isKnown = id, true
	return true
}

// ownShipUpdate is a StateUpdate's part (live.add counts its rate) for a
// client's update of a ship other than the one it noted last.
func (l *live) ownShipUpdate(r *flow.Record, id game.ObjectID) {
	s := l.s
	s.setOnce(&s.Phases.FirstStateUpdate, r.Time)
	if s.setOnce(&s.Phases.InGame, r.Time) {
		s.Inferred = append(s.Inferred, "in_game")
	}
	if s.GameSlot < 0 && id.Slot() >= 0 {
		s.GameSlot = id.Slot() // a client updates only its own ship
	}
	if !l.seen(id) && id.Slot() == s.GameSlot {
		// A ship created before the capture: remember it so that its
		// destruction counts.
		l.remember(id, objState{ship: -1})
		l.current, l.flying = id, true
	}
	// The phases stay set, a known game slot stays known (Settings
	// sets only another one) and objects keeps its ids: the next
	// update of a seen id finds nothing to do here, and need not read
	// the Session's lines.
	l.ownShip, l.ownShipDone = id, s.GameSlot >= 0 && l.seen(id)
}

// rate is a StateUpdate's ShipRate (live.add) for k, added if new and
// there is room (nil if not), and left in k's hint.
func (l *live) rate(k rateKey, r *flow.Record) *rateHint {
	s := l.s
	h := &l.rates.hints[k.hint()]
	l.flushRate(h) // find or add overwrite it when they know k
	if i := l.rates.find(k); i < 0 {
		if len(s.StateUpdates) >= l.opts.MaxShipRates {
			return nil
		}
		l.rates.add(k)
		s.StateUpdates = append(s.StateUpdates, ShipRate{Object: k.id, Dir: r.Dir.String(), First: r.Time})
	}
	return h // find and add left k there
}

// flushRate moves the updates h holds to its ShipRate.
func (l *live) flushRate(h *rateHint) {
	if h.n > 0 {
		u := &l.s.StateUpdates[h.i]
		u.Count += h.n
		u.Last = h.last
		h.n = 0
	}
}

func (l *live) chat(r *flow.Record) {
	ch, ok := r.Game.Msg.(*game.Chat)
	if !ok {
		return
	}
	sender := l.srv.byWireSlot(ch.SenderID)
	switch {
	case r.Dir == game.ClientToServer:
		sender = l
	case sender != nil:
		return // the server relaying a client's line: logged in the sender's session
	}
	name := ""
	switch {
	case sender != nil:
		name = sender.s.Name
	case ch.SenderID == 1:
		name = "host"
	}
	s := l.s
	if len(s.Chat) >= l.opts.MaxChat {
		s.ChatDropped++
		return
	}
	s.Chat = append(s.Chat, ChatLine{Time: r.Time, Frame: r.Frame, SenderID: ch.SenderID, Sender: name,
		Team: ch.Op == game.OpTeamChat, Text: ch.Text})
}

func (l *live) score(r *flow.Record) {
	srv := l.srv
	switch m := r.Game.Msg.(type) {
	case *game.ScoreChange:
		killer, victim := srv.byWireSlot(m.KillerID), srv.byWireSlot(m.VictimID)
		if m.KillerID != 0 && killer != nil {
			killer.s.Score.Kills, killer.s.Score.Score = m.KillerKills, m.KillerScore
		}
		if victim != nil {
			victim.s.Score.Deaths = m.VictimDeaths
		}
		for _, o := range m.Others {
			if p := srv.byWireSlot(o.PlayerID); p != nil {
				p.s.Score.Score = o.Score
			}
		}
		if srv.seenKill(killKey{m.KillerID, m.VictimID, m.VictimDeaths}) {
			return
		}
		if victim != nil && victim.flying {
			defer victim.shipLost(r, victim.current) // listed after the kill
		}
		// The sessions the kill is listed in; its text is made only
		// for one with room.
		to := [2]*live{killer, victim}
		switch {
		case killer == nil && victim == nil:
			to[0] = l
		case victim == killer:
			to[1] = nil
		}
		text := ""
		for _, o := range to {
			if o == nil || o.eventsFull() {
				continue
			}
			if text == "" {
				text = fmt.Sprintf("%s killed %s", playerName(killer, m.KillerID), playerName(victim, m.VictimID))
				if m.KillerID == 0 {
					text = playerName(victim, m.VictimID) + " died"
				}
			}
			o.event(r, EventKill, text)
		}
	case *game.Score:
		if p := srv.byWireSlot(m.PlayerID); p != nil {
			p.s.Score = Score{Kills: m.Kills, Deaths: m.Deaths, Score: m.Score}
		}
	case *game.ScoreInit:
		if p := srv.byWireSlot(m.PlayerID); p != nil {
			p.s.Score = Score{Kills: m.Kills, Deaths: m.Deaths, Score: m.Score}
			if m.Team != game.NoTeam {
				p.s.Team = int(m.Team)
			}
		}
	case *game.TeamMessage:
		if p := srv.byWireSlot(m.PlayerID); p != nil && m.Team != game.NoTeam {
			p.s.Team = int(m.Team)
		}
	}
}

func playerName(l *live, id int32) string {
	if l != nil && l.s.Name != "" {
		return fmt.Sprintf("%q", l.s.Name)
	}
	if id == 1 {
		return "host"
	}
	return fmt.Sprintf("player %d", id)
}

func (l *live) relay(r *flow.Record, p []byte, now stamp) {
	if len(p) == 0 {
		return
	}
	h := r.PayloadHash() // MessageHash(p): p is r.Payload, hashed once for every consumer
	if r.Dir == game.ClientToServer {
		l.srv.relay.put(h, l, now)
		return
	}
	var joined stamp
	if p := l.s.Phases.NewPlayer; p != nil {
		joined = stampOf(*p)
	}
	e := l.srv.relay.match(h, l, now, joined)
	if e == nil || e.src == nil { // (nil: a closed session's message, Relays.forget)
		return
	}
	if e.copies == 1 {
		e.src.s.Relay.Messages++
	}
	e.src.s.Relay.Copies++
	l.s.Relay.Received++
}
