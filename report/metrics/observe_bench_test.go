package metrics

import (
	"testing"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture/capturetest"
	"github.com/bcwire/bcwire/dissect/flow"
)

// BenchmarkObserve is what --metrics adds per record on the decode path:
// Observe over every record of the battle (copied aside once). Compare its
// ns/record with BenchmarkPipelineSteady's time per record (bench/).
func BenchmarkObserve(b *testing.B) {
	var recs []flow.Record
	tr := flow.New(flow.Options{})
	for _, d := range capturetest.LoadBattle(b) {
		tr.Datagram(d.Frame, d.Time, d.Src, d.Dst, d.Payload, func(r *flow.Record) {
			c := *r
			if r.Msg != nil {
				m := *r.Msg
				c.Msg = &m
			}
			c.Game, c.Control, c.GameSpy, c.Datagram = nil, nil, nil, make([]byte, len(r.Datagram))
			recs = append(recs, c)
		})
	}
	var msgs int
	for i := range recs {
		if recs[i].Msg != nil && recs[i].Msg.Type != dissect.TypeAck {
			msgs++
		}
	}
	d := NewDissector()
	b.ReportAllocs()
	for b.Loop() {
		for i := range recs {
			d.Observe(&recs[i])
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(recs)), "ns/record")
	b.ReportMetric(float64(len(recs)), "records")
}
