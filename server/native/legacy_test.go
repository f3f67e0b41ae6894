package native_test

import (
	"bytes"
	"log/slog"
	"net/netip"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/server/native"
)

func encrypt(plain []byte) []byte {
	w := make([]byte, len(plain))
	dissect.Encrypt(w, plain)
	return w
}

// TestAcceptLegacyFraming: with AcceptLegacyFraming, OpenBC's test-client
// connect (FF 01 03 08 01 00 00 00 7F 00, PROTOCOL.md) is answered like a
// stock connect, with a warning for the session, and its type 0x06
// disconnect ([slot] 01 06 02) ends the session; without it the connect is
// dropped (TestDropReasons).
func TestAcceptLegacyFraming(t *testing.T) {
	var logBuf bytes.Buffer
	lg := slog.New(slog.NewTextHandler(&logBuf, nil))
	n := newSim(t, native.Options{AcceptLegacyFraming: true, Logger: lg})
	src := netip.MustParseAddrPort("127.0.0.1:40001")
	n.srv.HandleDatagram(n.now, src, encrypt([]byte{0xFF, 0x01, 0x03, 0x08, 0x01, 0, 0, 0, 0x7F, 0}))
	if len(n.sent) != 1 || n.sent[0].addr != src {
		t.Fatalf("connect answered with %d datagrams", len(n.sent))
	}
	plain := make([]byte, len(n.sent[0].wire))
	dissect.Decrypt(plain, n.sent[0].wire)
	var d dissect.Datagram
	if err := d.Parse(plain); err != nil || len(d.Messages) < 2 || d.Messages[0].Type != dissect.TypeConnectAck ||
		d.Messages[0].Payload[0] != 2 || game.Opcode(d.Messages[1].Payload[0]) != game.OpChecksumRequest {
		t.Fatalf("connect reply % X (%v): want ConnectAck for slot 2 and checksum round 0", plain, err)
	}
	if c := strings.Count(logBuf.String(), "client connects with the legacy"); c != 1 {
		t.Errorf("%d warnings about the legacy framing, want 1 for the session:\n%s", c, logBuf.String())
	}
	n.srv.HandleDatagram(n.now, src, encrypt([]byte{0x02, 0x01, 0x06, 0x02}))
	if !strings.Contains(logBuf.String(), "client left (legacy transport type 0x06)") {
		t.Errorf("0x06 disconnect not acted on:\n%s", logBuf.String())
	}
	if st := n.srv.Stats(); st.Dropped != 0 {
		t.Errorf("drops %v", st.Drops)
	}
	// A stock-framed client is not affected: nothing it sends is 0x06.
	c, _ := n.join("Stock")
	if !c.Snapshot().InGame {
		t.Error("stock client did not join")
	}
}
