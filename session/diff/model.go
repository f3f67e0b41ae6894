package diff

// The diff's own model of a capture: per session, the server's answers to
// each client message that drives the join (with the datagrams, flags and
// sequence numbers they travelled with), the traffic counts of the game
// itself, relaying, and what the per-side protocol checks found. It is
// built from flow records in one pass; only the answers are kept message by
// message, everything else is counted.

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/session"
	"github.com/bcwire/bcwire/session/measure"
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
	// Keepalive is the server's first keepalive (peer-info) to the client,
	// Keepalives the keepalives it sent (repeats of a sequence number
	// included: some servers send every keepalive under one number).
	Keepalive  *Msg
	Keepalives int
	// LegacyConnect is the frame of the client's connect when it came in
	// the legacy framing (0: none).
	LegacyConnect int
	// LegacyDisconnect is the frame of the client's disconnect when it
	// came as transport type 0x06 (0: none).
	LegacyDisconnect int

	// Info is the session package's view of the same session (phases,
	// reliability, keepalive cadence, StateUpdate rates); nil when none
	// matched.
	Info *session.Session

	open   *Step // the step whose answer is being collected
	others *Step // a disconnect step collecting what this client is sent
	// delivery follows reliable delivery by sender (direction index),
	// with the session package's engine, so that what diff counts once
	// is what stats counts once; fromStart says, by sender and channel,
	// that the first reliable message was seen with the connect.
	delivery  [2]session.Delivery
	fromStart [2][2]bool
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

// Capture is one capture file's sessions and what the per-side checks
// found in it.
type Capture struct {
	Name     string
	Sessions []*Session // in join order
	Findings []*Finding
	Records  int
	Damaged  int
	// Measures are the capture's wire measures (cadence per ship lane,
	// flag families, relay matrix, messages per datagram, ...), which the
	// stateupdate-rate, stateupdate-flags, relay and datagram-size rules
	// compare.
	Measures *measure.Measures
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
