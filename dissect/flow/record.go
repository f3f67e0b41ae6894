// This file holds the Record, what a Tracker emits for each transport
// message, GameSpy datagram or piece of damage, and its Kind: the one type
// every later stage (session, report, the commands) reads.

package flow

import (
	"net/netip"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/game"
)

// Kind says what a Record describes.
type Kind uint8

const (
	KindMessage Kind = iota // one transport message
	KindGameSpy             // one GameSpy datagram
	KindDamaged             // a datagram that could not be split (or the damaged rest of one)
	KindLost                // a fragmented message that never completed (reported at the end)
)

// Record is one line of dissection output. It and everything it points to
// are reused: copy what you keep.
type Record struct {
	Kind   Kind
	Frame  int // 1-based packet number in the capture
	Time   time.Time
	Src    netip.AddrPort
	Dst    netip.AddrPort
	Server netip.AddrPort // the flow's server endpoint
	Client netip.AddrPort // the flow's client endpoint
	Dir    game.Direction

	Peer uint8 // datagram byte 0
	// Epoch numbers the connection of the flow the datagram came on; it is
	// set with Server and Client for a decrypted datagram's records, 0 on
	// records made whole (GameSpy, lost fragment sets). No two flows, in
	// any Tracker of the process, share a non-zero Epoch, so records with
	// the same non-zero Epoch have the same Server and Client, which
	// consumers test with one comparison instead of two netip.AddrPort
	// ones.
	Epoch    uint32
	MsgIndex int // index of the message within its datagram
	MsgCount int // messages in the datagram

	Msg     *dissect.Message // KindMessage
	Control *dissect.Control // decoded payload of control messages (nil otherwise)

	// Game is set on the record that completes a game message: an unfragmented
	// type 0x32 message, or the last fragment of a reassembled one.
	Game        *game.Result
	Reassembled int // number of fragments the game message was rebuilt from (0 = not fragmented)
	// Payload is the game message Game was decoded from, opcode byte
	// first: the data message's payload, or the fragments' payloads joined
	// for a reassembled one. It is set with Game (or Lazy) and nil
	// without. Like the record, valid only during emit (a reassembled
	// payload is the Tracker's buffer, which the next reassembly
	// overwrites): copy it to keep it.
	Payload []byte
	// Lazy marks a StateUpdate the Tracker left undecoded for its consumer
	// to decode later, on any goroutine (Tracker.DeferStateUpdates): Game
	// is then nil, Payload is the message and LazyShip the ship class the
	// Tracker's decoder knew for its object, which LazyDecoder.Decode
	// needs to decode it as the Tracker would have.
	Lazy     bool
	LazyShip *game.ShipSpec

	// hash is PayloadHash's memory for this message, valid when hashState
	// is hashDone; the Tracker sets hashState to hashPending with Payload
	// and resetMessage clears it.
	hash      uint64
	hashState uint8

	// DuplicateFragment marks a fragment that was already held (a
	// retransmission); it adds nothing to reassembly.
	DuplicateFragment bool

	GameSpy *dissect.GameSpy // KindGameSpy
	// Master is set on the KindGameSpy records of the GameSpy master's TCP
	// list protocol (GameSpy then holds its text, empty for the list).
	Master *dissect.MasterMessage
	// TCP is the TCP segment the record's packet was (the GameSpy master's
	// list port); not Valid for UDP.
	TCP capture.TCPSegment

	Raw []byte // KindDamaged: the decrypted datagram
	// Datagram is the whole datagram the record came from, decrypted (as
	// received for GameSpy), for hex dumps (decode -x); like the record,
	// valid only during emit.
	Datagram []byte
	Err      error  // damage: framing error, lost fragments, a capture record that cannot be read
	Warning  string // odd but decodable content
	// NonStock is set on a message that is intact but not in stock's
	// form: a form of the registry (dissect.Forms), or unknown. It is
	// not damage. Like the record, valid only during emit.
	NonStock *dissect.NonStock
}

// resetMessage clears the fields that describe one message of a datagram,
// keeping the datagram's own.
func (r *Record) resetMessage(kind Kind, index int) {
	r.Kind, r.MsgIndex = kind, index
	r.Msg, r.Control, r.Game, r.Payload, r.GameSpy, r.Master = nil, nil, nil, nil, nil, nil
	r.Reassembled, r.DuplicateFragment, r.hashState, r.Lazy, r.LazyShip = 0, false, hashNone, false, nil
	r.Raw, r.Err, r.Warning, r.NonStock = nil, nil, "", nil
}

// IsConnectRequest reports whether r is a client's connect request, which
// starts a new connection on its flow whatever came before (a client that
// crashed and restarts connects again without a disconnect): the stock
// form, and the legacy [type][len:u8][flags:u8] framing a third-party
// client sends its connect in, whose payload has no stock layout.
func IsConnectRequest(r *Record) bool {
	if r.Dir != game.ClientToServer || r.Control == nil || r.Msg == nil {
		return false
	}
	switch r.Msg.Type {
	case dissect.TypeConnect, dissect.TypeConnectAck:
		return r.Control.Kind == "connect-request" || r.Msg.Legacy && r.Control.Kind == "raw"
	}
	return false
}
