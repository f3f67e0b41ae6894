package flow

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/capture/capturetest"
)

// Stopped early, RunParallel must report the capture counters Run does:
// as they were after reading the datagram whose records emit stopped in,
// not as far as the reading goroutine got. The counters are kept whole
// only where a datagram changed them otherwise than by one record and one
// datagram (statsAfter counts the rest), so every stopping point of
// captures with damage and GameSpy, and of one whose datagrams come between
// skipped records and IPv4 fragments (mixedCapture), through the Reader
// itself and through a source that hides it (counters kept whole after
// every datagram).
func TestParallelStopEarlySummaryMatchesRun(t *testing.T) {
	for _, path := range []string{"../../testdata/pcaps/lossy.pcap", "../../testdata/pcaps/damaged.pcap",
		"../../testdata/pcaps/duel.pcapng", mixedCapture(t), "../../testdata/openbc/networked-battle.pcap"} {
		// run opens the capture, through a source that hides the Reader
		// when hidden, and stops after stopAt records.
		run := func(hidden bool, workers, stopAt int) Summary {
			rd, err := capture.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer rd.Close()
			var src Source = rd
			if hidden {
				src = &countingSource{Reader: rd}
			}
			n := 0
			emit := func(*Record) bool { n++; return n < stopAt }
			var sum Summary
			if workers == 0 {
				sum, err = Run(src, New(Options{}), emit)
			} else {
				sum, err = RunParallel(src, New(Options{}), workers, emit)
			}
			if err != nil {
				t.Fatal(err)
			}
			return sum
		}
		total := run(false, 0, 1<<30)
		records := total.Flow.Messages + total.Flow.GameSpy + total.Damage
		step := max(1, records/150) // the large captures at some 150 points
		for stop := 1; stop <= records+1; stop += step {
			want := run(true, 0, stop) // one datagram at a time
			if got := run(false, 2, stop); got != want {
				t.Fatalf("%s stopped at record %d:\n  RunParallel %+v\n  Run         %+v", path, stop, got, want)
			}
			if got := run(true, 1, stop); got != want {
				t.Fatalf("%s stopped at record %d, hidden Reader:\n  RunParallel %+v\n  Run         %+v", path, stop, got, want)
			}
		}
	}
}

// mixedCapture writes join.pcap's datagrams to a pcap in a temporary
// directory with, between them, records the Reader skips (ARP) and
// datagrams fragmented to fit a small MTU: reads that change the capture
// counters otherwise than by one record and one datagram, in the middle of
// RunParallel's batches. It returns the file's path.
func mixedCapture(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "mixed.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := capture.NewWriter(f, capture.PCAP, capture.Ethernet)
	if err != nil {
		t.Fatal(err)
	}
	arp := make([]byte, 42)
	arp[12], arp[13] = 0x08, 0x06
	for i, d := range capturetest.LoadCapture(t, filepath.Join("testdata", "pcaps", "join.pcap")) {
		if i%5 == 3 {
			if err := w.WriteRaw(d.Time, arp); err != nil {
				t.Fatal(err)
			}
		}
		w.MTU = 0
		if i%7 == 2 {
			w.MTU = 68 // fragments of 48 bytes
		}
		if err := w.WriteUDP(d.Time, d.Src, d.Dst, d.Payload); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return path
}
