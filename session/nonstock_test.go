package session

import (
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
)

// TestNonStockKindsAndDisconnect06: a session's non-stock messages are
// kept as one kind per form, message and direction (count, first and last
// frame), counted in its traffic, and OpenBC's type 0x06 disconnect ends
// the session as stock's 0x05 does.
func TestNonStockKindsAndDisconnect06(t *testing.T) {
	h := newHarness(t, Options{})
	h.connect(testClient, 2)
	short := []byte{0x0A, 0xFF, 0xFF, 0xFF, 0x3F, 0x01, 0x00, 0xB0, 0xB8, 0x45} // SubsystemStatus, 10 bytes
	for range 3 {
		h.step(100 * time.Millisecond)
		h.send(testClient, testServer, h.reliable(testClient, dissect.TypeData, short))
	}
	h.step(time.Second)
	h.send(testClient, testServer, dissect.Message{Type: dissect.TypeDisconnect06})
	h.finish()
	s := h.only()
	if s.EndReason != EndDisconnect || s.EndBy != "client" {
		t.Errorf("end %q by %q, want a disconnect by the client", s.EndReason, s.EndBy)
	}
	var ev, dc *NonStockKind
	for i := range s.NonStock {
		switch k := &s.NonStock[i]; k.Name {
		case "event-length":
			ev = k
		case "disconnect-0x06":
			dc = k
		}
	}
	if ev == nil || ev.Count != 3 || ev.Message != game.OpSubsystemStatus.String() || ev.Dir != "C->S" ||
		ev.FirstFrame >= ev.LastFrame || ev.Evidence == "" {
		t.Errorf("event-length kind %+v", ev)
	}
	if dc == nil || dc.Count != 1 {
		t.Errorf("disconnect-0x06 kind %+v", dc)
	}
	if n := s.Traffic.NonStock[0][dissect.FormEventLength]; n != 3 {
		t.Errorf("traffic counts %d event-length messages, want 3", n)
	}
	if s.Damaged != 0 {
		t.Errorf("%d damaged records", s.Damaged)
	}
}
