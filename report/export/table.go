package export

// This file holds one Parquet file being written (table) and the Snappy
// codec every table is compressed with.

import (
	"os"
	"path/filepath"

	"github.com/klauspost/compress/s2"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/format"
)

// codec is Snappy, which every Parquet reader has: zstd, even at its
// fastest level, took a quarter of export's time.
var codec fastSnappy

// fastSnappy is parquet-go's Snappy codec with s2's fast Snappy encoder in
// place of its "better" one, which spent a fifth of export's time for
// files a few percent smaller. The blocks are plain Snappy either way.
type fastSnappy struct{ snappy.Codec }

func (fastSnappy) CompressionCodec() format.CompressionCodec { return format.Snappy }

func (fastSnappy) Encode(dst, src []byte) ([]byte, error) {
	return s2.EncodeSnappy(dst, src), nil
}

// table is one Parquet file being written: rows are buffered and written a
// row group at a time into a hidden temporary file, which commit renames
// into place.
type table[T any] struct {
	path, tmp string
	f         *os.File
	w         *parquet.GenericWriter[T]
	buf       []T
	finished  bool
}

// noBoundsColumns are the messages table's columns whose page statistics
// and column-index bounds prune nothing (the min and max of JSON text, or
// of a few values that every page holds) and cost export time: a tenth of
// it went to the dictionary columns' bounds.
var noBoundsColumns = []string{"fields", "warning", "error", "kind", "src", "dst", "dir", "type_name"}

func openTable[T any](path string, opts ...parquet.WriterOption) (*table[T], error) {
	f, err := os.CreateTemp(filepath.Dir(path), ".part-*.parquet.tmp")
	if err != nil {
		return nil, err
	}
	// CreateTemp makes the file private (0600); the tables are for
	// others' query engines to read, as a file from os.Create would be.
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	lockTemp(f)
	opts = append(opts, parquet.Compression(&codec), parquet.MaxRowsPerRowGroup(RowGroupRows))
	w := parquet.NewGenericWriter[T](f, opts...)
	return &table[T]{path: path, tmp: f.Name(), f: f, w: w, buf: make([]T, 0, 1024)}, nil
}

// next returns the next row to fill, in place in the batch: rows may point
// into themselves (MessageRow's optional columns do), so they are never
// copied before parquet-go has read them.
func (t *table[T]) next() (*T, error) {
	if len(t.buf) == cap(t.buf) {
		if err := t.flushRows(); err != nil {
			return nil, err
		}
	}
	t.buf = t.buf[:len(t.buf)+1]
	return &t.buf[len(t.buf)-1], nil
}

func (t *table[T]) add(row T) error {
	p, err := t.next()
	if err == nil {
		*p = row
	}
	return err
}

func (t *table[T]) flushRows() error {
	if len(t.buf) == 0 {
		return nil
	}
	if _, err := t.w.Write(t.buf); err != nil {
		return err
	}
	clear(t.buf)
	t.buf = t.buf[:0]
	return nil
}

// finish writes the rest of the rows and the footer and closes the file,
// which stays under its temporary name.
func (t *table[T]) finish() error {
	if t.finished {
		return nil
	}
	t.finished = true
	err := t.flushRows()
	if e := t.w.Close(); err == nil {
		err = e
	}
	if e := t.f.Close(); err == nil {
		err = e
	}
	t.buf = nil
	return err
}

// discard closes the file if open and removes it.
func (t *table[T]) discard() {
	if !t.finished {
		t.finished = true
		t.f.Close()
	}
	os.Remove(t.tmp)
}

// commit renames the finished file into place, replacing the part of the
// same name: the same capture's part from an earlier export.
func (t *table[T]) commit() error { return os.Rename(t.tmp, t.path) }
