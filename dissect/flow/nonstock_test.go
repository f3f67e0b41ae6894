package flow

import (
	"encoding/hex"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
)

// openbcMessages are OpenBC's non-stock messages, as decrypted from its
// networked tests' captures (OpenBC 52a8f62): a whole datagram (plain) or a
// game message (game, sent alone in a reliable data message), the form the
// registry names it by, and the direction it was sent in.
var openbcMessages = []struct {
	name, plain, game string
	form              dissect.FormID
	dir               game.Direction
}{
	{"disconnect 0x06", "02010602", "", dissect.FormDisconnect06, game.ClientToServer},
	{"legacy connect", "FF010308010000007F00", "", dissect.FormLegacyConnect, game.ClientToServer},
	{"peer-info slot 0", "02010014800000007F00000142006F00740030000000", "", dissect.FormPeerInfoSlot0, game.ClientToServer},
	{"SubsystemStatus of 10 bytes", "", "0AFFFFFF3F0100B0B845", dissect.FormEventLength, game.ClientToServer},
	{"SubsystemStatus of 9 bytes", "", "0AFFFFFF3F0500D042", dissect.FormEventLength, game.ServerToClient},
	{"StartFiring of 5 bytes", "", "07FFFF0740", dissect.FormEventLength, game.ClientToServer},
	{"StopFiring of 9 bytes", "", "0828810000D8008000", dissect.FormEventLength, game.ClientToServer},
	{"AddToRepairList of 7 bytes", "", "0BFFFFFF3F0500", dissect.FormEventLength, game.ServerToClient},
	{"StateUpdate ending at its speed", "", "1CFFFFFF3F000020411E7F00007F0000007F50420054", dissect.FormStateUpdateShort, game.ClientToServer},
	{"round-0 directory hash", "", "21002FCBAF4D2FCBAF4D010077B63E37595155090000", dissect.FormChecksumDirHash, game.ClientToServer},
	{"DeletePlayerUI at a ship", "", "176608000" + "0F10080000000000" + "0FFFFFF3F02", dissect.FormDeletePlayerAtShip, game.ServerToClient},
	{"Explosion from a client", "", "29FFFF0340B8B94BFE3FE3505465", dissect.FormExplosionFromClient, game.ClientToServer},
}

// openbcPlain is the decrypted datagram of openbcMessages[i].
func openbcPlain(t testing.TB, i int) []byte {
	c := openbcMessages[i]
	if c.plain != "" {
		b, err := hex.DecodeString(c.plain)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		return b
	}
	p, err := hex.DecodeString(c.game)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	peer := byte(2)
	if c.dir == game.ServerToClient {
		peer = 1
	}
	return (&dissect.Datagram{Peer: peer, Messages: []dissect.Message{{Type: dissect.TypeData, Reliable: true, Seq: 7, Payload: p}}}).Append(nil)
}

// TestOpenBCMessagesAreNamedNotDamaged: each of OpenBC's non-stock forms
// splits and decodes as an intact message marked with its registry form,
// never as damage.
func TestOpenBCMessagesAreNamedNotDamaged(t *testing.T) {
	server := netip.MustParseAddrPort("127.0.0.1:29900")
	client := netip.MustParseAddrPort("127.0.0.1:47605")
	for i, c := range openbcMessages {
		plain := openbcPlain(t, i)
		wire := make([]byte, len(plain))
		dissect.Encrypt(wire, plain)
		src, dst := client, server
		if c.dir == game.ServerToClient {
			src, dst = server, client
		}
		tr := New(Options{Servers: []netip.AddrPort{server}})
		var got []string
		tr.Datagram(1, time.Time{}, src, dst, wire, func(r *Record) {
			if r.Err != nil {
				t.Errorf("%s: damage: %v", c.name, r.Err)
			}
			if r.NonStock != nil {
				got = append(got, r.NonStock.Name())
				if s := r.NonStock.String(); !strings.HasPrefix(s, "non-stock") {
					t.Errorf("%s: mark text %q", c.name, s)
				}
			}
		})
		if want := dissect.Forms[c.form].Name; len(got) != 1 || got[0] != want {
			t.Errorf("%s: marked %v, want [%s]", c.name, got, want)
		}
	}
}

