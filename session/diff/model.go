package diff

// The diff's own model of a capture: per session, the server's answers to
// each client message that drives the join (with the datagrams, flags and
// sequence numbers they travelled with), the traffic counts of the game
// itself, relaying, and what the per-side protocol checks found. It is
// built from flow records in one pass; only the answers are kept message by
// message, everything else is counted.

import (
	"fmt"
	"hash/fnv"
	"net/netip"
	"sort"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/session"
)

// Phase is the part of a session a difference belongs to.
type Phase uint8

// Phases in the order a session goes through them.
const (
	PhaseHandshake  Phase = iota // connect and checksum rounds, up to Settings/GameInit
	PhaseLobby                   // new player in game, mission init, ship selection
	PhaseGameplay                // flying: from the player's first ship on
	PhaseDisconnect              // from the disconnect message on
)

var phaseNames = [...]string{"handshake", "lobby", "gameplay", "disconnect"}

func (p Phase) String() string {
	if int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return fmt.Sprintf("phase(%d)", uint8(p))
}

// MarshalText writes the phase's name.
func (p Phase) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// Msg is one transport message as the diff keeps it: its framing and a
// copy of its decoded content.
type Msg struct {
	Frame     int
	Index     int // place in its datagram (0-based)
	Time      time.Time
	Dir       game.Direction
	Type      dissect.TransportType
	Reliable  bool
	Ordered   bool
	Fragment  bool
	FragIndex uint8
	Seq       uint16
	AckFlags  uint8
	Game      game.Message     // data messages: a private copy
	Control   *dissect.Control // control messages: a private copy
}

// Name is what kind of message m is: the opcode name for game messages,
// the control kind, "ack", or the transport type.
func (m *Msg) Name() string {
	switch {
	case m.Game != nil:
		return m.Game.Opcode().String()
	case m.Type == dissect.TypeAck:
		return "ack"
	case m.Control != nil && m.Control.Kind != "raw":
		return m.Control.Kind
	}
	return m.Type.String()
}

// String is m's one-line form: frame, transport framing, decoded content.
func (m *Msg) String() string {
	s := fmt.Sprintf("frame %d: %s", m.Frame, m.Type)
	switch {
	case m.Type == dissect.TypeAck:
		s += fmt.Sprintf(" seq=%d flags=0x%02X", m.Seq, m.AckFlags)
		if m.AckFlags&dissect.AckFragment != 0 {
			s += fmt.Sprintf(" frag=%d", m.FragIndex)
		}
		return s
	case m.Reliable:
		s += fmt.Sprintf(" R seq=%d", m.Seq)
	}
	if m.Ordered {
		s += " O"
	}
	switch {
	case m.Game != nil:
		s += "  " + m.Game.Opcode().String()
		if t := m.Game.String(); t != "" {
			s += " " + t
		}
	case m.Control != nil:
		s += "  " + m.Control.String() // as decode prints it
	}
	return s
}

// Step is one client message that drives the join and the server's answer
// to it.
type Step struct {
	Key     string // "connect", "checksum round 0", "new player in game", "disconnect"
	Phase   Phase
	Trigger Msg
	// Reply is the server's answer to this client: its messages in order
	// (Frame tells the datagrams apart), without keepalives, StateUpdates,
	// relayed copies and ACKs of other messages.
	Reply    []Msg
	Answered bool
	Latency  time.Duration // trigger to first answer
	// Others is, for a disconnect, what the server sent the first other
	// client in the game; Receivers is how many other clients got
	// something.
	Others    []Msg
	Receivers int
	// LiveShips is, for "new player in game", the other players' ships
	// alive at the time (the ships a late joiner should be sent).
	LiveShips int

	trigCh    dissect.Channel
	trigSeq   uint16
	trigRel   bool
	first     time.Time
	deadline  time.Time
	othersTo  *Session
	oFirst    time.Time
	oDeadline time.Time
	reached   map[*Session]bool
}

// RelayTally counts one client's game messages of one opcode sent while
// other clients were in the game, and what the server did with them.
type RelayTally struct {
	Messages int // sent while at least one other client was in the game
	Relayed  int // forwarded unchanged to at least one other client
	Copies   int // forwarded copies
	Expected int // copies had every message gone to every other client in the game
}

