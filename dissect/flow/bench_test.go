package flow

import (
	"io"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect/capture"
)

type benchDatagram struct {
	frame    int
	ts       time.Time
	src, dst netip.AddrPort
	payload  []byte
}

// loadBattle reads every UDP datagram of the bundled 4-player battle.
func loadBattle(tb testing.TB) []benchDatagram {
	tb.Helper()
	rd, err := capture.Open(filepath.Join("..", "..", "testdata", "pcaps", "battle.pcap"))
	if err != nil {
		tb.Fatal(err)
	}
	defer rd.Close()
	var out []benchDatagram
	for {
		p, err := rd.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, benchDatagram{p.Frame, p.Time, p.Src, p.Dst, append([]byte(nil), p.Payload...)})
	}
}

// benchTracker runs the datagrams through one Tracker per pass (one op is
// one pass), after a warm-up pass that grows the reused buffers.
func benchTracker(b *testing.B, dgs []benchDatagram) {
	n := 0
	for _, d := range dgs {
		n += len(d.payload)
	}
	sink := 0
	emit := func(r *Record) { sink += r.MsgCount }
	tr := New(Options{})
	for _, d := range dgs {
		tr.Datagram(d.frame, d.ts, d.src, d.dst, d.payload, emit)
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		for _, d := range dgs {
			tr.Datagram(d.frame, d.ts, d.src, d.dst, d.payload, emit)
		}
	}
	b.ReportMetric(float64(len(dgs))*float64(b.N)/b.Elapsed().Seconds(), "datagrams/s")
}

// BenchmarkTrackerBattle decrypts, splits, reassembles and decodes every
// datagram of battle.pcap (joins included).
func BenchmarkTrackerBattle(b *testing.B) { benchTracker(b, loadBattle(b)) }

// BenchmarkTrackerSteady is the second half of the battle: four players in
// game, StateUpdates, fire, events, keepalives, chat. It must not allocate.
func BenchmarkTrackerSteady(b *testing.B) {
	dgs := loadBattle(b)
	benchTracker(b, dgs[len(dgs)/2:])
}
