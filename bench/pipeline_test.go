// Package bench holds the whole-pipeline benchmarks and the scripts that
// measure bcwire: compare.sh (against tshark), live-cpu.sh (live's CPU
// beside a server's traffic) and same-output.sh (two builds' outputs of
// every bundled capture, byte for byte). The end-to-end `stats` benchmark lives in
// cmd/bcwire/internal/statscmd (it needs the internal package). The benchmarks are not pass/fail tests: run them with
//
//	go test -run '^$' -bench . -benchmem ./bench/
package bench

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/capture/capturetest"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/report/metrics"
	"github.com/bcwire/bcwire/session"
	"github.com/bcwire/bcwire/session/measure"
)

var battle = filepath.Join("..", "testdata", "pcaps", "battle.pcap")

// BenchmarkFileRun is capture reading plus the flow Tracker plus the session
// Builder (what stats does, without printing), for the allocation count.
func BenchmarkFileRun(b *testing.B) {
	st, err := os.Stat(battle)
	if err != nil {
		b.Fatal(err)
	}
	dg := countDatagrams(b)
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		rd, err := capture.Open(battle)
		if err != nil {
			b.Fatal(err)
		}
		bl := session.NewBuilder(session.Options{}, func(*session.Session) {})
		tr := flow.New(flow.Options{})
		if _, err := flow.Run(rd, tr, func(r *flow.Record) bool { bl.Add(r); return true }); err != nil {
			b.Fatal(err)
		}
		bl.Finish()
		rd.Close()
	}
	b.ReportMetric(float64(dg)*float64(b.N)/b.Elapsed().Seconds(), "datagrams/s")
}

func countDatagrams(tb testing.TB) int {
	rd, err := capture.Open(battle)
	if err != nil {
		tb.Fatal(err)
	}
	defer rd.Close()
	n := 0
	for {
		_, err := rd.Next()
		if err == io.EOF {
			return n
		}
		if err != nil {
			tb.Fatal(err)
		}
		n++
	}
}

// steadyCorpus are the captures the steady-state benchmarks replay: the
// project's own battle, and OpenBC's networked battle test recorded against
// OpenBC's server (interop/record-openbc-battle.sh), a real peer's traffic
// whose mix of opcodes and sizes differs from the generated one.
var steadyCorpus = []struct{ name, path string }{
	{"battle", filepath.Join("testdata", "pcaps", "battle.pcap")},
	{"openbc-battle", filepath.Join("testdata", "openbc", "networked-battle.pcap")},
}

// BenchmarkPipelineSteady runs the middle third of each battle (players in
// game) through a Tracker and a session Builder, over and over with the
// clock moved on each pass so that the sessions simply continue. One op is
// one pass; steady state allocates nothing (the strings of the chat,
// ship-creation and player-leave messages come from the game Decoder's
// intern table).
func BenchmarkPipelineSteady(b *testing.B) {
	for _, c := range steadyCorpus {
		b.Run(c.name, func(b *testing.B) { pipelineSteady(b, c.path, steadyPlain) })
	}
}

// BenchmarkPipelineSteadyMeasures is BenchmarkPipelineSteady with what
// `stats --json` adds by default: every record also goes to a
// measure.Builder (cadence per ship lane, flag families, relay matrix, ...).
// The difference between the two is the measures' cost per pass; steady
// state allocates nothing here either.
func BenchmarkPipelineSteadyMeasures(b *testing.B) {
	for _, c := range steadyCorpus {
		b.Run(c.name, func(b *testing.B) { pipelineSteady(b, c.path, steadyMeasures) })
	}
}

// BenchmarkPipelineSteadyMetrics is BenchmarkPipelineSteady with what
// --metrics adds: every record observed by a metrics.Dissector, and a
// snapshot taken every 200 passes (about once a second of decoding, as
// live takes it once a second of traffic). Compare the two with benchstat
// (see README, Metrics).
func BenchmarkPipelineSteadyMetrics(b *testing.B) {
	for _, c := range steadyCorpus {
		b.Run(c.name, func(b *testing.B) { pipelineSteady(b, c.path, steadyMetrics) })
	}
}

// What pipelineSteady feeds the records to besides the session Builder.
const (
	steadyPlain = iota
	steadyMetrics
	steadyMeasures
)

func pipelineSteady(b *testing.B, path string, with int) {
	all := capturetest.LoadCapture(b, path)
	dgs := all[len(all)/3 : 2*len(all)/3]
	span := dgs[len(dgs)-1].Time.Sub(dgs[0].Time) + 100*time.Millisecond
	n := 0
	for _, d := range dgs {
		n += len(d.Payload)
	}
	tr := flow.New(flow.Options{})
	bl := session.NewBuilder(session.Options{}, nil)
	emit := func(r *flow.Record) { bl.Add(r) }
	var md *metrics.Dissector
	switch with {
	case steadyMetrics:
		md = metrics.NewDissector()
		emit = func(r *flow.Record) { bl.Add(r); md.Observe(r) }
	case steadyMeasures:
		mb := measure.NewBuilder()
		emit = func(r *flow.Record) { bl.Add(r); mb.Add(r) }
	}
	shift := time.Duration(0)
	passes := 0
	pass := func() {
		for _, d := range dgs {
			tr.Datagram(d.Frame, d.Time.Add(shift), d.Src, d.Dst, d.Payload, emit)
		}
		shift += span
		if passes++; md != nil && passes%200 == 0 {
			md.Update(bl, tr.Stats(), capture.Stats{})
		}
	}
	for _, d := range all[:len(all)/3] {
		tr.Datagram(d.Frame, d.Time, d.Src, d.Dst, d.Payload, emit)
	}
	// Warm up until every session's event list is full: each pass adds
	// events (retransmission bursts of the replayed reliable messages,
	// ships), and until a list is full its texts are built and stored.
	for range 400 {
		pass()
	}
	b.SetBytes(int64(n))
	b.ReportAllocs()
	for b.Loop() {
		pass()
	}
	b.ReportMetric(float64(len(dgs))*float64(b.N)/b.Elapsed().Seconds(), "datagrams/s")
}

// BenchmarkStatsRun is what `stats --json` does with each capture of the
// corpus, whole, from the file on: the tracker and the session Builder
// ("sessions", as --no-measures), and the same with the measures beside
// them ("measures", the default). Unlike the steady benchmarks it counts
// what a capture's start costs: new clients, sessions and lanes.
func BenchmarkStatsRun(b *testing.B) {
	for _, c := range steadyCorpus {
		for _, withMeasures := range []bool{false, true} {
			name := c.name + "/sessions"
			if withMeasures {
				name = c.name + "/measures"
			}
			b.Run(name, func(b *testing.B) { statsRun(b, filepath.Join("..", c.path), withMeasures) })
		}
	}
}

func statsRun(b *testing.B, path string, withMeasures bool) {
	st, err := os.Stat(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		rd, err := capture.Open(path)
		if err != nil {
			b.Fatal(err)
		}
		bl := session.NewBuilder(session.Options{}, func(*session.Session) {})
		emit := func(r *flow.Record) bool { bl.Add(r); return true }
		var mb *measure.Builder
		if withMeasures {
			mb = measure.NewBuilder()
			emit = func(r *flow.Record) bool { bl.Add(r); mb.Add(r); return true }
		}
		if _, err := flow.Run(rd, flow.New(flow.Options{}), emit); err != nil {
			b.Fatal(err)
		}
		bl.Finish()
		if mb != nil {
			mb.Finish()
		}
		rd.Close()
	}
}
