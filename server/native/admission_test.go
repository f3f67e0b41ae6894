package native_test

import (
	"bytes"
	"fmt"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/server/native"
	"github.com/bcwire/bcwire/server/stock"
)

// spoofedConnect is the connect datagram a client at from would send, as on
// the wire; a spoofer sends it and never answers.
func spoofedConnect(from netip.AddrPort) []byte {
	req := stock.ConnectRequest(from)
	d := dissect.Datagram{Peer: stock.ConnectingPeer, Messages: []dissect.Message{{Type: dissect.TypeConnectAck,
		Reliable: true, Ordered: true, Payload: dissect.AppendControl(nil, &req)}}}
	plain := d.Append(nil)
	wire := make([]byte, len(plain))
	dissect.Encrypt(wire, plain)
	return wire
}

// Issue 23, point 2: spoofed connects from one address (many ports) or from
// many addresses must not keep a real client out.
func TestSpoofedConnectsDoNotKeepPlayersOut(t *testing.T) {
	oneAddr := func(i int) netip.AddrPort {
		return netip.AddrPortFrom(netip.MustParseAddr("192.0.2.66"), uint16(20000+i))
	}
	manyAddrs := func(i int) netip.AddrPort {
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte{198, 18, byte(i >> 8), byte(i)}), uint16(30000+i))
	}
	for _, tc := range []struct {
		name string
		n    int
		from func(int) netip.AddrPort
		// wait before the real client connects: a flood from many
		// addresses uses up a second's eviction budget.
		wait time.Duration
	}{
		{"8 from one address", 8, oneAddr, 0},
		{"1000 from one address", 1000, oneAddr, 0},
		{"8 from many addresses", 8, manyAddrs, 0},
		{"1000 from many addresses", 1000, manyAddrs, time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := newSim(t, native.Options{})
			for i := 0; i < tc.n; i++ {
				n.srv.HandleDatagram(n.now, tc.from(i), spoofedConnect(tc.from(i)))
			}
			n.toClient = nil
			pending := len(n.srv.Players(n.now))
			if pending == 0 {
				t.Fatal("no spoofed connect was admitted: the test tests nothing")
			}
			if pending > 7 {
				t.Errorf("%d half-open connections that answer nothing on an 8-slot server", pending)
			}
			n.run(tc.wait)
			c, _ := n.addClient("real")
			joinedAt := time.Duration(-1)
			for step := 0; step < 100 && joinedAt < 0; step++ {
				n.run(10 * time.Millisecond)
				if c.Snapshot().InGame {
					joinedAt = time.Duration(step+1) * 10 * time.Millisecond
				}
			}
			if joinedAt < 0 || joinedAt > time.Second {
				t.Fatalf("the real client did not join within a second: %+v", c.Snapshot())
			}
			st := n.srv.Stats()
			t.Logf("%d spoofed, %d held at once; real client in game after %v; evicted %d, dropped %d, refused %d",
				tc.n, pending, joinedAt, st.Evicted, st.Dropped, st.Refused)
			// The spoofed ones are gone after the silent timeout (3s).
			n.run(3500 * time.Millisecond)
			if ps := n.srv.Players(n.now); len(ps) != 1 || ps[0].Name != "real" {
				t.Errorf("after the silent timeout: %+v", ps)
			}
		})
	}
}

// Silent half-open connections never hold the last slot, and a connect
// takes the place of the oldest of them no more often than the eviction
// rate allows: here one a second, used up by the flood, so the real
// client gets in on the next second.
func TestSilentConnectsLeaveOneSlot(t *testing.T) {
	cfg := native.DefaultConfig()
	cfg.MaxPlayers = 4
	n := newSim(t, native.Options{Config: cfg, RepliesPerSecond: 1})
	for i := 0; i < 50; i++ {
		from := netip.AddrPortFrom(netip.AddrFrom4([4]byte{198, 18, 0, byte(i)}), 40000)
		n.srv.HandleDatagram(n.now, from, spoofedConnect(from))
	}
	n.toClient = nil
	if ps := n.srv.Players(n.now); len(ps) != 3 {
		t.Fatalf("%d silent connections on a 4-slot server, want 3", len(ps))
	}
	if st := n.srv.Stats(); st.Evicted != 1 {
		t.Fatalf("%d evictions in the first second, the rate allows 1", st.Evicted)
	}
	n.run(time.Second)
	c, _ := n.addClient("real")
	n.run(500 * time.Millisecond)
	if !c.Snapshot().InGame {
		t.Fatalf("the real client did not get in: %+v", c.Snapshot())
	}
}

