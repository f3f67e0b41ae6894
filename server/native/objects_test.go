package native_test

import (
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/internal/fixture"
	"github.com/bcwire/bcwire/server/native"
	"github.com/bcwire/bcwire/server/stock"
)

// sovereign is the ObjCreateTeam of a stock dedicated-server capture: the
// Sovereign of player slot 0, object 0x3FFFFFFF (shared/vectors
// stock-payloads.json, from STBC-Dedicated-Server
// docs/analysis/collision-trace-comparison.md; its header is OpenBC's
// objcreate-wire-format Example 2).
const sovereign = "03 00 02 08 80 00 00 FF FF FF 3F 05 00 00 18 42 00 00 44 C2 00 00 0C C2 52 93 45 3F BB C9 22 BF" +
	"E2 58 10 B3 25 8D 6C B2 00 00 00 00 00 00 00 05 43 61 64 79 32 06 4D 75 6C 74 69 31 FF FF 64 FF" +
	"FF FF FF FF FF FF 64 FF FF FF FF FF FF 64 FF FF FF FF FF FF FF 64 60 00 FF 64 FF FF FF FF FF FF" +
	"FF FF FF 64 01 FF FF FF FF FF 64 01 FF FF FF 64 FF"

// TestObjectRequests: ObjNotFound (0x1D) and RequestObject (0x1E) go to the
// host only, which answers the requester alone with the ObjCreateTeam of a
// ship it has (OpenBC docs/wire-formats/objnotfound-requestobj-wire-format.md:
// "The host responds with a standard ObjCreate packet - NOT with a 0x1E
// wrapper"), a RequestObject for one it has not with ObjNotFound (the stock
// host sends 0x1D to clients: 12 times in the stock 2-player trace), and an
// ObjNotFound for one it has not with nothing. 1D FF FF FF 3F is a stock
// ObjNotFound (shared/vectors, datagram #52 of a stock trace); 1E's five
// bytes follow the document's layout, [0x1E][objectID i32 LE].
func TestObjectRequests(t *testing.T) {
	n := newSim(t, native.Options{})
	a, _ := n.join("Cady2")
	b, _ := n.join("B")
	c, _ := n.join("C")
	ship := fixture.Unhex(t, sovereign)
	a.Send(n.now, ship, true)
	n.run(100 * time.Millisecond)

	notFound := fixture.Unhex(t, "1D FF FF FF 3F")
	request := fixture.Unhex(t, "1E FF FF FF 3F")
	unknown := fixture.Unhex(t, "1E FF FF 03 40") // player 1's ship: none created
	unknownNF := fixture.Unhex(t, "1D FF FF 03 40")
	b.Send(n.now, notFound, true)
	b.Send(n.now, request, true)
	b.Send(n.now, unknown, true)
	b.Send(n.now, unknownNF, true)
	n.run(200 * time.Millisecond)

	sa, sb, sc := a.Snapshot(), b.Snapshot(), c.Snapshot()
	if got := received(sb, ship); got != 3 {
		t.Errorf("B got the Sovereign %d times, want 3 (the relayed creation, then one per request)", got)
	}
	if got := received(sc, ship); got != 1 {
		t.Errorf("C got the Sovereign %d times, want only the relayed creation", got)
	}
	for _, req := range [][]byte{notFound, request, unknown} {
		if got := received(sa, req) + received(sc, req); got != 0 {
			t.Errorf("% X was relayed (%d copies)", req, got)
		}
	}
	if got := received(sb, unknownNF); got != 1 {
		t.Errorf("B got ObjNotFound for the unknown object %d times, want once (for its RequestObject only)", got)
	}
	if got := received(sa, unknownNF) + received(sc, unknownNF); got != 0 {
		t.Errorf("ObjNotFound went to others")
	}
	if st := n.srv.Stats(); st.ObjectsSent != 2 {
		t.Errorf("ObjectsSent %d, want 2", st.ObjectsSent)
	}

	// Once the ship is destroyed the host no longer has it.
	a.Send(n.now, (&game.DestroyObject{Object: game.PlayerObjectID(0)}).Append(nil), true)
	n.run(100 * time.Millisecond)
	b.Send(n.now, request, true)
	n.run(200 * time.Millisecond)
	if got := received(b.Snapshot(), ship); got != 3 {
		t.Errorf("B got the Sovereign %d times after it was destroyed, want still 3", got)
	}
	if got := received(b.Snapshot(), notFound); got != 1 {
		t.Errorf("B got ObjNotFound for the destroyed ship %d times, want 1", got)
	}

	// An object that is no ship (here: a class the decoder does not know,
	// as OpenBC's test clients send) is answered from its envelope.
	odd := fixture.Unhex(t, "03 00 00 01 00 00 00 FF FF 07 40 01 00 00 00 00 00 00 00 00 00 00 00 00")
	c.Send(n.now, odd, true)
	n.run(100 * time.Millisecond)
	b.Send(n.now, fixture.Unhex(t, "1E FF FF 07 40"), true)
	n.run(200 * time.Millisecond)
	if got := received(b.Snapshot(), odd); got != 2 {
		t.Errorf("B got the other object %d times, want 2 (relayed, then the answer)", got)
	}
}

// TestHostRoutePolicy: the native server keeps, relays, answers and sends
// to a team exactly what stock.HostRoute says.
func TestHostRoutePolicy(t *testing.T) {
	n := newSim(t, native.Options{})
	a, _ := n.join("A")
	b, _ := n.join("B")
	a.Send(n.now, shipMsg(0, 0, "A", 10), true)
	b.Send(n.now, shipMsg(1, 0, "B", 10), true)
	n.run(100 * time.Millisecond)
	sent := map[game.Opcode][]byte{}
	for op := 0; op < 0x40; op++ {
		o := game.Opcode(op)
		if o == game.OpObjCreate || o == game.OpObjCreateTeam || o == game.OpDestroyObject || o == game.OpPythonEvent ||
			o == game.OpNewPlayerInGame || o == game.OpChecksumResponse || o == game.OpObjNotFound || o == game.OpRequestObject {
			continue // they change what the host knows; tested on their own
		}
		m := []byte{byte(op), 0xA5, byte(op), 0x5A, 0x01, 0x02}
		sent[o] = m
		a.Send(n.now, m, true)
	}
	n.run(300 * time.Millisecond)
	sb := b.Snapshot()
	for op, m := range sent {
		want := 0
		if r := stock.HostRoute(op); r == stock.RouteRelay || r == stock.RouteTeam {
			want = 1
		}
		if got := received(sb, m); got != want {
			t.Errorf("%v (%v): B got %d copies, want %d", op, stock.HostRoute(op), got, want)
		}
	}
}
