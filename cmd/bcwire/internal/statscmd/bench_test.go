package statscmd

import (
	"errors"
	"io"
	"os"
	"testing"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/dissect/capture"
)

// benchFile is the capture BenchmarkStatsFile reads: battle.pcap, or the
// file named by $BCWIRE_BENCH_FILE (bench/compare.sh builds a large one).
func benchFile() string {
	if f := os.Getenv("BCWIRE_BENCH_FILE"); f != "" {
		return f
	}
	return "../../../../testdata/pcaps/battle.pcap"
}

// BenchmarkStatsFile is `bcwire stats --json battle.pcap > /dev/null` in
// process: read, decrypt, split, reassemble, decode, build sessions, print.
func BenchmarkStatsFile(b *testing.B) {
	battle := benchFile()
	st, err := os.Stat(battle)
	if err != nil {
		b.Fatal(err)
	}
	dg := 0
	rd, err := capture.Open(battle)
	if err != nil {
		b.Fatal(err)
	}
	for {
		if _, err := rd.Next(); err != nil {
			break
		}
		dg++
	}
	rd.Close()
	b.SetBytes(st.Size())
	b.ReportAllocs()
	for b.Loop() {
		o := &Options{IO: &iostreams.IOStreams{Out: io.Discard, Err: io.Discard}, Files: []string{battle}, JSON: true, Quiet: true}
		// A real peer's capture may hold messages the dissector reports as
		// damaged (exit status 1): that is output, not a failed run.
		var ee *exit.Error
		if err := Run(o); err != nil && !(errors.As(err, &ee) && ee.Code == exit.CodeDamaged) {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(dg)*float64(b.N)/b.Elapsed().Seconds(), "datagrams/s")
}
