package native

import (
	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/server/stock"
)

// OpenBC's test clients (its tests/test_harness.h) frame their connect
// with the legacy [type][len:u8][flags:u8] header, as in
// FF 01 03 08 01 00 00 00 7F 00, and leave with transport type 0x06. Stock
// clients do neither, and what the stock server answers to them is not
// documented, so the server only accepts them with
// Options.AcceptLegacyFraming, for a replacement-server team that runs its
// own client tests against a stock-behaving server.

// legacyDisconnect is the transport type with which OpenBC's test clients
// leave.
const legacyDisconnect dissect.TransportType = 0x06

// isLegacyConnect reports whether plain is a connecting client's datagram
// that carries a connect in the legacy framing.
func (s *Server) isLegacyConnect(plain []byte) bool {
	if plain[0] != stock.ConnectingPeer {
		return false
	}
	_ = s.dg.Parse(plain)
	for i := range s.dg.Messages {
		m := &s.dg.Messages[i]
		if m.Legacy && (m.Type == dissect.TypeConnectAck || m.Type == dissect.TypeConnect) {
			return true
		}
	}
	return false
}
