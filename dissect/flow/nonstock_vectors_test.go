package flow

import (
	"encoding/hex"
	"encoding/json"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
)

// TestStockVectorsAreNotNonStock: no complete stock byte string of
// ../shared/vectors/stock-payloads*.json is marked non-stock - the registry
// cites them as the evidence of what stock does, so a form that matched
// one would be wrong. (Skipped where ../shared is absent.)
func TestStockVectorsAreNotNonStock(t *testing.T) {
	files, _ := filepath.Glob("../../../shared/vectors/stock-payloads*.json")
	if len(files) == 0 {
		t.Skip("../shared/vectors is not here")
	}
	server := netip.MustParseAddrPort("10.0.0.1:22101")
	client := netip.MustParseAddrPort("10.0.1.2:50000")
	checked := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var entries []struct {
			Label, Layer, Hex, Direction string
			Complete                     bool
		}
		if err := json.Unmarshal(b, &entries); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for _, e := range entries {
			raw, err := hex.DecodeString(strings.ReplaceAll(e.Hex, " ", ""))
			if err != nil || !e.Complete || len(raw) == 0 {
				continue
			}
			fromServer := e.Direction == "S->C"
			var plain []byte
			switch e.Layer {
			case "udp-plaintext":
				plain = raw
				fromServer = raw[0] == 0x01
			case "transport-message":
				plain = append([]byte{0x02, 0x01}, raw...)
				if fromServer {
					plain[0] = 0x01
				}
			case "game-payload":
				peer := byte(0x02)
				if fromServer {
					peer = 0x01
				}
				plain = (&dissect.Datagram{Peer: peer, Messages: []dissect.Message{{Type: dissect.TypeData, Reliable: true, Payload: raw}}}).Append(nil)
			default:
				continue
			}
			if dissect.IsGameSpy(plain) {
				continue
			}
			wire := make([]byte, len(plain))
			dissect.Encrypt(wire, plain)
			src, dst := client, server
			if fromServer {
				src, dst = server, client
			}
			tr := New(Options{Servers: []netip.AddrPort{server}})
			tr.Datagram(1, time.Time{}, src, dst, wire, func(r *Record) {
				if r.NonStock != nil {
					t.Errorf("%s: %q marked %s", filepath.Base(file), e.Label, r.NonStock)
				}
			})
			checked++
		}
	}
	t.Logf("%d complete stock entries checked", checked)
}
