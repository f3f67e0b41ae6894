// This file lets a Reader take compressed captures (gzip, as tshark reads
// `.pcap.gz`, and zstd) and standard input: the compression is recognised
// by its magic, never by the file's name, so a renamed or piped file reads
// the same.

package capture

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/klauspost/compress/zstd"
)

// Stdin is the path that OpenWithOptions reads from standard input, as
// tshark's `-r -`.
const Stdin = "-"

// Compression names how a capture's bytes were compressed.
type Compression int

// Compressions recognised by their magic.
const (
	Uncompressed Compression = iota
	Gzip
	Zstd
)

func (c Compression) String() string {
	switch c {
	case Gzip:
		return "gzip"
	case Zstd:
		return "zstd"
	}
	return "none"
}

var (
	gzipMagic = []byte{0x1f, 0x8b}
	zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd} // RFC 8878 section 3.1.1
)

// SniffCompression names the compression whose magic starts b (at least
// the first four bytes of a file).
func SniffCompression(b []byte) Compression {
	switch {
	case bytes.HasPrefix(b, zstdMagic):
		return Zstd
	case bytes.HasPrefix(b, gzipMagic):
		return Gzip
	}
	return Uncompressed
}

// decompress returns a reader of the uncompressed bytes of r, which may be
// gzip, zstd or neither, the compression found, and what to close when
// done (nil for none). Peeking goes through a bufio.Reader whose buffer is
// drained by the first read; the large reads of input bypass it after that.
func decompress(r io.Reader) (io.Reader, Compression, io.Closer, error) {
	br := bufio.NewReaderSize(r, 64)
	magic, err := br.Peek(4)
	if err != nil && len(magic) < len(gzipMagic) {
		if err == io.EOF {
			return br, Uncompressed, nil, nil // too short: NewReader says so
		}
		return nil, Uncompressed, nil, err
	}
	switch c := SniffCompression(magic); c {
	case Gzip:
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, c, nil, fmt.Errorf("capture: gzip-compressed, but: %w", err)
		}
		return zr, c, zr, nil
	case Zstd:
		zr, err := zstd.NewReader(br, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxWindow(maxZstdWindow),
			zstd.WithDecoderMaxMemory(maxZstdWindow))
		if err != nil {
			return nil, c, nil, fmt.Errorf("capture: zstd-compressed, but: %w", err)
		}
		return zstdReader{zr}, c, zstdReader{zr}, nil
	}
	return br, Uncompressed, nil, nil
}

// closeAll closes each non-nil closer in turn, the decompressor before the
// file under it, and returns the errors joined.
type closeAll []io.Closer

func (cs closeAll) Close() error {
	var errs []error
	for _, c := range cs {
		if c != nil {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

// openPath opens path for reading, or standard input for Stdin (which is
// then not closed: it belongs to the process).
func openPath(path string) (io.Reader, io.Closer, error) {
	if path == Stdin {
		return os.Stdin, nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, err
	}
	return f, f, nil
}

// Compression reports how the capture's bytes were compressed.
func (r *Reader) Compression() Compression { return r.compression }
