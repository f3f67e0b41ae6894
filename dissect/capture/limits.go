// This file holds what bounds the work a Reader does on input that is not
// a capture, or is one made to waste time and memory: a span of input with
// no readable record stops reading, a zstd frame may not ask for more than
// a capture's window, and a caller's interrupt ends reading early as a
// clean end would.

package capture

import (
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"
)

// DefaultMaxUnreadable is how much input a Reader reads without a readable
// record before it stops (Options.MaxUnreadable). A real capture's damage
// is a few records long; 16 MiB of records that no decoder can read (the
// zeros after a header, which are a million valid empty records to the
// pcap format) is something else. Walking 64 MiB of them through stats
// took 8 s of CPU on a busy machine; 16 MiB keeps that near 2 s.
const DefaultMaxUnreadable = 16 << 20

// ErrUnreadable: the Reader gave up after Options.MaxUnreadable bytes of
// input without a readable record. It is the last PacketError a Reader
// returns; Next returns io.EOF after it.
var ErrUnreadable = errors.New("capture: no readable record")

// UnreadableError says where a Reader gave up and, for a compressed
// capture, how far the input had expanded.
type UnreadableError struct {
	From, To    int64 // offsets of the uncompressed input: end of the last readable record, the record given up at
	Compression Compression
	In          int64 // compressed bytes read, for a compressed capture
}

func (e *UnreadableError) Error() string {
	s := fmt.Sprintf("%v in the %s from offset %d to %d; stopped reading there", ErrUnreadable, sizeText(e.To-e.From), e.From, e.To)
	if e.Compression != Uncompressed && e.In > 0 {
		s += fmt.Sprintf(" (%v-compressed: %s read expanded to %s, %d:1)", e.Compression, sizeText(e.In), sizeText(e.To), e.To/e.In)
	}
	return s
}

func (e *UnreadableError) Unwrap() error { return ErrUnreadable }

// sizeText writes n bytes the way people read sizes.
func sizeText(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// unreadable reports whether damage of this class means the record could
// not be read at all. A record that failed its checksum, was cut by the
// snap length or contradicts its fragments was read; a capture made of
// them is a damaged capture, not something else.
func unreadable(err error) bool {
	return !errors.Is(err, ErrChecksum) && !errors.Is(err, ErrSnapLen) && !errors.Is(err, ErrFragment)
}

// checkSpan is called with the offset of a damaged record: it returns the
// error to give up with once the span since the last readable record
// exceeds the cap, or nil.
func (r *Reader) checkSpan(off int64, err error) *PacketError {
	if r.maxUnreadable < 0 || !unreadable(err) || off-r.lastGood <= r.maxUnreadable {
		return nil
	}
	r.eof = true
	r.incomplete = r.dec.Flush()
	ue := &UnreadableError{From: r.lastGood, To: off, Compression: r.compression}
	if r.compressed != nil {
		ue.In = r.compressed.n
	}
	r.dec.stats.Damaged++
	return &PacketError{Frame: 0, Offset: off, Err: ue}
}

// interrupted polls the caller's Options.Interrupt every 256 records.
func (r *Reader) interrupted() bool {
	if r.interrupt == nil {
		return false
	}
	if r.polls++; r.polls&255 != 0 {
		return false
	}
	select {
	case <-r.interrupt:
		r.wasInterrupted = true
		return true
	default:
		return false
	}
}

// Interrupted reports whether reading ended because Options.Interrupt was
// closed rather than at the end of the file.
func (r *Reader) Interrupted() bool { return r.wasInterrupted }

// AbsurdRatio is the decompressed/compressed ratio past which a command
// says how far a compressed capture expanded: real captures compress 3 to
// 20 times; a stream of zeros, a thousand times and more.
const AbsurdRatio = 100

// Expansion reports, for a compressed capture, the compressed bytes read
// so far and the uncompressed bytes they gave; 0, 0 when uncompressed.
func (r *Reader) Expansion() (in, out int64) {
	if r.compressed == nil {
		return 0, 0
	}
	return r.compressed.n, r.in.off + int64(r.in.end-r.in.pos)
}

// ExpansionText is "gzip-compressed 71.7 KiB expanded to 16.0 MiB (228:1)" when the
// ratio is past AbsurdRatio, or "".
func (r *Reader) ExpansionText() string {
	in, out := r.Expansion()
	if in <= 0 || out/in < AbsurdRatio {
		return ""
	}
	return fmt.Sprintf("%v-compressed %s expanded to %s (%d:1)", r.compression, sizeText(in), sizeText(out), out/in)
}

// countingReader counts the compressed bytes read under a decompressor.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// maxZstdWindow bounds the memory a zstd frame may ask for. The zstd
// command's levels 1 to 19 use windows of at most 8 MiB; --long and the
// --ultra levels ask for up to 128 MiB, which cost about 297 MB of RSS per
// capture and gain a capture nothing (its packets repeat within seconds).
// An 8 MiB window keeps a decoder near 20 MB.
const maxZstdWindow = 8 << 20

// zstdReader names what is wrong when a frame asks for a larger window.
type zstdReader struct{ d *zstd.Decoder }

func (z zstdReader) Read(p []byte) (int, error) {
	n, err := z.d.Read(p)
	if err != nil && (errors.Is(err, zstd.ErrWindowSizeExceeded) || errors.Is(err, zstd.ErrDecoderSizeExceeded)) {
		err = fmt.Errorf("zstd frame asks for a window over the %d MiB this reader allows (compressed with --long or --ultra?); recompress with a level up to 19 without --long: %w", maxZstdWindow>>20, err)
	}
	return n, err
}

func (z zstdReader) Close() error { z.d.Close(); return nil }
