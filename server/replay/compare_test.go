package replay

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
)

func TestDefaultComparer(t *testing.T) {
	a := &game.Settings{GameTime: 12.5, CollisionDamage: true, PlayerSlot: 1, Map: "Multiplayer.Episode.Mission1.Mission1"}
	b := *a
	b.GameTime = 99 // another host clock: same content
	if ok, why := (DefaultComparer{}).Compare(a, &b); !ok {
		t.Fatalf("game time alone made Settings differ: %s", why)
	}
	b.PlayerSlot = 2
	ok, why := (DefaultComparer{}).Compare(a, &b)
	if ok || !strings.Contains(why, "Settings fields differ") {
		t.Fatalf("different player slot: %v %q", ok, why)
	}
	if ok, why := (DefaultComparer{}).Compare(a, &game.GameInit{}); ok || !strings.Contains(why, "opcode") {
		t.Fatalf("different opcodes: %v %q", ok, why)
	}
}

// dg builds a plaintext datagram from the server.
func dg(msgs ...dissect.Message) []byte {
	d := dissect.Datagram{Peer: 0x01, Messages: msgs}
	return d.Append(nil)
}

func TestCompareDatagrams(t *testing.T) {
	settings := func(tm float32) dissect.Message {
		s := &game.Settings{GameTime: tm, Map: "m"}
		return dissect.Message{Type: dissect.TypeData, Reliable: true, Seq: 4, Payload: s.Append(nil)}
	}
	slot := byte(2)
	keepalive := func(ip [4]byte) dissect.Message {
		c := dissect.Control{Kind: "peer-info", Slot: &slot, Name: "Cady2"}
		c.Addr = netip.AddrFrom4(ip)
		return dissect.Message{Type: dissect.TypePeerInfo, Reliable: true, Ordered: true, Seq: 1, Payload: dissect.AppendControl(nil, &c)}
	}
	ack := dissect.Message{Type: dissect.TypeAck, Seq: 3, AckFlags: dissect.AckControl}
	want := dg(ack, settings(1), keepalive([4]byte{10, 0, 1, 10}))

	// Other game time and another client address: equivalent.
	if ok, why := compareDatagrams(dg(ack, settings(7), keepalive([4]byte{127, 0, 0, 1})), want, game.ServerToClient, DefaultComparer{}); !ok {
		t.Fatalf("equivalent datagrams differ: %s", why)
	}
	// A different sequence number is a difference in exact mode.
	s2 := settings(1)
	s2.Seq = 5
	if ok, why := compareDatagrams(dg(ack, s2, keepalive([4]byte{10, 0, 1, 10})), want, game.ServerToClient, DefaultComparer{}); ok || !strings.Contains(why, "message 2: header R seq=5") {
		t.Fatalf("renumbered: %v %q", ok, why)
	}
	// A missing message.
	if ok, why := compareDatagrams(dg(ack, settings(1)), want, game.ServerToClient, DefaultComparer{}); ok || !strings.Contains(why, "2 transport messages, captured 3") {
		t.Fatalf("fewer messages: %v %q", ok, why)
	}
	// Damaged input never panics.
	for n := range want {
		compareDatagrams(want[:n], want, game.ServerToClient, DefaultComparer{})
	}
}

// A value longer than the column is never cut: it goes on over more rows,
// so the field that differs stays visible (issue 29.3).
func TestSideBySideCutsNothing(t *testing.T) {
	long := "data seq=0  StateUpdate object=0x3FFFFFFF(slot 0) time=83.133 flags=DELTA|FWD|UP|SPEED|SUBSYS delta=(-8.38, 11.54, 0.00) speed=7.822"
	other := "data seq=0  StateUpdate object=0x3FFFFFFF(slot 0) time=7.700 flags=DELTA|FWD|SUBSYS delta=(-8.38, 11.54, 0.00) fwd=(-0.68, 0.73, 0.00) up=(0.00, 0.30, 0.94) speed=7.822 subsystems@8 [\"Repair\"=255 power=100]"
	out := SideBySide("captured", []string{long}, "received", []string{other})
	if strings.Contains(out, "…") {
		t.Errorf("a value was cut:\n%s", out)
	}
	var left, right strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(out, "\n"), "\n")[1:] {
		a, b, ok := strings.Cut(l, " | ")
		if !ok {
			t.Fatalf("row without two columns: %q", l)
		}
		left.WriteString(strings.TrimRight(strings.TrimLeft(strings.TrimPrefix(strings.TrimSpace(a), "≠"), " "), " "))
		right.WriteString(b)
	}
	squash := func(s string) string { return strings.ReplaceAll(s, " ", "") }
	if squash(left.String()) != squash(long) || squash(right.String()) != squash(other) {
		t.Errorf("the columns do not hold the values in full:\n%s", out)
	}
	if !strings.HasPrefix(strings.Split(out, "\n")[1], "    ≠ ") {
		t.Errorf("the first row of differing values is not marked:\n%s", out)
	}
}
