package capture

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// zeros is an io.Reader of n zero bytes, so that big inputs are made as
// they are read and never held whole.
type zeros struct{ n int64 }

func (z *zeros) Read(p []byte) (int, error) {
	if z.n <= 0 {
		return 0, io.EOF
	}
	k := int(min(int64(len(p)), z.n))
	clear(p[:k])
	z.n -= int64(k)
	return k, nil
}

// pcapHeader is the file header of the bundled battle capture.
func pcapHeader(t testing.TB) []byte {
	t.Helper()
	b, err := os.ReadFile("../../testdata/pcaps/battle.pcap")
	if err != nil {
		t.Fatal(err)
	}
	return b[:24]
}

// countingSource counts what a Reader took from it.
type countingSource struct {
	r io.Reader
	n int64
}

func (c *countingSource) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// drain reads r to the end and returns the give-up error, if any, and the
// number of PacketErrors.
func drain(t *testing.T, r *Reader) (*UnreadableError, int) {
	t.Helper()
	var ue *UnreadableError
	n := 0
	for {
		_, err := r.Next()
		if err == io.EOF {
			return ue, n
		}
		if err == nil {
			continue
		}
		if !errors.As(err, new(*PacketError)) {
			t.Fatalf("Next: %v", err)
		}
		n++
		if errors.As(err, &ue) && !errors.Is(err, ErrUnreadable) {
			t.Fatalf("UnreadableError that is not ErrUnreadable: %v", err)
		}
	}
}

// A pcap header followed by zeros (valid empty records to the format, each
// one damage to the decoder) stops after MaxUnreadable bytes with the
// reason, instead of walking through every record: 1 GiB of them cost
// 35 s of CPU.
func TestUnreadableSpanStops(t *testing.T) {
	const limit = 4 << 20
	src := &countingSource{r: io.MultiReader(bytes.NewReader(pcapHeader(t)), &zeros{1 << 30})}
	r, err := NewReaderWithOptions(src, Options{MaxUnreadable: limit})
	if err != nil {
		t.Fatal(err)
	}
	ue, n := drain(t, r)
	if ue == nil {
		t.Fatal("no UnreadableError")
	}
	if ue.To-ue.From <= limit || ue.To-ue.From > limit+16 {
		t.Errorf("gave up after %d bytes, cap %d", ue.To-ue.From, limit)
	}
	if src.n > limit+2*bufSize {
		t.Errorf("read %d bytes of input for a cap of %d", src.n, limit)
	}
	if want := limit/16 + 1; n > want+1 {
		t.Errorf("%d PacketErrors, want about %d", n, want)
	}
	if !strings.Contains(ue.Error(), "no readable record in the 4.0 MiB") {
		t.Errorf("message %q", ue.Error())
	}
}

