package capture

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// nextStep is everything one call of Next shows: what it returned, the
// counters after it and the record LastRecord shows.
func nextStep(r *Reader) string {
	p, err := r.Next()
	rec, ok := r.LastRecord()
	s := fmt.Sprintf("err=%v stats=%+v last=%v %d %v %v % x %d lastGood=%d", err, r.Stats(), ok, rec.Frame, rec.Time, rec.LinkType, rec.Data, rec.OrigLen, r.lastGood)
	if p != nil {
		s += fmt.Sprintf(" packet=%d %d %v %v %v % x %v %+v", p.Frame, p.Interface, p.Time, p.Src, p.Dst, p.Payload, p.Reassembled, p.TCP)
	}
	if err == io.EOF {
		s += fmt.Sprintf(" incomplete=%+v", r.Incomplete())
	}
	return s
}

// compareFastPath reads data with the fused pcap path and without it
// and fails at the first call of Next whose results differ.
func compareFastPath(t *testing.T, data []byte, opts Options) {
	t.Helper()
	fast, err := NewReaderWithOptions(bytes.NewReader(data), opts)
	if err != nil {
		return
	}
	plain, err := NewReaderWithOptions(bytes.NewReader(data), opts)
	if err != nil {
		t.Fatalf("second reader: %v", err)
	}
	plain.pcap = nil
	for i := range len(data) + 2 {
		before := fast.Stats()
		f, p := nextStep(fast), nextStep(plain)
		if f != p {
			t.Fatalf("call %d:\n  fused %s\n  plain %s", i+1, f, p)
		}
		// PlainLast is a promise about the counters: one record and one
		// datagram more, nothing else.
		if want := before; fast.PlainLast() {
			want.Records++
			want.UDP++
			if got := fast.Stats(); got != want {
				t.Fatalf("call %d: PlainLast, but the counters went from %+v to %+v", i+1, before, got)
			}
		}
		if fast.eof {
			return
		}
	}
	t.Fatalf("no io.EOF after %d calls", len(data)+2)
}

// FuzzPcapFastPathMatchesGeneral holds Next's fused path for pcap records
// (nextPcapUDP) to the general one, record by record: packets, errors,
// counters, the record LastRecord shows.
func FuzzPcapFastPathMatchesGeneral(f *testing.F) {
	for _, s := range fuzzSeedFiles(f) {
		f.Add(s, false)
		f.Add(s, true)
	}
	le := binary.LittleEndian
	pkt := ipv4UDP(addrA, addrB, 1, []byte("bridge commander"))
	bad := bytes.Clone(pkt)
	bad[len(bad)-1] ^= 0xff // a wrong UDP checksum
	f.Add(newPcap(le, false, Ethernet, 65535).record(t0, ethernet(etherTypeIPv4, pkt)).
		record(t0, ethernet(etherTypeIPv4, bad)).header(1, 2, 1<<30, 1<<30).raw(make([]byte, 20)).
		record(t0, ethernet(etherTypeIPv4, pkt)).buf, false)
	if b, err := os.ReadFile(filepath.Join("..", "..", "testdata", "openbc", "networked-battle.pcap")); err == nil {
		f.Add(b[:min(len(b), 4096)], false)
	}
	f.Fuzz(func(t *testing.T, data []byte, ignoreChecksums bool) {
		compareFastPath(t, data, Options{MaxFragmentSets: 4, MaxFragmentBytes: 10000, IgnoreChecksums: ignoreChecksums})
	})
}

// The whole of OpenBC's networked battle reads the same both ways, and the
// fused path takes its records (PlainLast says so for nearly all).
func TestPcapFastPathOpenBC(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "openbc", "networked-battle.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	compareFastPath(t, data, Options{})
	r, err := NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	taken := 0
	for {
		if _, err := r.Next(); err == io.EOF {
			break
		}
		if r.PlainLast() {
			taken++
		}
	}
	if st := r.Stats(); taken < st.UDP*9/10 {
		t.Errorf("the fused path took %d of %d datagrams", taken, st.UDP)
	}
}

// BenchmarkReaderPcapPath reads OpenBC's networked battle from memory with
// the fused path (nextPcapUDP) and without it.
func BenchmarkReaderPcapPath(b *testing.B) {
	data, err := os.ReadFile(filepath.Join("..", "..", "testdata", "openbc", "networked-battle.pcap"))
	if err != nil {
		b.Fatal(err)
	}
	for _, fused := range []bool{true, false} {
		b.Run(fmt.Sprintf("fused=%v", fused), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				r, err := NewReader(bytes.NewReader(data))
				if err != nil {
					b.Fatal(err)
				}
				if !fused {
					r.pcap = nil
				}
				for {
					if _, err := r.Next(); err == io.EOF {
						break
					}
				}
			}
		})
	}
}
