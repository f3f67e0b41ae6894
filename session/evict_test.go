package session

import (
	"net/netip"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
)

// More clients than MaxSessions: the oldest open sessions are ended early
// (EndEvicted), counted, and handed to emit; the rest stay open.
func TestMaxSessionsEvictsOldest(t *testing.T) {
	const cap, clients = 50, 5000
	var ended []*Session
	b := NewBuilder(Options{MaxSessions: cap}, func(s *Session) { ended = append(ended, s) })
	server := netip.MustParseAddrPort("10.0.0.1:22101")
	msg := &dissect.Message{Type: dissect.TypeAck, Seq: 1}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range clients {
		r := &flow.Record{Kind: flow.KindMessage, Frame: i + 1, Time: t0.Add(time.Duration(i) * time.Millisecond),
			Server: server, Client: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 2, byte(i >> 8), byte(i)}), 40000),
			Dir: game.ClientToServer, Msg: msg, MsgCount: 1}
		r.Src, r.Dst = r.Client, r.Server
		b.Add(r)
		if b.Live() > cap {
			t.Fatalf("after %d clients: %d sessions open", i+1, b.Live())
		}
	}
	if b.Evicted() != clients-cap || len(ended) != clients-cap {
		t.Fatalf("evicted %d, emitted %d; want %d", b.Evicted(), len(ended), clients-cap)
	}
	for i, s := range ended[:10] {
		if s.EndReason != EndEvicted || s.Client.Addr().As4()[3] != byte(i) {
			t.Fatalf("session %d: %v %v, want the oldest evicted first", i, s.Client, s.EndReason)
		}
	}
	if len(b.opened) > 2*cap+8+1 {
		t.Errorf("open-order list holds %d entries", len(b.opened))
	}
	b.Finish()
	if len(ended) != clients || ended[len(ended)-1].EndReason != EndOpen {
		t.Fatalf("after Finish: %d sessions, last %v", len(ended), ended[len(ended)-1].EndReason)
	}
}