// Session is one client's session as the diff sees it.
type Session struct {
	Index          int // join order, from 0
	Server, Client netip.AddrPort
	Start, End     time.Time
	// Times the session reached each step (zero when not seen).
	Connect, Lobby, NewPlayer, InGame, Disconnect time.Time

	Steps []*Step

	// RateStart and RateEnd bound the counts below: from the client's
	// NewPlayerInGame to its disconnect or last traffic.
	RateStart, RateEnd time.Time
	// Activity is the game messages (StateUpdates aside) that all clients
	// of the server sent in the rate window: what the server's own
	// messages, most of them answers to what players do, are measured
	// against.
	Activity int
	actStart int
	// Opcodes counts game messages by direction index (session.DirIndex)
	// and opcode; server-to-client counts leave out relayed copies (they
	// are in Relayed) and the server's answers to join steps (compared
	// step by step).
	Opcodes [2][256]int
	Relayed [256]int
	// Unsolicited counts the server's own game messages to this client
	// that answered nothing (outside every Step), StateUpdates aside.
	Unsolicited [256]int
	// Sent counts the server's own game messages to the client over the
	// whole session (relayed copies and StateUpdates aside), Received the
	// client's game messages; SentFrame and ReceivedFrame are the first
	// frames of each opcode.
	Sent, Received           [256]int
	SentFrame, ReceivedFrame [256]int
	SentPhase, ReceivedPhase [256]Phase
	// StateUpdate flag use by stream (see StateStreams): updates, and
	// updates carrying each bit; FlagFrame the first frame of each bit.
	StateUpdates [3]int
	StateFlags   [3][8]int
	FlagFrame    [3][8]int
	ownShips     map[game.ObjectID]bool
	// Relay is this client's messages by opcode and what the server did
	// with them.
	Relay [256]RelayTally
	// Keepalive is the server's first keepalive (peer-info) to the client.
	Keepalive *Msg

	// Info is the session package's view of the same session (phases,
	// reliability, keepalive cadence, StateUpdate rates); nil when none
	// matched.
	Info *session.Session

	open      *Step // the step whose answer is being collected
	others    *Step // a disconnect step collecting what this client is sent
	pend      map[pendKey]pendVal
	acked     map[pendKey]bool
	ackedRing []pendKey
	ackedNext int
	seq       [2][2]seqTrack
	ackUse    map[ackUseKey]*usage
	ended     bool
	srv       *serverState
	anyData   bool
}

// RateMinutes is the length of the rate window in minutes.
func (s *Session) RateMinutes() float64 {
	if s.RateStart.IsZero() || !s.RateEnd.After(s.RateStart) {
		return 0
	}
	return s.RateEnd.Sub(s.RateStart).Minutes()
}

// PhaseAt is the phase the session was in at t.
func (s *Session) PhaseAt(t time.Time) Phase {
	switch {
	case !s.Disconnect.IsZero() && !t.Before(s.Disconnect):
		return PhaseDisconnect
	case !s.InGame.IsZero() && !t.Before(s.InGame):
		return PhaseGameplay
	case !s.Lobby.IsZero() && !t.Before(s.Lobby):
		return PhaseLobby
	}
	return PhaseHandshake
}

// Step returns the step with key, or nil.
func (s *Session) Step(key string) *Step {
	for _, st := range s.Steps {
		if st.Key == key {
			return st
		}
	}
	return nil
}

// StateStreams name the three streams of StateUpdates whose flags are
// compared: the server sends other fields about a client's own ship than
// about the others.
var StateStreams = [3]string{"C->S", "S->C about the client's own ship", "S->C about other ships"}

type pendKey struct {
	dir  int // direction index of the sender
	ch   dissect.Channel
	seq  uint16
	frag int16 // -1 for a whole message
}

type pendVal struct {
	at    time.Time
	frame int
}

type seqTrack struct {
	started   bool
	first     uint16
	max       uint16
	firstAt   int
	gaps      int
	gapFrame  int
	fromStart bool // the session's connect was seen
}

type ackUseKey struct {
	dir int    // direction index of the ACK's sender
	cat string // "control", "data", "fragment"
}

type usage struct {
	flags map[uint8]int
	frame map[uint8]int
}

// Capture is one capture file's sessions and what the per-side checks
// found in it.
type Capture struct {
	Name     string
	Sessions []*Session // in join order
	Findings []*Finding
	Records  int
	Damaged  int
}

// Finding is something a capture shows on its own, without a reference: a
// protocol rule broken, a non-stock framing, messages never ACKed.
type Finding struct {
	Key      string
	Kind     string
	Phase    Phase
	Severity Severity
	Summary  string
	Detail   []string
	Frames   []int
	Count    int // occurrences
	Sessions int // sessions it occurred in
	seen     map[*Session]bool
}

type serverState struct {
	activity int // client game messages but StateUpdates, in rate windows
	sessions []*Session
	recent   map[uint64][]*sent
	queue    []*sent
	ships    map[game.ObjectID]*Session
}

type sent struct {
	hash     uint64
	from     *Session
	op       game.Opcode
	at       time.Time
	copies   int
	to       map[*Session]bool
	eligible int
}

type flowKey struct{ server, client netip.AddrPort }