// fragFlood is a joined client's datagram carrying fragment idx of a set
// numbered seq that announces 255 fragments and never completes.
func fragFlood(slot byte, seq uint16, idx int) []byte {
	m := dissect.Message{Type: dissect.TypeData, Reliable: true, Seq: seq, Fragment: true, FragIndex: uint8(idx),
		Payload: bytes.Repeat([]byte{0x21}, 2030)}
	if idx == 0 {
		m.FragTotal = 255
	}
	d := dissect.Datagram{Peer: slot, Messages: []dissect.Message{m}}
	plain := d.Append(nil)
	wire := make([]byte, len(plain))
	dissect.Encrypt(wire, plain)
	return wire
}

// Issue 23, point 1 (server side): one, then eight, joined clients each
// send 64 fragment sets that never complete (sequence numbers 0, 65000,
// 30000, ...), 254 fragments of 2,030 bytes each: 33 MB a client unbounded.
// The server's own accounting stays under the per-peer and total caps, the
// heap under the total cap plus slack, and a real client still joins and
// is relayed to.
func TestFragmentFloodBounded(t *testing.T) {
	for _, flooders := range []int{1, 8} {
		t.Run(fmt.Sprint(flooders, " flooders"), func(t *testing.T) {
			cfg := native.DefaultConfig()
			cfg.MaxPlayers = 12
			n := newSim(t, native.Options{Config: cfg})
			a, _ := n.join("A")
			type flooder struct {
				addr netip.AddrPort
				slot byte
			}
			var fs []flooder
			for i := 0; i < flooders; i++ {
				c, addr := n.join(fmt.Sprint("F", i))
				fs = append(fs, flooder{addr, c.Snapshot().Slot})
			}
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			sets := 64
			if flooders > 1 {
				sets = 24 // 8 × 24 × 254 datagrams: 100 MB unbounded, in a few seconds
			}
			for set := 0; set < sets; set++ {
				seq := uint16(set * 65000 % 65536)
				for idx := 0; idx < 254; idx++ {
					for _, f := range fs {
						n.srv.HandleDatagram(n.now, f.addr, fragFlood(f.slot, seq, idx))
					}
				}
				n.toClient, n.sent = n.toClient[:0], n.sent[:0] // the ACKs, not read by anyone
			}
			st := n.srv.Stats()
			runtime.GC()
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			grew := int64(after.HeapInuse) - int64(before.HeapInuse)
			const perPeer, total = 256 << 10, 4 << 20
			bound := min(total, flooders*perPeer)
			t.Logf("%d flooders: fragment memory %d bytes (bound %d), heap %+d KiB, %d sets evicted, %d fragments refused",
				flooders, st.FragBytes, bound, grew/1024, st.FragEvicted, st.FragRefused)
			if st.FragBytes > bound {
				t.Errorf("server holds %d fragment bytes, bound %d", st.FragBytes, bound)
			}
			if st.FragEvicted < sets*flooders {
				t.Errorf("%d sets evicted, want at least %d", st.FragEvicted, sets*flooders)
			}
			if grew > int64(bound)+8<<20 {
				t.Errorf("heap grew %d bytes, bound %d plus slack", grew, bound)
			}
			b, _ := n.join("B")
			a.Send(n.now, chat(game.OpChat, 2, "still here"), true)
			n.run(200 * time.Millisecond)
			if received(b.Snapshot(), chat(game.OpChat, 2, "still here")) != 1 {
				t.Errorf("relay broken beside the flood")
			}
		})
	}
}
