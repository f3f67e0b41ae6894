package game_test

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
)

// TestStateUpdateMatchesReferenceOnCapture decodes every StateUpdate of the
// battle capture with the decoder and with the field-by-field reference
// (see stateupdate_ref_test.go), teaching both the ship classes of the
// capture's ObjCreates first, and requires the same outcome.
func TestStateUpdateMatchesReferenceOnCapture(t *testing.T) {
	rd, err := capture.Open(filepath.Join("..", "..", "testdata", "pcaps", "battle.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	d := game.NewDecoder()
	tr := flow.New(flow.Options{})
	n := 0
	for {
		p, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		tr.Datagram(p.Frame, p.Time, p.Src, p.Dst, p.Payload, func(r *flow.Record) {
			if r.Game == nil {
				return
			}
			if r.Game.Msg.Opcode() != game.OpStateUpdate {
				// Re-encoded, so that reassembled ObjCreates count too.
				d.Decode(r.Game.Msg.Append(nil), r.Dir)
				return
			}
			game.CompareStateUpdateWithReference(t, d, r.Msg.Payload, r.Dir)
			n++
		})
	}
	if n < 1000 {
		t.Fatalf("only %d StateUpdates compared", n)
	}
	t.Logf("%d StateUpdates compared", n)
}
