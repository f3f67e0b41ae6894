// Package bench holds the whole-pipeline benchmarks and the comparison
// script (compare.sh). The end-to-end `stats` benchmark lives in
// cmd/bcwire/internal/statscmd (it needs the internal package). The benchmarks are not pass/fail tests: run them with
//
//	go test -run '^$' -bench . -benchmem ./bench/
package bench

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/session"
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
