package flow_test

import (
	"bytes"
	"encoding/hex"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
)

// The stock collision test's pair (../shared/vectors/stock-payloads.json):
// the client's ObjCreateTeam of its Sovereign, then the server's
// subsystem-only StateUpdate of that ship to its own player.
const (
	pairObjCreateHex = "03 00 02 08 80 00 00 FF FF FF 3F 05 00 00 18 42 00 00 44 C2 00 00 0C C2 52 93 45 3F " +
		"BB C9 22 BF E2 58 10 B3 25 8D 6C B2 00 00 00 00 00 00 00 05 43 61 64 79 32 06 4D 75 6C 74 69 31 " +
		"FF FF 64 FF FF FF FF FF FF FF 64 FF FF FF FF FF FF 64 FF FF FF FF FF FF FF 64 60 00 FF 64 FF FF FF " +
		"FF FF FF FF FF FF 64 01 FF FF FF FF FF 64 01 FF FF FF 64 FF"
	pairStateUpdateHex = "1C FF FF FF 3F 80 EC 04 42 20 00 FF FF 20 FF FF FF FF FF FF"
)

func pairHex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestStockCollisionPairInOneCapture puts the pair into one capture, each
// message in a transport data message of an encrypted datagram, and reads
// it back: the StateUpdate's subsystems come out by name (Hull; the Shield
// Generator with its clear has-power bit in the group byte 0x20 and six
// facing bytes), every byte accounted for, with no warning.
func TestStockCollisionPairInOneCapture(t *testing.T) {
	client := netip.MustParseAddrPort("10.10.10.239:24330")
	server := netip.MustParseAddrPort("10.10.10.1:22101")
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, capture.PCAP, capture.Ethernet)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 2, 10, 20, 0, 0, 0, time.UTC)
	send := func(at time.Duration, src, dst netip.AddrPort, peer uint8, m dissect.Message) {
		dg := dissect.Datagram{Peer: peer, Count: 1, Messages: []dissect.Message{m}}
		plain := dg.Append(nil)
		wire := make([]byte, len(plain))
		dissect.Encrypt(wire, plain)
		if err := w.WriteUDP(t0.Add(at), src, dst, wire); err != nil {
			t.Fatal(err)
		}
	}
	create, update := pairHex(t, pairObjCreateHex), pairHex(t, pairStateUpdateHex)
	send(0, client, server, 2, dissect.Message{Type: dissect.TypeData, Reliable: true, Seq: 6, Payload: create})
	send(100*time.Millisecond, server, client, 1, dissect.Message{Type: dissect.TypeData, Payload: update})
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}

	rd, err := capture.NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var games int
	_, err = flow.Run(rd, flow.New(flow.Options{}), func(r *flow.Record) bool {
		if r.Err != nil || r.Warning != "" {
			t.Errorf("frame %d: err %v, warning %q", r.Frame, r.Err, r.Warning)
		}
		if r.Game == nil {
			return true
		}
		// The record and its message are valid only here.
		games++
		res := r.Game
		if res.Err != nil || res.Warning != "" || len(res.Unparsed) > 0 {
			t.Errorf("frame %d: err %v, warning %q, unparsed % X", r.Frame, res.Err, res.Warning, res.Unparsed)
		}
		if got := res.Msg.Append(nil); !bytes.Equal(got, r.Msg.Payload) {
			t.Errorf("frame %d re-encoded\n% X\nwant\n% X", r.Frame, got, r.Msg.Payload)
		}
		switch m := res.Msg.(type) {
		case *game.ObjCreate:
			if len(m.Subsystems) != 11 || m.Subsystems[10].Name != "Bridge" {
				t.Errorf("ObjCreateTeam not decoded by name: %v", m)
			}
		case *game.StateUpdate:
			checkPairUpdate(t, m, len(update))
		default:
			t.Errorf("frame %d: %T", r.Frame, m)
		}
		return true
	})
	if err != nil || games != 2 {
		t.Fatalf("%d game messages, err %v", games, err)
	}
}

func checkPairUpdate(t *testing.T, su *game.StateUpdate, size int) {
	t.Helper()
	if su.SubsystemsUndecoded || su.Class == nil || su.Class.Name != "Sovereign" {
		t.Fatalf("StateUpdate not decoded by name: %v", su)
	}
	want := `subsystems@0 ["Hull"=255 "Shield Generator"=255 power=- facings=255/255/255/255/255/255]`
	if !strings.HasSuffix(su.String(), want) {
		t.Errorf("StateUpdate %s\nwant suffix %s", su, want)
	}
	// Every byte of the section: the start index, Hull's condition, the
	// shield's condition, the group byte holding its has-power bit, six
	// facings.
	n := 1 + 1 // the start index and the group byte
	for _, s := range su.Subsystems {
		n += 1 + len(s.Children) + len(s.Facings)
	}
	if size-10 != n || len(su.Subsystems) != 2 || su.Subsystems[1].HasPower {
		t.Errorf("states account for %d of the section's %d bytes: %v", n, size-10, su)
	}
}
