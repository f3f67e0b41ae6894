package capture

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"testing"
	"testing/iotest"
	"time"
)

// bigCaptures are a pcap (each byte order) and a pcapng file of 6000
// datagrams, 2.5 MiB: the read buffer is refilled several times, with
// records cut by its end.
func bigCaptures(t testing.TB) (map[string][]byte, [][]byte) {
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

// readRequests records the size of every Read asked of the file, and
// tells newInput that the file holds only len bytes, so that the read
// buffer is that small.
type readRequests struct {
	r     io.Reader
	len   int
	sizes []int
}

func (r *readRequests) Len() int { return r.len }

func (r *readRequests) Read(p []byte) (int, error) {
	r.sizes = append(r.sizes, len(p))
	return r.r.Read(p)
}

// TestReadAheadWhileBufferedTakesNoSpare reads as flow.Run does, in held
// batches that go on while Buffered, across the buffer's end, up to 128
// datagrams or an eighth of the buffer (flow's 64 KiB of 512): every
// payload of a batch is intact when the batch ends, the input never needs
// its spare buffer (a second read buffer, half a MiB of heap) as the
// refill goes below the held bytes or after the data, and no read asks for
// less than a quarter of the buffer: refilling below the held bytes alone
// shrank the data by a batch at each refill, down to the spare.
func TestReadAheadWhileBufferedTakesNoSpare(t *testing.T) {
	files, want := bigCaptures(t)
	for name, file := range files {
		for _, bufLen := range []int{bufSize, 16 << 10} {
			reqs := &readRequests{r: bytes.NewReader(file), len: bufLen - 1}
			r, err := NewReader(reqs)
			if err != nil {
				t.Fatal(err)
			}
			if got := len(r.in.buf); got != bufLen {
				t.Fatalf("buffer of %d bytes, want %d", got, bufLen)
			}
			i := 0
			for eof := false; !eof; {
				r.Hold()
				var held [][]byte
				size := 0
				for len(held) == 0 || (r.Buffered() > 0 && len(held) < 128 && size < bufLen/8) {
					p, err := r.Next()
					if err == io.EOF {
						eof = true
						break
					}
					if err != nil {
						t.Fatalf("%s: %v", name, err)
					}
					held = append(held, p.Payload)
					size += len(p.Payload)
				}
				for k, got := range held {
					if !bytes.Equal(got, want[i+k]) {
						t.Fatalf("%s, %d-byte buffer: datagram %d changed under Hold", name, bufLen, i+k+1)
					}
				}
				i += len(held)
				r.Release()
			}
			if i != len(want) {
				t.Fatalf("%s, %d-byte buffer: read %d datagrams, want %d", name, bufLen, i, len(want))
			}
			if r.in.spare != nil {
				t.Errorf("%s, %d-byte buffer: the input took a spare buffer of %d bytes", name, bufLen, len(r.in.spare))
			}
			// The first read is decompress's peek (bufio's 64 bytes).
			for k, n := range reqs.sizes[1:] {
				if n < bufLen/4 {
					t.Errorf("%s, %d-byte buffer: read %d of %d asks for %d bytes", name, bufLen, k+2, len(reqs.sizes), n)
					break
				}
			}
			if len(reqs.sizes) < len(file)/bufLen {
				t.Errorf("%s, %d-byte buffer: %d reads of %d bytes: the buffer was not refilled as often as meant", name, bufLen, len(reqs.sizes), len(file))
			}
		}
	}
}

// FuzzHeldReadMatchesPlain reads a capture twice: one datagram at a time,
// and in held batches read ahead while Buffered (of batch datagrams or an
// eighth of the buffer) through a small buffer refilled by reads of any
// size. Both must give the same datagrams and errors, and every payload of
// a batch must be intact when the batch ends.
func FuzzHeldReadMatchesPlain(f *testing.F) {
	for _, s := range fuzzSeedFiles(f) {
		f.Add(s, uint8(8), uint16(4096), false)
	}
	files, _ := bigCaptures(f)
	f.Add(files["pcap LittleEndian"][:200000], uint8(128), uint16(16384), true)
	f.Add(files["pcapng BigEndian"][:100000], uint8(3), uint16(8192), false)
	f.Fuzz(func(t *testing.T, data []byte, batch uint8, bufLen uint16, halves bool) {
		opts := Options{MaxFragmentSets: 4, MaxFragmentBytes: 10000}
		plain, err := NewReaderWithOptions(bytes.NewReader(data), opts)
		if err != nil {
			return
		}
		var src io.Reader = bytes.NewReader(data)
		if halves {
			src = iotest.HalfReader(src)
		}
		held, err := NewReaderWithOptions(&readRequests{r: src, len: int(bufLen)}, opts)
		if err != nil {
			t.Fatalf("held reader: %v", err)
		}
		type step struct {
			payload []byte
			err     string
		}
		var want []step
		for range len(data) + 2 {
			p, err := plain.Next()
			if err == io.EOF {
				break
			}
			s := step{err: fmt.Sprint(err)}
			if p != nil {
				s.payload = bytes.Clone(p.Payload)
			}
			want = append(want, s)
		}
		i, eof := 0, false
		for calls := 0; !eof && calls <= len(data)+2; {
			held.Hold()
			var got []step
			size := 0
			for len(got) == 0 || (held.Buffered() > 0 && len(got) < max(int(batch), 1) && size < len(held.in.buf)/8) {
				p, err := held.Next()
				calls++
				if err == io.EOF {
					eof = true
					break
				}
				s := step{err: fmt.Sprint(err)}
				if p != nil && !p.Reassembled {
					s.payload = p.Payload // not copied: Hold keeps it
					size += len(p.Payload)
				} else if p != nil {
					s.payload = bytes.Clone(p.Payload)
				}
				got = append(got, s)
			}
			for k, s := range got {
				if i+k >= len(want) || s.err != want[i+k].err || !bytes.Equal(s.payload, want[i+k].payload) {
					t.Fatalf("step %d: held %q % x, plain %+v", i+k+1, s.err, s.payload, want[min(i+k, len(want)-1)])
				}
			}
			i += len(got)
			held.Release()
		}
		if !eof || i != len(want) {
			t.Fatalf("held read %d steps (end %v), plain %d", i, eof, len(want))
		}
	})
}
