package measure

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
)

// TestBuilderSharedIntervals: two ships' StateUpdates each way, in runs
// of one family (0x0x, 0x1x, and 0x2x and 0x3x, which share the
// 0x20-bearing lane) and switches between them, spaced by steps within a
// lane's window, past it, back in time and at the same time: the family
// lanes' shared intervals (Lane.sh) and the lanes' own ones add up to the
// reference's measures. It fails when Finish leaves the shared intervals
// out of a lane, or the fast path takes an update whose lanes did not
// all count the one before.
func TestBuilderSharedIntervals(t *testing.T) {
	var msgs [][]byte
	for _, s := range []string{
		"02013220001cffffff3fcdcccc3d0da12881420e794742b9aeeec120b3a8d005057e",           // 0x0x
		"02013215001cffffff3f000000001cb5a9cc02027e5a48",                                 // 0x1x
		"01013218001cffffff3f3477a4422002ff4364ffffffffffff64",                           // 0x2x
		"01013225001cffffff3f3477a7423eae60005b4fa65900002078894b02ff4364ffffffffffff64", // 0x3x
	} {
		b, _ := hex.DecodeString(s)
		msgs = append(msgs, b)
	}
	// Runs of a family, by index in msgs: (family, length).
	runs := [][2]int{{0, 20}, {1, 3}, {0, 5}, {1, 1}, {0, 1}, {2, 10}, {3, 10}, {2, 2}, {3, 1}, {2, 1}, {0, 4}, {3, 6}, {1, 2}, {0, 30}}
	steps := []time.Duration{33 * time.Millisecond, 33 * time.Millisecond, 34 * time.Millisecond, time.Millisecond, 0,
		300 * time.Millisecond, 33 * time.Millisecond, 5 * time.Second, -40 * time.Millisecond, 2 * time.Millisecond,
		129 * time.Millisecond, 20 * time.Millisecond, 45 * time.Millisecond, 3 * time.Minute}
	server := netip.MustParseAddrPort("10.0.0.1:22101")
	client := netip.MustParseAddrPort("10.0.1.2:50000")
	b, ref := NewBuilder(), newRefBuilder()
	emit := func(r *flow.Record) { b.Add(r); ref.Add(r) }
	tr := flow.New(flow.Options{Servers: []netip.AddrPort{server}})
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	frame, step := 0, 0
	for range 3 {
		for _, run := range runs {
			for range run[1] {
				for ship := range 2 {
					for dir := range 2 {
						msg := slices.Clone(msgs[run[0]])
						obj := uint32(0x3FFFFFFF) + uint32(ship)<<18
						msg[6], msg[7], msg[8], msg[9] = byte(obj), byte(obj>>8), byte(obj>>16), byte(obj>>24)
						wire := make([]byte, len(msg))
						dissect.Encrypt(wire, msg)
						src, dst := client, server
						if dir == 1 {
							src, dst = dst, src
						}
						frame++
						ts = ts.Add(steps[step%len(steps)] / 4)
						step++
						tr.Datagram(frame, ts, src, dst, wire, emit)
					}
				}
			}
		}
	}
	tr.Finish(emit)
	for _, cs := range b.clients {
		for d := range cs.ships {
			for i := range cs.ships[d] {
				cs.ships[d][i].sync()
			}
		}
	}
	shared, own := 0, 0
	for _, l := range b.lanes {
		shared += l.sh.cnt
		own += l.iv.cnt
	}
	if shared == 0 || own == 0 {
		t.Fatalf("%d shared intervals, %d own: the test takes both paths", shared, own)
	}
	got, _ := json.Marshal(b.Finish())
	if want, _ := json.Marshal(ref.Finish()); !bytes.Equal(got, want) {
		t.Fatalf("measures differ from the reference's:\n%s\nwant\n%s", got, want)
	}
}

// TestBuilderLanesFullSubsystems: StateUpdates carrying subsystems (three
// lanes a ship) for more ships than maxLanes keep: the ship on which the
// lanes run out keeps its family and every-update lanes but not its
// 0x20-bearing one, and its next updates count that lane's updates as
// dropped, as in the reference. It fails when the fast path takes a ship
// whose 0x20-bearing lane was not kept.
func TestBuilderLanesFullSubsystems(t *testing.T) {
	msg0, _ := hex.DecodeString("01013218001cffffff3f3477a4422002ff4364ffffffffffff64") // 0x2x
	server := netip.MustParseAddrPort("10.0.0.1:22101")
	client := netip.MustParseAddrPort("10.0.1.2:50000")
	b, ref := NewBuilder(), newRefBuilder()
	emit := func(r *flow.Record) { b.Add(r); ref.Add(r) }
	tr := flow.New(flow.Options{Servers: []netip.AddrPort{server}})
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	frame := 0
	for ship := range maxLanes/3 + 2 {
		for range 3 {
			msg := slices.Clone(msg0)
			obj := uint32(0x3FFFFFFF) + uint32(ship)
			msg[6], msg[7], msg[8], msg[9] = byte(obj), byte(obj>>8), byte(obj>>16), byte(obj>>24)
			wire := make([]byte, len(msg))
			dissect.Encrypt(wire, msg)
			frame++
			ts = ts.Add(time.Millisecond)
			tr.Datagram(frame, ts, server, client, wire, emit)
		}
	}
	tr.Finish(emit)
	m := b.Finish()
	if len(m.Lanes) != maxLanes || m.LanesDropped == 0 {
		t.Fatalf("%d lanes, %d updates dropped: want %d kept and the rest dropped", len(m.Lanes), m.LanesDropped, maxLanes)
	}
	got, _ := json.Marshal(m)
	if want, _ := json.Marshal(ref.Finish()); !bytes.Equal(got, want) {
		t.Fatalf("measures differ from the reference's: %d updates dropped, want %d", m.LanesDropped, ref.lanesDropped)
	}
}
