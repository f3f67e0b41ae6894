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

// isLegacyDisconnect reports whether plain is OpenBC's test-client
// disconnect: [peer][count 1][type 0x06][len 2], a message the transport
// parser does not know.
func isLegacyDisconnect(plain []byte) bool {
	return len(plain) >= 4 && plain[1] >= 1 && plain[2] == 0x06 && plain[3] == 2
}

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
