package synth

import (
	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
)

// Quirks make the simulated server deviate from the stock one in known
// ways, so that `bcwire diff` can be tested on pairs of captures that differ
// in exactly one respect. The zero value is the stock server: a Config with
// no quirks generates the same bytes as before quirks existed.
//
// Every quirk changes what the server does; the simulated stock clients are
// left as they are. Most quirks change the number of datagrams, and with it
// the random link jitter of everything after, so a quirky capture is not the
// stock one with a few bytes changed: its gameplay differs in detail too,
// as two real sessions would.
type Quirks struct {
	// NoBundling sends what stock bundles in separate datagrams: the
	// connect reply apart from checksum round 0, and ChecksumComplete
	// (0x28), Settings (0x00) and GameInit (0x01) one datagram each.
	NoBundling bool
	// ControlAckFlags, when set, is the flags byte of the server's ACKs
	// of control-channel messages (stock: 0x02). Only the captured bytes
	// change: the simulated clients still take these ACKs as the ones they
	// answer (as a lenient client would), so nothing else differs.
	ControlAckFlags *uint8
	// ChecksumDirs replaces the directory the server asks for in the
	// checksum rounds it names (the clients hash what they are asked).
	ChecksumDirs map[game.ChecksumRound]string
	// DropOpcodes are game opcodes the server never sends, neither its
	// own messages nor relayed copies.
	DropOpcodes []game.Opcode
	// StateUpdateDivisor, above 1, makes the server send its StateUpdates
	// on every n-th tick only (stock: every tick, 10 per ship per second).
	StateUpdateDivisor int
	// NoRelay makes the server keep clients' game messages to itself
	// instead of forwarding them to the other clients.
	NoRelay bool
}

// checksumRequest is the request of round i as this server sends it.
func (s *sim) checksumRequest(i int) *game.ChecksumRequest {
	r := checksumRounds[i]
	if d, ok := s.cfg.Quirks.ChecksumDirs[r.Round]; ok {
		r.Dir = d
	}
	return &r
}

// drops reports whether the server never sends game message payload.
func (s *sim) drops(payload []byte) bool {
	if len(payload) == 0 {
		return false
	}
	for _, op := range s.cfg.Quirks.DropOpcodes {
		if game.Opcode(payload[0]) == op {
			return true
		}
	}
	return false
}

// ackQuirk rewrites the flags of the control-channel ACKs in a server
// datagram; it returns plain itself when nothing changes.
func (s *sim) ackQuirk(plain []byte) []byte {
	f := s.cfg.Quirks.ControlAckFlags
	if f == nil {
		return plain
	}
	var d dissect.Datagram
	if d.Parse(plain) != nil {
		return plain
	}
	changed := false
	for i := range d.Messages {
		m := &d.Messages[i]
		if m.Type == dissect.TypeAck && m.AckFlags&dissect.AckControl != 0 {
			m.AckFlags = *f
			changed = true
		}
	}
	if !changed {
		return plain
	}
	return d.Append(nil)
}
