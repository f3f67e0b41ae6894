package report

import (
	"fmt"
	"io"
	"path/filepath"
	"testing"

	"github.com/bcwire/bcwire/dissect/capture/capturetest"
	"github.com/bcwire/bcwire/dissect/flow"
)

// BenchmarkFormatRecords formats the records of the battle and of OpenBC's
// battle that decode hands its workers (copied once, as Print copies
// them), as a worker formats them: the formatting alone, without decoding,
// copying or writing. ns/record is per record formatted.
func BenchmarkFormatRecords(b *testing.B) {
	captures := map[string][]capturetest.Datagram{
		"battle": capturetest.LoadBattle(b),
		"openbc": capturetest.LoadCapture(b, filepath.Join("testdata", "openbc", "networked-battle.pcap")),
	}
	for _, name := range []string{"battle", "openbc"} {
		for _, format := range []DecodeFormat{DecodeText, DecodeJSON} {
			caps := [][]capturetest.Datagram{captures[name]}
			b.Run(fmt.Sprintf("capture=%s/format=%d", name, format), func(b *testing.B) {
				p := NewDecodePrinter(io.Discard, format, false)
				batch := &fmtBatch{}
				for _, dgs := range caps {
					p.SetFile("")
					tr := flow.New(flow.Options{})
					emit := func(r *flow.Record) {
						p.Observe(r)
						if deferrable(r) {
							batch.next().take(p, batch, r)
						}
					}
					for _, d := range dgs {
						tr.Datagram(d.Frame, d.Time, d.Src, d.Dst, d.Payload, emit)
					}
				}
				f := &DecodePrinter{format: p.format, color: p.color, pal: p.pal}
				var out []byte
				bytes := 0
				for b.Loop() {
					bytes = 0
					for i := range batch.recs {
						e := &batch.recs[i]
						f.clock, f.file, f.jsonFile, f.gameJSON = e.clock, e.file, e.jsonFile, e.gameJSON
						out = f.appendRecord(out[:0], &e.rec)
						bytes += len(out)
					}
				}
				b.SetBytes(int64(bytes))
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(len(batch.recs))/float64(b.N), "ns/record")
			})
		}
	}
}
