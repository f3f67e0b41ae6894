package capture_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"os"
	"runtime/metrics"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/dissect/capture"
)

// FuzzTraceLog feeds the packet_trace.log and OBCTRACE readers anything
// (seeded with both): they never panic, hands out only datagrams a UDP
// frame can hold, and always reaches the end.
func FuzzTraceLog(f *testing.F) {
	for _, name := range []string{"join.packet_trace.log", "obc-restart.packet_trace.log"} {
		b, err := os.ReadFile(tracePath(name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:min(len(b), 6000)])
	}
	if zr, err := os.Open(tracePath("edge.packet_trace.log.gz")); err == nil {
		gz, _ := gzip.NewReader(zr)
		b, _ := io.ReadAll(gz)
		zr.Close()
		f.Add(b[:min(len(b), 8000)])
	}
	f.Add([]byte("#1 C->S len=3\nDecrypted:\n 0000: 02 00 00 |...|\n"))
	f.Add([]byte("[23:59:59.999] #1 S->? unknown len=2049 rc=-1 GAMESPY\n  Hex:\n    ... (1 bytes truncated)\n"))
	f.Add(append([]byte("OBCTRACE\x03\x00\x00\x00S\x01\x02\x00\x1c\x00"), "\x09\x00\x00\x00R\x02\x08\x00\x80\x00\x00\x02\x7f\x00\x00\x01"...))
	f.Fuzz(func(t *testing.T, data []byte) {
		rd, err := capture.NewReader(bytes.NewReader(data))
		if err != nil {
			return
		}
		for n := 0; ; n++ {
			if n > len(data)+10 {
				t.Fatalf("more than %d results from %d bytes", n, len(data))
			}
			p, err := rd.Next()
			if err == io.EOF {
				return
			}
			var pe *capture.PacketError
			if errors.As(err, &pe) {
				if pe.Packet != nil && len(pe.Packet.Payload) > 65507 {
					t.Fatalf("damaged datagram of %d bytes", len(pe.Packet.Payload))
				}
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Payload) > 65507 {
				t.Fatalf("datagram of %d bytes", len(p.Payload))
			}
		}
	})
}

// lineSource streams n lines made by line(i), without holding them.
type lineSource struct {
	n, i int
	line func(i int) string
	buf  []byte
}

func (l *lineSource) Read(p []byte) (int, error) {
	for len(l.buf) < len(p) && l.i < l.n {
		l.buf = append(l.buf, l.line(l.i)...)
		l.buf = append(l.buf, '\n')
		l.i++
	}
	if len(l.buf) == 0 {
		return 0, io.EOF
	}
	k := copy(p, l.buf)
	l.buf = l.buf[:copy(l.buf, l.buf[k:])]
	return k, nil
}

func heapAllocs() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// A log of ten million lines is read as a stream: what the reader
// allocates does not grow with it, whether the lines are blocks or
// garbage.
func TestTraceLogTenMillionLines(t *testing.T) {
	if testing.Short() {
		t.Skip("ten million lines")
	}
	const lines = 10_000_000
	block := []string{
		"[12:00:00.000] #1 C->S Peer#0(10.0.1.10:50000) len=20 rc=20 [ACK]",
		"  Decrypted:",
		"    0000: 02 03 05 0A C0 02 00 02 0A 0A 0A EF 01 27 00 00  |.............'..|",
		"    0010: 01 28 00 00                                      |.(..|",
		"  DECODE: peer=C(2) msgs=3",
		"",
	}
	garbage := "garbage " + strings.Repeat("x", 50)
	for _, c := range []struct {
		name       string
		line       func(i int) string
		good, damp int
	}{
		{"blocks", func(i int) string { return block[i%len(block)] }, (lines + len(block) - 1) / len(block), 0},
		// After 16 MiB of lines that are no log (Options.MaxUnreadable)
		// the reader gives up: ErrUnreadable ends the reports, each a run
		// of 1 MiB of stray lines.
		{"garbage", func(i int) string {
			if i < len(block) {
				return block[i]
			}
			return garbage[:8+i%50]
		}, 1, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := heapAllocs()
			rd, err := capture.NewReader(&lineSource{n: lines, line: c.line})
			if err != nil {
				t.Fatal(err)
			}
			good, bad := 0, 0
			var last error
			for {
				_, err := rd.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					bad, last = bad+1, err
					continue
				}
				good++
			}
			if c.damp < 0 {
				if bad < 16 || bad > 20 || !errors.Is(last, capture.ErrUnreadable) {
					t.Errorf("%d damaged, the last %v; want about 17 reports, ErrUnreadable last", bad, last)
				}
				bad = c.damp
			}
			if good != c.good || bad != c.damp {
				t.Errorf("%d datagrams, %d damaged; want %d and %d", good, bad, c.good, c.damp)
			}
			// The line source's own buffer and the reader's are a few
			// hundred KiB; a reader that kept lines would take gigabytes.
			if got := heapAllocs() - before; got > 16<<20 {
				t.Errorf("reading allocated %d MiB", got>>20)
			}
		})
	}
}
