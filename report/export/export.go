// Package export writes decoded captures as Parquet tables for query
// engines (DuckDB on one machine, Spark or Trino across many): one row per
// transport message, GameSpy datagram or damaged record in messages, one
// row per session in sessions.
//
// The files are partitioned the way those engines read partitions
// (Hive-style directories): DIR/messages/capture=NAME/date=YYYY-MM-DD/
// part-N.parquet and DIR/sessions/capture=NAME/part-N.parquet, so that the
// exports of many captures from many servers add up in one directory
// without rewriting what is there. Rows are written in row groups of
// RowGroupRows as they come, so memory stays bounded whatever the capture's
// length.
package export

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

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

// RowGroupRows is how many rows a file holds in memory before it writes
// them as a row group (parquet.MaxRowsPerRowGroup). 16Ki rows keep export
// of battle ×100 near 56 MiB of peak RSS (32Ki: 63 MiB) at the same CPU
// time; a row group is still a few MiB, large enough for query engines.
const RowGroupRows = 16 << 10

// Writer writes the messages and sessions tables under one directory.
type Writer struct {
	dir string
	// CaptureName gives the partition name of a capture file (default:
	// its base name).
	CaptureName func(file string) string

	msgs     *table[MessageRow]
	msgsPart partition
	// the partition of the last row, recomputed only when its file or
	// day changes
	lastFile string
	lastDay  [3]int
	sessions *table[SessionRow]
	sessPart string
	err      error
}

type partition struct{ capture, date string }

// New returns a Writer that writes under dir, which it creates if needed.
func New(dir string) (*Writer, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &Writer{dir: dir, CaptureName: func(f string) string { return filepath.Base(f) }}, nil
}

// table is one open Parquet file: rows are buffered and written a row
// group at a time, into a temporary file renamed into place at Close.
type table[T any] struct {
	path, tmp string
	f         *os.File
	w         *parquet.GenericWriter[T]
	buf       []T
}

// noBoundsColumns are the messages table's columns whose page statistics
// and column-index bounds prune nothing (the min and max of JSON text, or
// of a few values that every page holds) and cost export time: a tenth of
// it went to the dictionary columns' bounds.
var noBoundsColumns = []string{"fields", "warning", "error", "kind", "src", "dst", "dir", "type_name"}

func openTable[T any](path string, opts ...parquet.WriterOption) (*table[T], error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
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

func (t *table[T]) close() error {
	err := t.flushRows()
	if e := t.w.Close(); err == nil {
		err = e
	}
	if e := t.f.Close(); err == nil {
		err = e
	}
	if err != nil {
		os.Remove(t.tmp)
		return err
	}
	return os.Rename(t.tmp, t.path)
}

// nextPart is the path of the first part-N.parquet not yet in dir, so a
// partition written again (a capture exported twice, or a day split by an
// out-of-order record) gains a file rather than losing one.
func nextPart(dir string) string {
	for n := 0; ; n++ {
		p := filepath.Join(dir, fmt.Sprintf("part-%d.parquet", n))
		if _, err := os.Stat(p); errors.Is(err, os.ErrNotExist) {
			return p
		}
	}
}

// partitionValue keeps a Hive partition value to one path element.
func partitionValue(s string) string {
	return strings.NewReplacer("/", "_", "\\", "_", "=", "_").Replace(s)
}

// NextMessage returns the row to fill for the next message, read from file
// at t (UTC), in place in the messages table: the row is written with the
// next call or with Close.
func (w *Writer) NextMessage(file string, t time.Time) (*MessageRow, error) {
	if w.err != nil {
		return nil, w.err
	}
	y, m, d := t.Date()
	day := [3]int{y, int(m), d}
	if w.msgs == nil || file != w.lastFile || day != w.lastDay {
		w.lastFile, w.lastDay = file, day
		if w.err = w.openMessages(partition{capture: partitionValue(w.CaptureName(file)),
			date: t.Format("2006-01-02")}); w.err != nil {
			return nil, w.err
		}
	}
	var row *MessageRow
	row, w.err = w.msgs.next()
	return row, w.err
}

// openMessages makes p the messages partition being written.
func (w *Writer) openMessages(p partition) error {
	if w.msgs != nil && p == w.msgsPart {
		return nil
	}
	if w.msgs != nil {
		if err := w.msgs.close(); err != nil {
			w.msgs = nil
			return err
		}
	}
	var opts []parquet.WriterOption
	for _, c := range noBoundsColumns {
		opts = append(opts, parquet.SkipPageStatistics(c), parquet.SkipPageBounds(c))
	}
	t, err := openTable[MessageRow](nextPart(filepath.Join(w.dir, "messages", "capture="+p.capture, "date="+p.date)), opts...)
	if err != nil {
		w.msgs = nil
		return err
	}
	w.msgs, w.msgsPart = t, p
	return nil
}

// Session adds a row to the sessions table.
func (w *Writer) Session(row SessionRow) error {
	if w.err != nil {
		return w.err
	}
	p := partitionValue(w.CaptureName(row.File))
	if w.sessions == nil || p != w.sessPart {
		if w.sessions != nil {
			if w.err = w.sessions.close(); w.err != nil {
				return w.err
			}
		}
		dir := filepath.Join(w.dir, "sessions", "capture="+p)
		if w.sessions, w.err = openTable[SessionRow](nextPart(dir)); w.err != nil {
			w.sessions = nil
			return w.err
		}
		w.sessPart = p
	}
	w.err = w.sessions.add(row)
	return w.err
}

// Close finishes the open files. A Writer that failed removes the file it
// was writing and reports the first error.
func (w *Writer) Close() error {
	err := w.err
	if w.msgs != nil {
		if e := w.msgs.close(); err == nil {
			err = e
		}
	}
	if w.sessions != nil {
		if e := w.sessions.close(); err == nil {
			err = e
		}
	}
	return err
}