// Builder builds a Capture from the records of one capture file. Feed it
// every record with Add (and, optionally, the session package's sessions
// with AddSession), then call Finish.
type Builder struct {
	rules    *Rules
	name     string
	flows    map[flowKey]*Session
	all      []*Session
	servers  map[netip.AddrPort]*serverState
	infos    []*session.Session
	findings map[string]*Finding
	records  int
	damaged  int
	buf      []byte
}

// NewBuilder returns a Builder for the capture called name.
func NewBuilder(name string, r *Rules) *Builder {
	return &Builder{rules: r, name: name, flows: map[flowKey]*Session{},
		servers: map[netip.AddrPort]*serverState{}, findings: map[string]*Finding{}}
}

// Read builds a Capture from src, running the flow tracker and the
// session builder itself.
func Read(name string, src flow.Source, servers []netip.AddrPort, r *Rules) (*Capture, error) {
	b := NewBuilder(name, r)
	sb := session.NewBuilder(session.Options{}, b.AddSession)
	_, err := flow.Run(src, flow.New(flow.Options{Servers: servers}), func(rec *flow.Record) bool {
		sb.Add(rec)
		b.Add(rec)
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	sb.Finish()
	return b.Finish(), nil
}

// AddSession hands the Builder one of the session package's sessions of
// the same capture; Finish pairs it with the diff's own.
func (b *Builder) AddSession(s *session.Session) { b.infos = append(b.infos, s) }

func dirIndex(d game.Direction) int { return session.DirIndex(d) }

func (b *Builder) server(ep netip.AddrPort) *serverState {
	sv := b.servers[ep]
	if sv == nil {
		sv = &serverState{recent: map[uint64][]*sent{}, ships: map[game.ObjectID]*Session{}}
		b.servers[ep] = sv
	}
	return sv
}

func (b *Builder) newSession(k flowKey, at time.Time) *Session {
	s := &Session{Server: k.server, Client: k.client, Start: at, End: at,
		pend: map[pendKey]pendVal{}, ackUse: map[ackUseKey]*usage{}, srv: b.server(k.server)}
	b.flows[k] = s
	b.all = append(b.all, s)
	s.srv.sessions = append(s.srv.sessions, s)
	return s
}

// Add consumes one record. r is not retained.
func (b *Builder) Add(r *flow.Record) {
	b.records++
	if r.Err != nil {
		b.damaged++
	}
	if r.Kind == flow.KindGameSpy || !r.Client.IsValid() || !r.Server.IsValid() {
		return
	}
	d := dirIndex(r.Dir)
	if d < 0 {
		return
	}
	k := flowKey{r.Server, r.Client}
	s := b.flows[k]
	connect := r.Kind == flow.KindMessage && r.Dir == game.ClientToServer && r.Control != nil && r.Control.Kind == "connect-request"
	if s == nil || (connect && !s.Connect.IsZero() && s.Step("connect") != nil && !isRetransmit(s, r)) {
		if s != nil {
			b.endSession(s, r.Time)
		}
		s = b.newSession(k, r.Time)
	}
	s.End = r.Time
	b.expire(s.srv, r.Time)
	if r.Kind == flow.KindDamaged || r.Kind == flow.KindLost {
		b.anomaly(s, r, "damaged", "damaged datagrams or lost fragments", Major, Minor)
		return
	}
	m := r.Msg
	if m == nil {
		return
	}
	if m.Legacy {
		b.anomaly(s, r, "legacy-framing", "messages in the legacy [type][len:u8][flags:u8] framing", Major, Minor)
	}
	if !m.Type.Known() {
		b.anomaly(s, r, fmt.Sprintf("unknown-transport-0x%02X", uint8(m.Type)),
			fmt.Sprintf("messages of unknown transport type 0x%02X", uint8(m.Type)), Major, Minor)
	}
	if r.Game != nil && r.Game.Err != nil {
		b.anomaly(s, r, "decode-error", "game messages that do not decode as their opcode's layout", Major, Minor)
	}
	b.closeExpired(s, r.Time)
	if r.Dir == game.ClientToServer && s.open != nil && !s.open.first.IsZero() && r.Frame != s.open.Trigger.Frame {
		s.open = nil // the answer is what the server sent before hearing from the client again
	}

	if m.Type == dissect.TypeAck {
		b.ack(s, r, d)
		return
	}
	if m.Reliable && !b.reliable(s, r, d) {
		return // a retransmission: everything about it was counted the first time
	}
	if r.Dir == game.ClientToServer {
		b.fromClient(s, r, d, connect)
	} else {
		b.toClient(s, r, d)
	}
}

// isRetransmit reports whether r repeats the connect request that opened s.
func isRetransmit(s *Session, r *flow.Record) bool {
	st := s.Step("connect")
	return st != nil && r.Msg != nil && r.Msg.Reliable && st.trigRel && r.Msg.Seq == st.trigSeq &&
		r.Time.Sub(st.Trigger.Time) < 30*time.Second && s.Lobby.IsZero()
}

func (b *Builder) anomaly(s *Session, r *flow.Record, kind, what string, serverSev, clientSev Severity) {
	sev, side := serverSev, "server"
	if r.Dir == game.ClientToServer {
		sev, side = clientSev, "client"
	}
	b.find(s, Finding{Key: kind + " " + r.Dir.String(), Kind: kind, Phase: s.PhaseAt(r.Time), Severity: sev,
		Summary: fmt.Sprintf("%s from the %s (%s)", what, side, r.Dir)}, r.Frame, errText(r))
}

func errText(r *flow.Record) string {
	if r.Err != nil {
		return fmt.Sprintf("frame %d: %v", r.Frame, r.Err)
	}
	return ""
}

// find records one occurrence of a finding.
func (b *Builder) find(s *Session, f Finding, frame int, detail string) {
	g := b.findings[f.Key]
	if g == nil {
		g = &f
		g.seen = map[*Session]bool{}
		b.findings[f.Key] = g
	}
	g.Count++
	if s != nil && !g.seen[s] {
		g.seen[s] = true
		g.Sessions++
	}
	if frame > 0 && len(g.Frames) < maxFrames {
		g.Frames = append(g.Frames, frame)
	}
	if detail != "" && len(g.Detail) < maxDetail {
		g.Detail = append(g.Detail, detail)
	}
}

const (
	maxFrames = 8
	maxDetail = 6
)

func (b *Builder) msg(r *flow.Record) Msg {
	m := r.Msg
	out := Msg{Frame: r.Frame, Index: r.MsgIndex, Time: r.Time, Dir: r.Dir, Type: m.Type, Reliable: m.Reliable,
		Ordered: m.Ordered, Fragment: m.Fragment, FragIndex: m.FragIndex, Seq: m.Seq, AckFlags: m.AckFlags}
	if m.Type == dissect.TypeAck {
		out.FragIndex = m.AckFragIndex
	}
	if r.Control != nil {
		c := *r.Control
		if c.Slot != nil {
			v := *c.Slot
			c.Slot = &v
		}
		c.Reserved = append([]byte(nil), c.Reserved...)
		c.Extra = append([]byte(nil), c.Extra...)
		out.Control = &c
	}
	if r.Game != nil {
		p := append([]byte(nil), b.payload(r)...)
		// A fresh decoder's message is not reused by anyone: a copy.
		res := game.NewDecoder().Decode(p, r.Dir)
		out.Game = res.Msg
	}
	return out
}

// payload is the bytes of r's game message.
func (b *Builder) payload(r *flow.Record) []byte {
	if r.Reassembled == 0 && r.Msg != nil && r.Msg.Type == dissect.TypeData && !r.Msg.Fragment {
		return r.Msg.Payload
	}
	b.buf = r.Game.Msg.Append(b.buf[:0])
	return b.buf
}

func (b *Builder) fromClient(s *Session, r *flow.Record, d int, connect bool) {
	m := r.Msg
	switch {
	case connect:
		if s.Connect.IsZero() {
			s.Connect = r.Time
		}
		b.trigger(s, r, "connect", PhaseHandshake)
	case m.Type == dissect.TypeDisconnect:
		if s.Disconnect.IsZero() {
			s.Disconnect = r.Time
			b.stopRates(s, r.Time)
		}
		if st := b.trigger(s, r, "disconnect", PhaseDisconnect); st != nil {
			b.dropShips(s)
			st.oDeadline = r.Time.Add(time.Duration(b.rules.ReplyWindow))
			st.reached = map[*Session]bool{}
			for _, o := range s.srv.sessions {
				if o != s && !o.ended && !o.NewPlayer.IsZero() && o.Disconnect.IsZero() {
					o.others = st
				}
			}
		}
	}
	if r.Game == nil {
		return
	}
	g := r.Game.Msg
	op := g.Opcode()
	s.anyData = true
	if s.Received[op] == 0 {
		s.ReceivedFrame[op] = r.Frame
		s.ReceivedPhase[op] = s.PhaseAt(r.Time)
	}
	s.Received[op]++
	switch op {
	case game.OpChecksumResponse:
		if c, ok := g.(*game.ChecksumResponse); ok {
			b.trigger(s, r, "checksum round "+c.Round.String(), PhaseHandshake)
		}
	case game.OpNewPlayerInGame:
		if s.NewPlayer.IsZero() {
			s.NewPlayer = r.Time
			s.RateStart = r.Time
			s.actStart = s.srv.activity
		}
		if st := b.trigger(s, r, "new player in game", PhaseLobby); st != nil {
			for _, owner := range s.srv.ships {
				if owner != s && !owner.ended {
					st.LiveShips++
				}
			}
		}
	case game.OpObjCreate, game.OpObjCreateTeam:
		if oc, ok := g.(*game.ObjCreate); ok && oc.Class == game.ClassShip {
			if s.InGame.IsZero() {
				s.InGame = r.Time
			}
			s.srv.ships[oc.Object] = s
			if s.ownShips == nil {
				s.ownShips = map[game.ObjectID]bool{}
			}
			s.ownShips[oc.Object] = true
		}
	case game.OpStateUpdate:
		b.stateFlags(s, r, d)
	}
	if b.counting(s, r.Time) {
		s.Opcodes[d][op]++
		if op != game.OpStateUpdate {
			s.srv.activity++
		}
		if n := b.othersInGame(s); n > 0 {
			b.remember(s, r, op, n)
		}
	}
}

func (b *Builder) toClient(s *Session, r *flow.Record, d int) {
	m := r.Msg
	if m.Type == dissect.TypeDisconnect || m.Type == dissect.TypeBoot {
		if s.Disconnect.IsZero() {
			s.Disconnect = r.Time
			b.stopRates(s, r.Time)
			b.dropShips(s)
		}
	}
	if r.Control != nil && r.Control.Kind == "peer-info" {
		if s.Keepalive == nil {
			k := b.msg(r)
			s.Keepalive = &k
		}
		return
	}
	if r.Game == nil {
		if m.Type != dissect.TypeData { // control answers: slot assignment, boot
			b.answer(s, r)
		}
		return
	}
	g := r.Game.Msg
	op := g.Opcode()
	switch op {
	case game.OpChecksumComplete, game.OpSettings, game.OpGameInit:
		if s.Lobby.IsZero() {
			s.Lobby = r.Time
		}
	case game.OpDestroyObject:
		if do, ok := g.(*game.DestroyObject); ok {
			delete(s.srv.ships, do.Object)
		}
	case game.OpStateUpdate:
		b.stateFlags(s, r, d)
		if b.counting(s, r.Time) {
			s.Opcodes[d][op]++
		}
		return
	}
	if b.relayCopy(s, r) {
		if b.counting(s, r.Time) {
			s.Relayed[op]++
		}
		return
	}
	if s.Sent[op] == 0 {
		s.SentFrame[op] = r.Frame
		s.SentPhase[op] = s.PhaseAt(r.Time)
	}
	s.Sent[op]++
	// Answers are compared step by step; the rates are of the rest, which
	// follows the game rather than the joins and leaves.
	if !b.answer(s, r) {
		s.Unsolicited[op]++
		if b.counting(s, r.Time) {
			s.Opcodes[d][op]++
		}
	}
}

// counting reports whether t is inside s's rate window.
func (b *Builder) counting(s *Session, t time.Time) bool {
	return !s.RateStart.IsZero() && !t.Before(s.RateStart) && (s.Disconnect.IsZero() || t.Before(s.Disconnect))
}

func (b *Builder) stopRates(s *Session, t time.Time) {
	if !s.RateStart.IsZero() && s.RateEnd.IsZero() {
		s.RateEnd = t
		s.Activity = s.srv.activity - s.actStart
	}
}

func (b *Builder) dropShips(s *Session) {
	for id, owner := range s.srv.ships {
		if owner == s {
			delete(s.srv.ships, id)
		}
	}
}

func (b *Builder) othersInGame(s *Session) int {
	n := 0
	for _, o := range s.srv.sessions {
		if o != s && !o.ended && !o.NewPlayer.IsZero() && o.Disconnect.IsZero() {
			n++
		}
	}
	return n
}

func (b *Builder) stateFlags(s *Session, r *flow.Record, d int) {
	su, ok := r.Game.Msg.(*game.StateUpdate)
	if !ok {
		return
	}
	if d == 1 && !s.ownShips[su.Object] {
		d = 2
	}
	s.StateUpdates[d]++
	for bit := 0; bit < 8; bit++ {
		if su.Flags&(1<<bit) != 0 {
			if s.StateFlags[d][bit] == 0 {
				s.FlagFrame[d][bit] = r.Frame
			}
			s.StateFlags[d][bit]++
		}
	}
	if r.Dir == game.ServerToClient && su.Flags&game.StateWeapons != 0 {
		b.find(s, Finding{Key: "stateupdate-flags S->C 0x80", Kind: "stateupdate-flags", Phase: s.PhaseAt(r.Time),
			Severity: Major, Summary: "server-to-client StateUpdates carry the weapons flag 0x80 (stock never sends it)"}, r.Frame, "")
	}
	if r.Dir == game.ClientToServer && su.Flags&game.StateSubsystems != 0 {
		b.find(s, Finding{Key: "stateupdate-flags C->S 0x20", Kind: "stateupdate-flags", Phase: s.PhaseAt(r.Time),
			Severity: Minor, Summary: "client-to-server StateUpdates carry the subsystem flag 0x20 (stock clients never send it)"}, r.Frame, "")
	}
}

// trigger opens the step key on s, unless it is already open (the client
// sent the message again).
func (b *Builder) trigger(s *Session, r *flow.Record, key string, ph Phase) *Step {
	if s.Step(key) != nil {
		return nil
	}
	st := &Step{Key: key, Phase: ph, Trigger: b.msg(r), trigCh: r.Msg.Type.Channel(), trigSeq: r.Msg.Seq,
		trigRel: r.Msg.Reliable, deadline: r.Time.Add(time.Duration(b.rules.ReplyWindow))}
	s.Steps = append(s.Steps, st)
	s.open = st
	return st
}

// closeExpired ends the collection of answers whose time is up.
func (b *Builder) closeExpired(s *Session, t time.Time) {
	if s.open != nil && t.After(s.open.deadline) {
		s.open = nil
	}
	if s.others != nil && t.After(s.others.oDeadline) {
		s.others = nil
	}
}

// answer adds r to the step s is answering, or to the disconnect step of
// another client, and reports whether it did.
func (b *Builder) answer(s *Session, r *flow.Record) bool {
	if st := s.open; st != nil {
		if st.first.IsZero() {
			st.first = r.Time
			st.Answered = true
			st.Latency = r.Time.Sub(st.Trigger.Time)
			st.deadline = r.Time.Add(time.Duration(b.rules.ReplyBurst))
		}
		if len(st.Reply) < maxReply {
			st.Reply = append(st.Reply, b.msg(r))
		}
		return true
	}
	if st := s.others; st != nil && r.Game != nil {
		if st.oFirst.IsZero() {
			st.oFirst = r.Time
			st.oDeadline = r.Time.Add(time.Duration(b.rules.ReplyBurst))
		}
		if !st.reached[s] {
			st.reached[s] = true
			st.Receivers++
		}
		if st.othersTo == nil {
			st.othersTo = s
		}
		if st.othersTo == s && len(st.Others) < maxReply {
			st.Others = append(st.Others, b.msg(r))
		}
		return true
	}
	return false
}

const maxReply = 64

func (b *Builder) ack(s *Session, r *flow.Record, d int) {
	m := r.Msg
	ch := m.AckChannel()
	frag := int16(-1)
	if m.AckFlags&dissect.AckFragment != 0 {
		frag = int16(m.AckFragIndex)
	}
	// The ACKed message was sent the other way. Try the channel and
	// fragment the flags name first, then the other channel (the flags may
	// be wrong), then the whole message.
	var k pendKey
	ok := false
	for _, c := range []pendKey{{1 - d, ch, m.Seq, frag}, {1 - d, 1 - ch, m.Seq, frag},
		{1 - d, ch, m.Seq, -1}, {1 - d, 1 - ch, m.Seq, -1}} {
		if _, ok = s.pend[c]; ok {
			k = c
			break
		}
	}
	if !ok {
		// A repeated ACK, or one of a message sent before the capture.
		if r.Dir == game.ServerToClient && s.open != nil && s.open.trigRel && m.Seq == s.open.trigSeq {
			b.answer(s, r)
		}
		return
	}
	delete(s.pend, k)
	s.rememberAcked(k)
	cat := "data"
	switch {
	case k.ch == dissect.ChannelControl:
		cat = "control"
	case k.frag >= 0:
		cat = "fragment"
	}
	u := s.ackUse[ackUseKey{d, cat}]
	if u == nil {
		u = &usage{flags: map[uint8]int{}, frame: map[uint8]int{}}
		s.ackUse[ackUseKey{d, cat}] = u
	}
	if u.flags[m.AckFlags] == 0 {
		u.frame[m.AckFlags] = r.Frame
	}
	u.flags[m.AckFlags]++
	if r.Dir == game.ServerToClient && s.open != nil && s.open.trigRel && k.ch == s.open.trigCh && m.Seq == s.open.trigSeq {
		b.answer(s, r)
	}
}

// reliable tracks a reliable message until its ACK and reports whether it
// is new (not a retransmission).
func (b *Builder) reliable(s *Session, r *flow.Record, d int) bool {
	m := r.Msg
	ch := m.Type.Channel()
	k := pendKey{d, ch, m.Seq, -1}
	if m.Fragment {
		k.frag = int16(m.FragIndex)
	}
	if _, ok := s.pend[k]; ok {
		return false
	}
	if s.seenSeq(k) {
		return false // sent again after its ACK (the ACK was lost)
	}
	s.pend[k] = pendVal{at: r.Time, frame: r.Frame}
	if m.Fragment && m.FragIndex != 0 {
		return true
	}
	t := &s.seq[d][ch]
	switch {
	case !t.started:
		t.started, t.first, t.max, t.firstAt = true, m.Seq, m.Seq, r.Frame
		t.fromStart = !s.Connect.IsZero() || (r.Dir == game.ClientToServer && r.Control != nil && r.Control.Kind == "connect-request")
	case m.Seq == t.max+1:
		t.max = m.Seq
	case m.Seq-t.max < 0x8000 && m.Seq != t.max:
		if t.gaps == 0 {
			t.gapFrame = r.Frame
		}
		t.gaps++
		t.max = m.Seq
	}
	return true
}

// ackedMemory is how many ACKed messages a session remembers, to know a
// copy sent again after its ACK.
const ackedMemory = 1024

func (s *Session) seenSeq(k pendKey) bool { return s.acked[k] }

func (s *Session) rememberAcked(k pendKey) {
	if s.acked == nil {
		s.acked = map[pendKey]bool{}
		s.ackedRing = make([]pendKey, 0, ackedMemory)
	}
	if len(s.ackedRing) == ackedMemory {
		delete(s.acked, s.ackedRing[s.ackedNext])
		s.ackedRing[s.ackedNext] = k
		s.ackedNext = (s.ackedNext + 1) % ackedMemory
	} else {
		s.ackedRing = append(s.ackedRing, k)
	}
	s.acked[k] = true
}

// remember keeps a client's game message for relay matching.
func (b *Builder) remember(s *Session, r *flow.Record, op game.Opcode, eligible int) {
	h := hashBytes(b.payload(r))
	e := &sent{hash: h, from: s, op: op, at: r.Time, eligible: eligible}
	s.srv.recent[h] = append(s.srv.recent[h], e)
	s.srv.queue = append(s.srv.queue, e)
}

// relayCopy reports whether r, a game message to s, is a copy of another
// client's recent message.
func (b *Builder) relayCopy(s *Session, r *flow.Record) bool {
	h := hashBytes(b.payload(r))
	for _, e := range s.srv.recent[h] {
		if e.from == s || (e.to != nil && e.to[s]) {
			continue
		}
		if r.Time.Sub(e.at) > time.Duration(b.rules.RelayWindow) {
			continue
		}
		if e.to == nil {
			e.to = map[*Session]bool{}
		}
		e.to[s] = true
		e.copies++
		return true
	}
	return false
}

// expire tallies and forgets client messages older than the relay window.
func (b *Builder) expire(sv *serverState, now time.Time) {
	w := time.Duration(b.rules.RelayWindow)
	n := 0
	for _, e := range sv.queue {
		if now.Sub(e.at) <= w {
			break
		}
		b.tally(sv, e)
		n++
	}
	if n > 0 {
		copy(sv.queue, sv.queue[n:])
		for i := len(sv.queue) - n; i < len(sv.queue); i++ {
			sv.queue[i] = nil
		}
		sv.queue = sv.queue[:len(sv.queue)-n]
	}
}

func (b *Builder) tally(sv *serverState, e *sent) {
	t := &e.from.Relay[e.op]
	t.Messages++
	if e.copies > 0 {
		t.Relayed++
	}
	t.Copies += e.copies
	t.Expected += e.eligible
	list := sv.recent[e.hash]
	for i, x := range list {
		if x == e {
			list = append(list[:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(sv.recent, e.hash)
	} else {
		sv.recent[e.hash] = list
	}
}

func hashBytes(p []byte) uint64 {
	h := fnv.New64a()
	h.Write(p)
	return h.Sum64()
}

func (b *Builder) endSession(s *Session, t time.Time) {
	if s.ended {
		return
	}
	s.ended = true
	s.open, s.others = nil, nil
	b.stopRates(s, s.End)
	b.dropShips(s)
	b.checkSession(s)
}

// Finish ends every session and returns the capture.
func (b *Builder) Finish() *Capture {
	for _, sv := range b.servers {
		for _, e := range sv.queue {
			b.tally(sv, e)
		}
		sv.queue = nil
	}
	for _, s := range b.all {
		b.endSession(s, s.End)
	}
	b.pair()
	c := &Capture{Name: b.name, Records: b.records, Damaged: b.damaged}
	for _, s := range b.all {
		if s.Connect.IsZero() && !s.anyData && len(s.Steps) == 0 {
			continue // stray packets of a session that ended before the capture
		}
		c.Sessions = append(c.Sessions, s)
	}
	sort.SliceStable(c.Sessions, func(i, j int) bool { return joinTime(c.Sessions[i]).Before(joinTime(c.Sessions[j])) })
	for i, s := range c.Sessions {
		s.Index = i
	}
	for _, f := range b.findings {
		c.Findings = append(c.Findings, f)
	}
	sort.Slice(c.Findings, func(i, j int) bool { return c.Findings[i].Key < c.Findings[j].Key })
	return c
}

func joinTime(s *Session) time.Time {
	if !s.Connect.IsZero() {
		return s.Connect
	}
	return s.Start
}

// pair attaches each session package session to the diff session of the
// same flow that started closest to it.
func (b *Builder) pair() {
	for _, info := range b.infos {
		var best *Session
		var bestD time.Duration
		for _, s := range b.all {
			if s.Client != info.Client || s.Server != info.Server || s.Info != nil {
				continue
			}
			d := s.Start.Sub(info.Start)
			if d < 0 {
				d = -d
			}
			if best == nil || d < bestD {
				best, bestD = s, d
			}
		}
		if best != nil {
			best.Info = info
		}
	}
}

// checkSession runs the per-session protocol checks once it has ended.
func (b *Builder) checkSession(s *Session) {
	grace := time.Duration(b.rules.AckGrace)
	type unacked struct {
		n, frame int
	}
	var un [2][2]unacked
	for k, v := range s.pend {
		if s.End.Sub(v.at) < grace {
			continue
		}
		u := &un[k.dir][k.ch]
		if u.n == 0 || v.frame < u.frame {
			u.frame = v.frame
		}
		u.n++
	}
	for d := 0; d < 2; d++ {
		for ch := 0; ch < 2; ch++ {
			if u := un[d][ch]; u.n > 0 {
				dir := session.Dirs[d]
				sev := Major // the server did not ACK a client's message
				if dir == game.ServerToClient {
					sev = Minor
				}
				b.find(s, Finding{Key: fmt.Sprintf("unacked %s %s", dir, dissect.Channel(ch)), Kind: "unacked",
					Phase: PhaseGameplay, Severity: sev,
					Summary: fmt.Sprintf("reliable %s messages on the %s channel never ACKed", dir, dissect.Channel(ch))},
					u.frame, fmt.Sprintf("%s: %d never ACKed, first in frame %d", s.Client, u.n, u.frame))
			}
		}
	}
	for d := 0; d < 2; d++ {
		dir := session.Dirs[d]
		sev := Major
		if dir == game.ClientToServer {
			sev = Minor
		}
		for ch := 0; ch < 2; ch++ {
			t := s.seq[d][ch]
			if t.started && t.fromStart && t.first != 0 {
				b.find(s, Finding{Key: fmt.Sprintf("seq-start %s %s", dir, dissect.Channel(ch)), Kind: "sequence",
					Phase: PhaseHandshake, Severity: sev,
					Summary: fmt.Sprintf("%s reliable messages on the %s channel are numbered from %d (stock starts at 0)", dir, dissect.Channel(ch), t.first)},
					t.firstAt, "")
			}
			if t.gaps > 0 && dir == game.ServerToClient {
				b.find(s, Finding{Key: fmt.Sprintf("seq-gaps %s %s", dir, dissect.Channel(ch)), Kind: "sequence",
					Phase: s.PhaseAt(s.Start), Severity: sev,
					Summary: fmt.Sprintf("%s sequence numbers on the %s channel skip values (captured at the server, so the server skipped them)", dir, dissect.Channel(ch))},
					t.gapFrame, fmt.Sprintf("%s: %d gaps", s.Client, t.gaps))
			}
		}
	}
	if st := s.Step("new player in game"); st != nil && st.Answered {
		n := 0
		for i := range st.Reply {
			if g := st.Reply[i].Game; g != nil && (g.Opcode() == game.OpObjCreate || g.Opcode() == game.OpObjCreateTeam) {
				n++
			}
		}
		if n < st.LiveShips {
			b.find(s, Finding{Key: "replication", Kind: "replication", Phase: PhaseLobby, Severity: Major,
				Summary: "late joiners are not sent an ObjCreate for every ship already in play"},
				st.Trigger.Frame, fmt.Sprintf("%s: %d ObjCreate for %d live ships", s.Client, n, st.LiveShips))
		}
	}
	want := map[string]uint8{"control": dissect.AckControl, "data": 0, "fragment": dissect.AckFragment}
	keys := make([]ackUseKey, 0, len(s.ackUse))
	for k := range s.ackUse {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].dir != keys[j].dir {
			return keys[i].dir < keys[j].dir
		}
		return keys[i].cat < keys[j].cat
	})
	for _, k := range keys {
		u := s.ackUse[k]
		dir := session.Dirs[k.dir]
		sev := Major
		if dir == game.ClientToServer {
			sev = Minor
		}
		for f, n := range u.flags {
			if f == want[k.cat] {
				continue
			}
			b.find(s, Finding{Key: fmt.Sprintf("ack-flags %s %s 0x%02X", dir, k.cat, f), Kind: "ack-flags",
				Phase: PhaseHandshake, Severity: sev,
				Summary: fmt.Sprintf("%s ACKs of %s messages carry flags 0x%02X (stock 0x%02X)", dir, k.cat, f, want[k.cat])},
				u.frame[f], fmt.Sprintf("%s: %d ACKs", s.Client, n))
		}
	}
}