// TestScoreInChecksumAnswer: a SCORE in the server's datagram that carries
// ChecksumComplete is marked; one in another datagram is stock.
func TestScoreInChecksumAnswer(t *testing.T) {
	score := (&game.Score{PlayerID: 2}).Append(nil)
	for _, c := range []struct {
		name string
		msgs [][]byte
		want int
	}{
		{"beside ChecksumComplete", [][]byte{{byte(game.OpChecksumComplete)}, score}, 1},
		{"alone", [][]byte{score}, 0},
	} {
		dg := dissect.Datagram{Peer: 1}
		for i, p := range c.msgs {
			dg.Messages = append(dg.Messages, dissect.Message{Type: dissect.TypeData, Reliable: true, Seq: uint16(i), Payload: p})
		}
		plain := dg.Append(nil)
		wire := make([]byte, len(plain))
		dissect.Encrypt(wire, plain)
		server := netip.MustParseAddrPort("127.0.0.1:29900")
		tr := New(Options{Servers: []netip.AddrPort{server}})
		n := 0
		tr.Datagram(1, time.Time{}, server, netip.MustParseAddrPort("127.0.0.1:40000"), wire, func(r *Record) {
			if r.NonStock != nil && r.NonStock.Form == dissect.FormScoreInChecksumAnswer {
				n++
			}
		})
		if n != c.want {
			t.Errorf("%s: %d marked, want %d", c.name, n, c.want)
		}
	}
}

// TestNonStockAllocatesNothing: marking OpenBC's known forms allocates
// nothing per message once the tracker is warm.
func TestNonStockAllocatesNothing(t *testing.T) {
	server := netip.MustParseAddrPort("127.0.0.1:29900")
	client := netip.MustParseAddrPort("127.0.0.1:47605")
	tr := New(Options{Servers: []netip.AddrPort{server}})
	type dg struct {
		src, dst netip.AddrPort
		wire     []byte
	}
	var dgs []dg
	for i, c := range openbcMessages {
		switch c.form {
		case dissect.FormStateUpdateShort:
			continue // its stock layout's failure makes an error value
		case dissect.FormChecksumDirHash:
			continue // every ChecksumResponse allocates its tree, stock or not
		}
		plain := openbcPlain(t, i)
		wire := make([]byte, len(plain))
		dissect.Encrypt(wire, plain)
		d := dg{client, server, wire}
		if c.dir == game.ServerToClient {
			d.src, d.dst = server, client
		}
		dgs = append(dgs, d)
	}
	marked := 0
	emit := func(r *Record) {
		if r.NonStock != nil {
			marked++
		}
	}
	run := func() {
		for i, d := range dgs {
			tr.Datagram(i+1, time.Time{}, d.src, d.dst, d.wire, emit)
		}
	}
	run() // warm: flows, decoders, the peer name
	if allocs := testing.AllocsPerRun(20, run); allocs != 0 {
		t.Errorf("%.1f allocations per pass of %d non-stock datagrams, want 0", allocs, len(dgs))
	}
	if marked == 0 {
		t.Fatal("nothing was marked")
	}
}

// FuzzNonStockGamePayload wraps arbitrary game payloads in intact data
// messages: the dissector must never panic and never call one damaged; a
// payload that fits no stock layout is non-stock (known or unknown).
func FuzzNonStockGamePayload(f *testing.F) {
	for _, c := range openbcMessages {
		if b, err := hex.DecodeString(c.game); err == nil && c.game != "" {
			f.Add(b, c.dir == game.ServerToClient)
		}
	}
	f.Add([]byte{0x1C, 0xFF, 0xFF, 0xFF, 0x3F}, false)
	f.Add([]byte{}, true)
	server := netip.MustParseAddrPort("127.0.0.1:29900")
	client := netip.MustParseAddrPort("127.0.0.1:47605")
	f.Fuzz(func(t *testing.T, payload []byte, fromServer bool) {
		if len(payload) > 0x1FFF-5 {
			payload = payload[:0x1FFF-5]
		}
		peer, src, dst := byte(2), client, server
		if fromServer {
			peer, src, dst = 1, server, client
		}
		dg := dissect.Datagram{Peer: peer, Messages: []dissect.Message{{Type: dissect.TypeData, Reliable: true, Payload: payload}}}
		plain := dg.Append(nil)
		wire := make([]byte, len(plain))
		dissect.Encrypt(wire, plain)
		tr := New(Options{Servers: []netip.AddrPort{server}})
		n := 0
		tr.Datagram(1, time.Time{}, src, dst, wire, func(r *Record) {
			n++
			if r.Err != nil {
				t.Fatalf("intact datagram % X called damaged: %v", plain, r.Err)
			}
			if r.Game != nil && r.Game.Err != nil && r.NonStock == nil {
				t.Fatalf("payload % X fits no stock layout but is not marked non-stock", payload)
			}
			if r.NonStock != nil {
				_ = r.NonStock.String()
				_ = r.NonStock.AppendJSON(nil)
			}
		})
		if n != 1 {
			t.Fatalf("%d records for one message", n)
		}
	})
}