// Good records after a damaged stretch shorter than the cap keep the
// Reader going; the default cap applies when Options leave it zero.
func TestUnreadableSpanResetsOnGoodRecords(t *testing.T) {
	battle, err := os.ReadFile("../../testdata/pcaps/battle.pcap")
	if err != nil {
		t.Fatal(err)
	}
	// battle's records, 1 MiB of zeros, battle's records again.
	in := io.MultiReader(bytes.NewReader(battle), &zeros{1 << 20}, bytes.NewReader(battle[24:]))
	r, err := NewReaderWithOptions(in, Options{MaxUnreadable: 2 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if ue, _ := drain(t, r); ue != nil {
		t.Fatalf("gave up on a capture with a 1 MiB gap under a 2 MiB cap: %v", ue)
	}
	if r.Stats().UDP < 2 {
		t.Errorf("read %d datagrams", r.Stats().UDP)
	}
	if r.maxUnreadable != 2<<20 {
		t.Error("cap not taken from Options")
	}
	if r2, _ := NewReader(bytes.NewReader(battle)); r2.maxUnreadable != DefaultMaxUnreadable {
		t.Error("default cap not applied")
	}
}

// A gzip stream of a header and zeros gives up at the cap and says how far
// the input expanded.
func TestUnreadableCompressedSaysRatio(t *testing.T) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	zw.Write(pcapHeader(t))
	if _, err := io.Copy(zw, &zeros{8 << 20}); err != nil {
		t.Fatal(err)
	}
	zw.Close()
	r, err := NewReaderWithOptions(bytes.NewReader(buf.Bytes()), Options{MaxUnreadable: 4 << 20})
	if err != nil {
		t.Fatal(err)
	}
	ue, _ := drain(t, r)
	if ue == nil {
		t.Fatal("no UnreadableError")
	}
	if ue.Compression != Gzip || ue.In <= 0 || ue.In > int64(buf.Len()) {
		t.Errorf("compression %v, %d compressed bytes read of %d", ue.Compression, ue.In, buf.Len())
	}
	if !strings.Contains(ue.Error(), "gzip-compressed") || !strings.Contains(ue.Error(), ":1)") {
		t.Errorf("message %q has no ratio", ue.Error())
	}
}

// A zstd frame whose window is over the cap is refused with the reason,
// before its window is allocated.
func TestZstdWindowCapped(t *testing.T) {
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf, zstd.WithWindowSize(64<<20), zstd.WithEncoderConcurrency(1))
	if err != nil {
		t.Fatal(err)
	}
	zw.Write(pcapHeader(t))
	rnd := rand.New(rand.NewPCG(1, 2))
	block := make([]byte, 1<<20)
	for range 9 {
		for i := range block {
			block[i] = byte(rnd.Uint32())
		}
		zw.Write(block)
	}
	zw.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r, err := NewReader(bytes.NewReader(buf.Bytes()))
	if err == nil {
		for err == nil {
			_, err = r.Next()
			if errors.As(err, new(*PacketError)) {
				err = nil
			}
		}
		r.Close()
	}
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "window over the 8 MiB") {
		t.Fatalf("error %v, want the window cap named", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 48<<20 {
		t.Errorf("allocated %d MiB refusing a 64 MiB window", got>>20)
	}
}

// A zstd frame with an 8 MiB window reads, and the decoder's allocations
// stay near the window whatever the output's length.
func TestZstdWindowAllowedMemory(t *testing.T) {
	var buf bytes.Buffer
	zw, _ := zstd.NewWriter(&buf, zstd.WithWindowSize(8<<20), zstd.WithEncoderConcurrency(1))
	zw.Write(pcapHeader(t))
	io.Copy(zw, &zeros{12 << 20})
	zw.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	r, err := NewReaderWithOptions(bytes.NewReader(buf.Bytes()), Options{MaxUnreadable: -1})
	if err != nil {
		t.Fatal(err)
	}
	if ue, _ := drain(t, r); ue != nil {
		t.Fatalf("gave up with the cap off: %v", ue)
	}
	r.Close()
	runtime.ReadMemStats(&after)
	// 768 Ki damaged records each allocate their error; count the rest.
	if got := after.TotalAlloc - before.TotalAlloc; got > 768<<10*250+48<<20 {
		t.Errorf("allocated %d MiB", got>>20)
	}
}

// A closed Interrupt ends reading as a clean end would, within 256
// records, and Interrupted tells it apart.
func TestInterruptEndsReading(t *testing.T) {
	done := make(chan struct{})
	close(done)
	src := io.MultiReader(bytes.NewReader(pcapHeader(t)), &zeros{1 << 30})
	r, err := NewReaderWithOptions(src, Options{Interrupt: done})
	if err != nil {
		t.Fatal(err)
	}
	ue, n := drain(t, r)
	if ue != nil || n > 256 || !r.Interrupted() {
		t.Errorf("after interrupt: %d records, give-up %v, Interrupted %v", n, ue, r.Interrupted())
	}
}

// A compressed capture that expanded past AbsurdRatio says so; a real
// capture, compressed, does not.
func TestExpansionText(t *testing.T) {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	zw.Write(pcapHeader(t))
	io.Copy(zw, &zeros{2 << 20})
	zw.Close()
	r, _ := NewReaderWithOptions(bytes.NewReader(buf.Bytes()), Options{MaxUnreadable: -1})
	drain(t, r)
	if x := r.ExpansionText(); !strings.Contains(x, "gzip-compressed") || !strings.Contains(x, "expanded to 2.0 MiB") {
		t.Errorf("zeros: %q", x)
	}
	battle, _ := os.ReadFile("../../testdata/pcaps/battle.pcap")
	r, _ = NewReader(bytes.NewReader(gzipBytes(t, battle)))
	drain(t, r)
	if in, out := r.Expansion(); in == 0 || out != int64(len(battle)) || r.ExpansionText() != "" {
		t.Errorf("battle: %d → %d bytes, text %q", in, out, r.ExpansionText())
	}
}
