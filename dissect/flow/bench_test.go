package flow

import (
	"github.com/bcwire/bcwire/dissect/capture/capturetest"
	"testing"
)

// benchTracker runs the datagrams through one Tracker per pass (one op is
// one pass), after a warm-up pass that grows the reused buffers.
func benchTracker(b *testing.B, dgs []capturetest.Datagram) {
	n := 0
	for _, d := range dgs {
		n += len(d.Payload)
	}
	sink := 0
	emit := func(r *Record) { sink += r.MsgCount }
	tr := New(Options{})
	for _, d := range dgs {
		tr.Datagram(d.Frame, d.Time, d.Src, d.Dst, d.Payload, emit)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range dgs {
			tr.Datagram(d.Frame, d.Time, d.Src, d.Dst, d.Payload, emit)
		}
	}
	b.ReportMetric(float64(len(dgs))*float64(b.N)/b.Elapsed().Seconds(), "datagrams/s")
}

// BenchmarkTrackerBattle decrypts, splits, reassembles and decodes every
// datagram of battle.pcap (joins included).
func BenchmarkTrackerBattle(b *testing.B) { benchTracker(b, capturetest.LoadBattle(b)) }

// BenchmarkTrackerSteady is the second half of the battle: four players in
// game, StateUpdates, fire, events, keepalives, chat. It must not allocate.
func BenchmarkTrackerSteady(b *testing.B) {
	dgs := capturetest.LoadBattle(b)
	benchTracker(b, dgs[len(dgs)/2:])
}
