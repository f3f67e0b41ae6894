package capture

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"
	"testing/iotest"
	"time"
)

// bigCaptures are a pcap (each byte order) and a pcapng file of 6000
// datagrams, 2.5 MiB: the read buffer is refilled several times, with
// records cut by its end.
func bigCaptures(t *testing.T) (map[string][]byte, [][]byte) {
	t.Helper()
	files := map[string][]byte{}
	var want [][]byte
	for _, order := range []byteOrder{binary.LittleEndian, binary.BigEndian} {
		p := newPcap(order, false, Ethernet, 65535)
		ng := newNg(order).idb(Ethernet, 65535)
		want = want[:0]
		for i := range 6000 {
			pl := payload(i, 20+i*13%700)
			want = append(want, pl)
			frame := ethernet(etherTypeIPv4, ipv4UDP(addrA, addrB, uint16(i), pl))
			p.record(t0.Add(time.Duration(i)*time.Millisecond), frame)
			ng.epb(0, uint64(t0.Add(time.Duration(i)*time.Millisecond).UnixMicro()), frame)
		}
		files["pcap "+order.String()] = p.buf
		files["pcapng "+order.String()] = ng.buf
	}
	return files, want
}

// TestBufferedHoldsBackCutRecord checks Buffered against the record at the
// reading position: positive when it lies whole in the buffer, 0 when the
// end of the buffer cuts it (reading it would read the file).
func TestBufferedHoldsBackCutRecord(t *testing.T) {
	files, _ := bigCaptures(t)
	for name, file := range files {
		for _, half := range []bool{false, true} {
			src := io.Reader(bytes.NewReader(file))
			if half {
				src = iotest.HalfReader(src)
			}
			r, err := NewReader(src)
			if err != nil {
				t.Fatal(err)
			}
			cut, whole := 0, 0
			for {
				in := r.in
				n, b := r.Buffered(), in.buf[in.pos:in.end]
				wholeNext := false
				if len(b) >= 16 {
					l := 0
					if r.pcap != nil {
						l = 16 + int(r.pcap.order.Uint32(b[8:]))
					} else {
						l = int(r.ng.order.Uint32(b[4:]))
					}
					wholeNext = len(b) >= l
				}
				switch {
				case wholeNext && n != len(b):
					t.Fatalf("%s: Buffered %d with the next record whole in %d bytes", name, n, len(b))
				case !wholeNext && n != 0:
					t.Fatalf("%s: Buffered %d with the next record cut at %d bytes", name, n, len(b))
				case wholeNext:
					whole++
				default:
					cut++
				}
				if _, err := r.Next(); err == io.EOF {
					break
				} else if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
			}
			if cut == 0 || whole == 0 {
				t.Fatalf("%s: %d records cut and %d whole: the test reads nothing cut by the buffer's end", name, cut, whole)
			}
		}
	}
}

// TestReadAheadWhileBufferedTakesNoSpare reads as flow.Run does, in held
// batches that go on only while Buffered: every payload of a batch is
// intact when the batch ends, and the input never needs its spare buffer
// (a second read buffer, half a MiB of heap).
func TestReadAheadWhileBufferedTakesNoSpare(t *testing.T) {
	files, want := bigCaptures(t)
	for name, file := range files {
		r, err := NewReader(bytes.NewReader(file))
		if err != nil {
			t.Fatal(err)
		}
		i, batches := 0, 0
		for eof := false; !eof; batches++ {
			r.Hold()
			var held [][]byte
			for len(held) == 0 || (r.Buffered() > 0 && len(held) < 128) {
				p, err := r.Next()
				if err == io.EOF {
					eof = true
					break
				}
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				held = append(held, p.Payload)
			}
			for k, got := range held {
				if !bytes.Equal(got, want[i+k]) {
					t.Fatalf("%s: datagram %d changed under Hold", name, i+k+1)
				}
			}
			i += len(held)
			r.Release()
		}
		if i != len(want) {
			t.Fatalf("%s: read %d datagrams, want %d", name, i, len(want))
		}
		if r.in.spare != nil {
			t.Errorf("%s: the input took a spare buffer of %d bytes", name, len(r.in.spare))
		}
	}
}
