// This file holds the reading benchmark and the test that pins the
// steady-state cost of Next at zero allocations per packet.

package capture

import (
	"bytes"
	"fmt"
	"io"
	"net/netip"
	"testing"
	"time"
)

// endless serves a capture's file header once and then its records over and
// over, so that a benchmark can read any number of packets from one Reader
// and measure the per-packet cost alone.
type endless struct {
	header, records []byte
	pos             int // position in header, then in records
	inRecords       bool
}

func (e *endless) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		src := e.records
		if !e.inRecords {
			src = e.header
		}
		k := copy(p[n:], src[e.pos:])
		n += k
		e.pos += k
		if e.pos == len(src) {
			e.pos, e.inRecords = 0, true
		}
	}
	return n, nil
}

// benchCapture builds a capture of many small game-sized datagrams (and,
// if fragmented, some larger ones split at a small MTU) and splits it into
// the file header and the records.
func benchCapture(tb testing.TB, format Format, fragmented bool) (header, records []byte, perRecord int) {
	var hdr, buf bytes.Buffer
	w, err := NewWriter(&hdr, format, Ethernet)
	if err != nil {
		tb.Fatal(err)
	}
	w.Flush()
	headerLen := hdr.Len()
	w, _ = NewWriter(&buf, format, Ethernet)
	w.MTU = 576
	peers := []netip.AddrPort{addrA, addrB, addrC}
	n := 0
	for i := range 1000 {
		size := 20 + i%180
		if fragmented && i%10 == 0 {
			size = 1200
		}
		src, dst := peers[i%3], peers[(i+1)%3]
		if err := w.WriteUDP(t0.Add(time.Duration(i)*time.Millisecond), src, dst, payload(i, size)); err != nil {
			tb.Fatal(err)
		}
		n++
	}
	w.Flush()
	file := buf.Bytes()
	return file[:headerLen], file[headerLen:], (len(file) - headerLen) / n
}

func BenchmarkReader(b *testing.B) {
	for _, format := range []Format{PCAP, PCAPNG} {
		for _, fragmented := range []bool{false, true} {
			name := fmt.Sprintf("%v/fragmented=%v", format, fragmented)
			b.Run(name, func(b *testing.B) {
				header, records, perPacket := benchCapture(b, format, fragmented)
				r, err := NewReader(&endless{header: header, records: records})
				if err != nil {
					b.Fatal(err)
				}
				b.SetBytes(int64(perPacket))
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					if _, err := r.Next(); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// TestNextDoesNotAllocate: once buffers are warm, reading a packet - plain
// or reassembled - allocates nothing.
func TestNextDoesNotAllocate(t *testing.T) {
	if testing.Short() {
		t.Skip("allocation counts are unreliable under some build modes")
	}
	for _, format := range []Format{PCAP, PCAPNG} {
		header, records, _ := benchCapture(t, format, true)
		r, err := NewReader(&endless{header: header, records: records})
		if err != nil {
			t.Fatal(err)
		}
		next := func() {
			if _, err := r.Next(); err != nil && err != io.EOF {
				t.Fatal(err)
			}
		}
		for range 5000 { // warm up: one pass through the records, and more
			next()
		}
		if n := testing.AllocsPerRun(5000, next); n != 0 {
			t.Errorf("%v: %.3f allocations per packet", format, n)
		}
	}
}
