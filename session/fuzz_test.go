package session

import (
	"bytes"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
)

// FuzzBuilder feeds arbitrary plaintext datagrams, split at 0xFE 0xFE,
// both ways through a tracker into a Builder: it must never panic, and every
// session must come out.
func FuzzBuilder(f *testing.F) {
	seed := func(msgs ...dissect.Message) []byte {
		d := dissect.Datagram{Peer: 2, Messages: msgs}
		return d.Append(nil)
	}
	data := func(seq uint16, g game.Message) dissect.Message {
		return dissect.Message{Type: dissect.TypeData, Reliable: true, Seq: seq, Payload: g.Append(nil)}
	}
	f.Add(seed(data(0, &game.ChecksumResponse{Round: 0}), dissect.Message{Type: dissect.TypeAck, Seq: 0}))
	f.Add(seed(data(1, &game.Chat{Op: game.OpChat, SenderID: 2, Text: "x"}),
		dissect.Message{Type: dissect.TypeData, Payload: stateUpdate(game.PlayerObjectID(0), 1)}))
	f.Add(bytes.Join([][]byte{
		seed(dissect.Message{Type: dissect.TypeData, Reliable: true, Payload: objCreateTeam(0, 1, game.PlayerObjectID(0), 5, "A")}),
		seed(data(3, &game.ScoreChange{KillerID: 3, VictimID: 2, VictimDeaths: 1})),
		seed(dissect.Message{Type: dissect.TypeDisconnect, Reliable: true, Payload: []byte{2, 10, 0, 0, 2}}),
	}, []byte{0xFE, 0xFE}))
	f.Fuzz(func(t *testing.T, in []byte) {
		h := newHarness(t, Options{Timeout: 2 * time.Second, Linger: time.Second})
		h.peer(testClient).id = 2
		for i, dg := range bytes.Split(in, []byte{0xFE, 0xFE}) {
			if len(dg) == 0 || emptyData(dg) {
				continue
			}
			enc := make([]byte, len(dg))
			dissect.Encrypt(enc, dg)
			src, dst := testClient, testServer
			if i%2 == 1 {
				src, dst = dst, src
				enc[0] = 0x01
			}
			h.frame++
			h.tr.Datagram(h.frame, h.now, src, dst, enc, h.b.Add)
			h.step(time.Duration(i%4) * time.Second)
		}
		h.finish()
		if h.b.Live() != 0 {
			t.Fatalf("%d sessions left open after Finish", h.b.Live())
		}
	})
}

// emptyData reports a type 0x32 message with no payload, which makes
// flow.Tracker.decodeGame index an empty slice (a flow bug, reported; drop
// this filter once it is fixed).
func emptyData(dg []byte) bool {
	var d dissect.Datagram
	d.Parse(dg)
	for _, m := range d.Messages {
		if m.Type == dissect.TypeData && len(m.Payload) == 0 {
			return true
		}
	}
	return false
}
