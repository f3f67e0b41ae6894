package dissect_test

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
)

// BenchmarkDatagramParseBattle splits the decrypted game datagrams of
// battle.pcap, the mix a whole-capture run parses (mostly data messages
// and ACKs), into one reused Datagram.
func BenchmarkDatagramParseBattle(b *testing.B) {
	rd, err := capture.Open(filepath.Join("..", "testdata", "pcaps", "battle.pcap"))
	if err != nil {
		b.Fatal(err)
	}
	var plain [][]byte
	size := 0
	var d dissect.Datagram
	for {
		p, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			continue
		}
		dec := make([]byte, len(p.Payload))
		dissect.Decrypt(dec, p.Payload)
		if d.Parse(dec) == nil {
			plain = append(plain, dec)
			size += len(dec)
		}
	}
	rd.Close()
	if len(plain) == 0 {
		b.Fatal("no datagrams")
	}
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
