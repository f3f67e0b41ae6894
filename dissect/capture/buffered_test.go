package capture

import (
	"bytes"
	"encoding/binary"
	"io"
	"testing"
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

// TestReadAheadWhileBufferedTakesNoSpare reads as flow.Run does, in held
// batches of up to 128 datagrams that go on while Buffered, across the
// buffer's end: every payload of a batch is intact when the batch ends,
// and the input never needs its spare buffer (a second read buffer, half
// a MiB of heap), as the refill goes below the held bytes.
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
