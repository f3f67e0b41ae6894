package flow

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/capture/capturetest"
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

// BenchmarkRunOpenBC is Run over OpenBC's networked battle test (a real
// peer's traffic, 4,062 datagrams) read from memory: capture reading, the
// batches decrypted together, splitting and decoding, with a new Reader
// and Tracker per pass (one op) and the records dropped. It is the
// dissecting half of `stats`.
func BenchmarkRunOpenBC(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "openbc", "networked-battle.pcap"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	msgs := 0
	for b.Loop() {
		rd, err := capture.NewReader(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		if _, err := Run(rd, New(Options{}), func(r *Record) bool { msgs++; return true }); err != nil {
			b.Fatal(err)
		}
	}
	if msgs == 0 {
		b.Fatal("no records")
	}
}
