package report

import (
	"bytes"
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/bcwire/bcwire/dissect/capture/capturetest"
	"github.com/bcwire/bcwire/dissect/flow"
)

// printAll prints every record of the captures' datagrams through a
// printer with workers (0: none), as decode does: each capture after
// SetFile (named when name is set), every record observed, every third
// one after the first thousand filtered out. With lazy, the Tracker
// leaves the StateUpdates to the printer (and to a LazyDecoder for those
// filtered out). It returns the output and the Tracker's Stats, completed
// with the Lazy records' counts.
func printAll(tb testing.TB, caps [][]capturetest.Datagram, format DecodeFormat, color bool, tf TimeFormat, name bool, workers int, lazy bool) ([]byte, flow.Stats) {
	var out bytes.Buffer
	var stats flow.Stats
	var dropped flow.LazyDecoder
	p := NewDecodePrinter(&out, format, color)
	p.SetTimeFormat(tf)
	p.SetWorkers(workers)
	for i, dgs := range caps {
		file := ""
		if name {
			file = fmt.Sprintf("capture%d.pcap", i)
		}
		p.SetFile(file)
		tr := flow.New(flow.Options{})
		tr.DeferStateUpdates(lazy)
		n := 0
		emit := func(r *flow.Record) {
			p.Observe(r)
			if n++; n > 1000 && n%3 == 0 {
				if r.Lazy {
					dropped.Count(r)
				}
				return
			}
			if err := p.Print(r); err != nil {
				tb.Fatal(err)
			}
		}
		for _, d := range dgs {
			tr.Datagram(d.Frame, d.Time, d.Src, d.Dst, d.Payload, emit)
		}
		tr.Finish(emit)
		if err := p.Flush(); err != nil {
			tb.Fatal(err)
		}
		st := tr.Stats()
		p.AddLazyStats(&st)
		dropped.AddTo(&st)
		stats.GameMessages += st.GameMessages
		stats.GameErrors += st.GameErrors
		stats.NonStock += st.NonStock
		stats.Warnings += st.Warnings
	}
	return out.Bytes(), stats
}

// A printer with workers writes what the serial printer writes, in every
// format, in color, with each time format and with file names, on the
// battle and OpenBC's battle (one after the other, as decode a b does);
// so does either printer given a Tracker's Lazy StateUpdates to decode,
// whose counts complete the Tracker's as its own decoding would have.
func TestDecodePrinterWorkersSameOutput(t *testing.T) {
	caps := [][]capturetest.Datagram{
		capturetest.LoadBattle(t),
		capturetest.LoadCapture(t, filepath.Join("testdata", "openbc", "networked-battle.pcap")),
	}
	for _, c := range []struct {
		format DecodeFormat
		color  bool
		tf     TimeFormat
		name   bool
	}{
		{DecodeText, false, TimeRelative, false},
		{DecodeText, true, TimeDelta, true},
		{DecodeVerbose, false, TimeEpoch, false},
		{DecodeJSON, false, TimeRelative, true},
		{DecodeJSON, false, TimeRelative, false},
	} {
		want, wstats := printAll(t, caps, c.format, c.color, c.tf, c.name, 0, false)
		if len(want) < 100000 {
			t.Fatalf("%+v: only %d bytes", c, len(want))
		}
		for _, workers := range []int{0, 2, 3} {
			for _, lazy := range []bool{false, true} {
				if workers == 0 && !lazy {
					continue
				}
				got, stats := printAll(t, caps, c.format, c.color, c.tf, c.name, workers, lazy)
				if !bytes.Equal(got, want) {
					t.Errorf("%+v, %d workers, lazy %v: %d bytes differ from the serial printer's %d", c, workers, lazy, len(got), len(want))
				}
				if stats != wstats {
					t.Errorf("%+v, %d workers, lazy %v: counts %+v, want %+v", c, workers, lazy, stats, wstats)
				}
			}
		}
	}
}

// BenchmarkDecodePrinterWorkers decodes and prints the battle with the
// serial printer and with two workers: wall time per record, meaningful
// on an idle machine only (on a loaded one the process with more runnable
// threads gets more of the CPU, which flatters the workers).
func BenchmarkDecodePrinterWorkers(b *testing.B) {
	caps := [][]capturetest.Datagram{capturetest.LoadBattle(b)}
	for _, format := range []DecodeFormat{DecodeText, DecodeJSON} {
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("format=%d/workers=%d", format, workers), func(b *testing.B) {
				records := 0
				p := NewDecodePrinter(io.Discard, format, false)
				p.SetWorkers(workers)
				tr := flow.New(flow.Options{})
				emit := func(r *flow.Record) {
					records++
					if err := p.Print(r); err != nil {
						b.Fatal(err)
					}
				}
				for b.Loop() {
					p.SetFile("")
					for _, d := range caps[0] {
						tr.Datagram(d.Frame, d.Time, d.Src, d.Dst, d.Payload, emit)
					}
					if err := p.Flush(); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(records), "ns/record")
			})
		}
	}
}
