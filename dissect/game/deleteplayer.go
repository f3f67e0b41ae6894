package game

import (
	"fmt"

	"github.com/bcwire/bcwire/dissect"
)

// DeletePlayerUI (0x17) carries a serialized player-list event to a client's
// engine. Despite its name the host sends it both when a player joins
// (event ET_NEW_PLAYER_IN_GAME, adding the player to the engine's player
// list that the scoreboard reads) and when one leaves (event
// ET_NETWORK_PLAYER_REMOVED, removing it). Layout, 18 bytes: the event
// class (u32, always DeletePlayerEvent 0x00000866), the event code (u32),
// source and destination object ids (u32; the source is 0 in every trace,
// the destination a session-specific object), then the player's wire peer
// id (u8: host 1, clients 2 and up). An event of another class has another
// body; it is left undecoded after the 16-byte header.
type DeletePlayerUI struct {
	Class  EventClass `json:"class"`
	Code   EventCode  `json:"code"`
	Source ObjectID   `json:"source"`
	Target ObjectID   `json:"target"`
	// Peer is on the wire only for the DeletePlayerEvent class.
	Peer uint8 `json:"peer"`
}

// NewDeletePlayerUI returns the stock DeletePlayerUI for player peer: code
// ETNewPlayerInGame when the player joins, ETNetworkPlayerRemoved when it
// leaves.
func NewDeletePlayerUI(code EventCode, target ObjectID, peer uint8) *DeletePlayerUI {
	return &DeletePlayerUI{Class: EventClassDeletePlayer, Code: code, Target: target, Peer: peer}
}

func init() { register(OpDeletePlayerUI, func() Message { return new(DeletePlayerUI) }) }

func (m *DeletePlayerUI) Opcode() Opcode { return OpDeletePlayerUI }

func (m *DeletePlayerUI) decode(r *dissect.Reader, _ *Context) {
	*m = DeletePlayerUI{}
	m.Class = EventClass(r.U32("event class"))
	m.Code = EventCode(r.U32("event code"))
	m.Source = readID(r, "source object")
	m.Target = readID(r, "destination object")
	if m.Class == EventClassDeletePlayer {
		m.Peer = r.U8("peer id")
	}
}

func (m *DeletePlayerUI) Append(b []byte) []byte {
	w := dissect.NewWriter(append(b, byte(OpDeletePlayerUI)))
	w.U32(uint32(m.Class))
	w.U32(uint32(m.Code))
	appendID(w, m.Source)
	appendID(w, m.Target)
	if m.Class == EventClassDeletePlayer {
		w.U8(m.Peer)
	}
	return w.Bytes()
}

func (m *DeletePlayerUI) warning() string {
	if m.Class != EventClassDeletePlayer {
		return fmt.Sprintf("event class %s is not DeletePlayerEvent (0x00000866); the body after the event header is left undecoded", m.Class)
	}
	if m.Code != ETNewPlayerInGame && m.Code != ETNetworkPlayerRemoved {
		return fmt.Sprintf("event code %s is neither the join (0x008000F1) nor the leave (0x00060005) code stock hosts send", m.Code)
	}
	return ""
}

func (m *DeletePlayerUI) String() string {
	s := fmt.Sprintf("class=%s code=%s source=%s target=%s", m.Class, m.Code, m.Source, m.Target)
	if m.Class == EventClassDeletePlayer {
		s += fmt.Sprintf(" peer=%d", m.Peer)
	}
	return s
}

// DeletePlayerAnim (0x18) makes clients show the floating "player has left"
// notice; the host sends it after DestroyObject and DeletePlayerUI when a
// player disconnects. Layout: the player's name with a u16 length prefix
// (no terminator). No stock trace has captured one.
type DeletePlayerAnim struct {
	Name string `json:"name"`
}

func init() { register(OpDeletePlayerAnim, func() Message { return new(DeletePlayerAnim) }) }

func (m *DeletePlayerAnim) Opcode() Opcode { return OpDeletePlayerAnim }

func (m *DeletePlayerAnim) decode(r *dissect.Reader, ctx *Context) {
	m.Name = ctx.str(r.String16("player name"))
}

// Append encodes m; a name longer than 65535 bytes is cut.
func (m *DeletePlayerAnim) Append(b []byte) []byte {
	w := dissect.NewWriter(append(b, byte(OpDeletePlayerAnim)))
	w.String16([]byte(m.Name))
	return w.Bytes()
}

func (m *DeletePlayerAnim) String() string { return fmt.Sprintf("name=%q", m.Name) }
