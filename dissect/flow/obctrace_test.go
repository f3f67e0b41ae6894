package flow_test

import (
	"bytes"
	"encoding/binary"
	"path/filepath"
	"testing"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
)

// msgKey is a game message's direction and opcode, or a keepalive's
// direction (opcode -1).
type msgKey struct {
	dir    game.Direction
	opcode int
}

// count runs a capture through flow and counts its game messages and
// keepalives; record, if set, sees every record first.
func count(t *testing.T, rd *capture.Reader, record func(r *flow.Record)) map[msgKey]int {
	t.Helper()
	counts := map[msgKey]int{}
	_, err := flow.Run(rd, flow.New(flow.Options{}), func(r *flow.Record) bool {
		if r.Err != nil {
			t.Errorf("frame %d: %v", r.Frame, r.Err)
		}
		if record != nil {
			record(r)
		}
		switch {
		case r.Kind != flow.KindMessage:
		case r.Msg.Type == dissect.TypePeerInfo:
			counts[msgKey{r.Dir, -1}]++
		case r.Game != nil:
			counts[msgKey{r.Dir, int(r.Game.Msg.Opcode())}]++
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	return counts
}

// An OBCTRACE file, as OpenBC's networked battle test writes it ('S' what
// a test client sent, 'R' what it received, keepalives in 'R' from their
// third byte on), made here from the game messages of a bundled capture,
// gives the capture's counts per direction and opcode, its keepalives
// counted apart.
func TestOBCTraceCountsAsItsCapture(t *testing.T) {
	rd, err := capture.Open(filepath.Join("..", "..", "testdata", "pcaps", "duel.pcapng"))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	trace := []byte("OBCTRACE")
	var start int64
	want := count(t, rd, func(r *flow.Record) {
		if r.Kind != flow.KindMessage {
			return
		}
		var body []byte
		switch {
		case r.Msg.Type == dissect.TypePeerInfo && r.Dir == game.ServerToClient:
			body = r.Msg.Raw[2:]
		case r.Game != nil && r.Reassembled > 0:
			body = r.Game.Msg.Append(nil) // the whole message, as the test client hands it out
		case r.Game != nil:
			body = r.Msg.Payload
		default:
			return
		}
		if start == 0 {
			start = r.Time.UnixMilli()
		}
		dir := byte('R')
		if r.Dir == game.ClientToServer {
			dir = 'S'
		}
		trace = binary.LittleEndian.AppendUint32(trace, uint32((r.Time.UnixMilli()-start)/100))
		trace = append(trace, dir, byte(r.Client.Port()-50000))
		trace = binary.LittleEndian.AppendUint16(trace, uint16(len(body)))
		trace = append(trace, body...)
	})
	// The C->S keepalives are not in the trace: the test client does not
	// log its own.
	delete(want, msgKey{game.ClientToServer, -1})

	tr, err := capture.NewReader(bytes.NewReader(trace))
	if err != nil {
		t.Fatal(err)
	}
	if tr.Format() != capture.OBCTrace {
		t.Fatalf("format %v", tr.Format())
	}
	got := count(t, tr, nil)
	if len(got) != len(want) || got[msgKey{game.ServerToClient, -1}] == 0 {
		t.Errorf("got %d kinds of message, want %d (keepalives %d)", len(got), len(want), got[msgKey{game.ServerToClient, -1}])
	}
	for k, n := range want {
		if got[k] != n {
			t.Errorf("%v opcode %#x: %d, want %d", k.dir, k.opcode, got[k], n)
		}
	}
}
