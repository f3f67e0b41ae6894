package dissect

import (
	"github.com/bcwire/bcwire/internal/fixture"
	"testing"
)

// BenchmarkDatagramParse measures the splitter alone: the real stock
// datagrams of realDatagrams (keepalives, ACK bundles, checksum requests,
// fragments), parsed into one reused Datagram. Steady state allocates
// nothing: the message slice is reused.
func BenchmarkDatagramParse(b *testing.B) {
	var plain [][]byte
	size := 0
	for _, c := range realDatagrams {
		if c.want == nil {
			continue
		}
		p := fixture.Unhex(b, c.hex)
		plain = append(plain, p)
		size += len(p)
	}
	if len(plain) == 0 {
		b.Fatal("no datagrams")
	}
	var d Datagram
	b.ReportAllocs()
	b.SetBytes(int64(size))
	b.ResetTimer()
	for b.Loop() {
		for _, p := range plain {
			if err := d.Parse(p); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(plain)), "ns/datagram")
}
