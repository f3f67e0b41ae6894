// Package export writes decoded captures as Parquet tables for query
// engines (DuckDB on one machine, Spark or Trino across many): one row per
// transport message, GameSpy datagram or damaged record in messages, one
// row per session in sessions.
//
// The files are partitioned the way those engines read partitions
// (Hive-style directories): DIR/messages/capture=NAME/date=YYYY-MM-DD/
// part-KEY.parquet and DIR/sessions/capture=NAME/part-KEY.parquet, so that the
// exports of many captures from many servers add up in one directory
// without rewriting what is there. Rows are written in row groups of
// RowGroupRows as they come, so memory stays bounded whatever the capture's
// length.
package export

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/parquet-go/parquet-go"
)

// RowGroupRows is how many rows a file holds in memory before it writes
// them as a row group (parquet.MaxRowsPerRowGroup). 16Ki rows keep export
// of battle ×100 near 56 MiB of peak RSS (32Ki: 63 MiB) at the same CPU
// time; a row group is still a few MiB, large enough for query engines.
const RowGroupRows = 16 << 10

// Writer writes the messages and sessions tables under one directory.
//
// Each capture's files are named after its key (CaptureKey: by default a
// hash of its absolute path), part-KEY.parquet, so that exporting a capture
// again replaces its parts, two captures of the same name from different
// folders keep one part each, and two exports running at once never pick
// the same file for different captures. Nothing is renamed into place
// before Close: until then the rows are in hidden .part-*.parquet.tmp
// files, which Abort (or a failing Close) removes with the partition
// directories this Writer created.
type Writer struct {
	dir string
	// CaptureName gives the partition name of a capture file (default:
	// its base name).
	CaptureName func(file string) string
	// CaptureKey gives the key that names a capture's parts (default:
	// FileKey).
	CaptureKey func(file string) string

	open    map[partition]*table[MessageRow] // messages files being written
	lru     []partition                      // open partitions, least recently used first
	files   map[partition]int                // files begun per partition this run
	cur     *table[MessageRow]
	curPart partition
	// the partition of the last row, recomputed only when its file or
	// day changes
	lastFile string
	lastDay  [3]int

	// text is the block the fields text of the messages rows not yet
	// written is in (NextMessage).
	text []byte

	sessions  map[captureKey]*table[SessionRow] // open: the capture whose sessions come now
	sessFiles map[captureKey]int                // files begun per capture this run
	done      []*table[MessageRow]              // closed, waiting for Close to rename them
	doneSess  []*table[SessionRow]
	keys      map[captureKey]bool // the captures written
	// Stale is told of each temporary file found in a partition directory
	// that no process is writing: an export killed by SIGKILL (or a
	// crash) left it. It is not removed; nil ignores them.
	Stale   func(path string, size int64)
	checked map[string]bool // directories looked at for stale files
	created []string        // directories this Writer made, parents first
	err     error
}

// MaxOpenPartitions is how many messages partitions (capture and day) a
// Writer keeps open at once. Records that go back and forth between days
// stay in one file per partition up to this many; past it, the partition
// used longest ago is finished and a later row for it begins a second part
// (part-KEY-1.parquet).
const MaxOpenPartitions = 16

// captureKey is a capture's partition directory name and key.
type captureKey struct{ dir, key string }

// partition is one messages file's place: the escaped capture name, the
// day and the capture's key.
type partition struct{ capture, date, key string }

// New returns a Writer that writes under dir, which it creates if needed.
func New(dir string) (*Writer, error) {
	w := &Writer{dir: dir, CaptureName: func(f string) string { return filepath.Base(f) }, CaptureKey: FileKey,
		open: map[partition]*table[MessageRow]{}, files: map[partition]int{},
		sessions: map[captureKey]*table[SessionRow]{}, sessFiles: map[captureKey]int{}, keys: map[captureKey]bool{},
		checked: map[string]bool{}}
	if err := w.mkdir(dir); err != nil {
		return nil, err
	}
	return w, nil
}

// FileKey is the default key of a capture: the first 16 hex digits of the
// SHA-256 of its absolute path (of file itself when that cannot be had, as
// for standard input).
func FileKey(file string) string {
	if abs, err := filepath.Abs(file); err == nil && file != "-" {
		file = abs
	}
	sum := sha256.Sum256([]byte(file))
	return hex.EncodeToString(sum[:8])
}

// mkdir makes dir and its missing parents, remembering which it made so
// that Abort can take them away again.
func (w *Writer) mkdir(dir string) error {
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); err == nil {
			break
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := os.Mkdir(missing[i], 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return err
		}
		w.created = append(w.created, missing[i])
	}
	if len(missing) == 0 {
		w.checkStale(dir)
	}
	return nil
}

// checkStale tells Stale of the temporary files in dir that no process
// holds, once per directory.
func (w *Writer) checkStale(dir string) {
	if w.Stale == nil || w.checked[dir] {
		return
	}
	w.checked[dir] = true
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		if !strings.HasPrefix(e.Name(), ".part-") || !strings.HasSuffix(e.Name(), ".parquet.tmp") {
			continue
		}
		path := filepath.Join(dir, e.Name())
		f, err := os.Open(path)
		if err != nil {
			continue
		}
		free := unlocked(f)
		var size int64
		if st, err := f.Stat(); err == nil {
			size = st.Size()
		}
		f.Close()
		if free {
			w.Stale(path, size)
		}
	}
}

// partName is the file name of a capture's n-th file in a partition this
// run.
func partName(key string, n int) string {
	if n == 0 {
		return "part-" + key + ".parquet"
	}
	return fmt.Sprintf("part-%s-%d.parquet", key, n)
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
	if w.cur == nil || file != w.lastFile || day != w.lastDay {
		w.lastFile, w.lastDay = file, day
		if w.err = w.openMessages(w.captureDir(file), w.CaptureKey(file), t.Format("2006-01-02")); w.err != nil {
			return nil, w.err
		}
	}
	// The fields text of the rows not yet written is in w.text: when it
	// is nearly full, every open table writes its rows (parquet-go copies
	// the values), and the block is used again from its start. Allocating
	// a new block each time instead made nine tenths of export's garbage.
	if cap(w.text)-len(w.text) < textReserve {
		if w.err = w.flushOpenRows(); w.err != nil {
			return nil, w.err
		}
		if cap(w.text) < textChunk {
			w.text = make([]byte, 0, textChunk)
		}
		w.text = w.text[:0]
	}
	var row *MessageRow
	if row, w.err = w.cur.next(); w.err == nil {
		row.text = &w.text
	}
	return row, w.err
}

// flushOpenRows writes the rows buffered in every open messages table.
func (w *Writer) flushOpenRows() error {
	for _, t := range w.open {
		if err := t.flushRows(); err != nil {
			return err
		}
	}
	return nil
}

// captureDir is the partition directory name of file's capture.
func (w *Writer) captureDir(file string) string {
	return "capture=" + PartitionValue(w.CaptureName(file))
}

// openMessages makes the partition of capture dir c, key and date the one
// rows go to, opening its file unless it is open already.
func (w *Writer) openMessages(c, key, date string) error {
	p := partition{capture: c, date: date, key: key}
	if w.cur != nil && p == w.curPart {
		return nil
	}
	w.keys[captureKey{c, key}] = true
	if t := w.open[p]; t != nil {
		w.cur, w.curPart = t, p
		w.touch(p)
		return nil
	}
	// A capture's file is read to its end before the next: the partitions
	// of the captures before are done.
	for i := 0; i < len(w.lru); i++ {
		if q := w.lru[i]; q.key != key || q.capture != c {
			if err := w.finishPartition(i); err != nil {
				return err
			}
			i--
		}
	}
	if len(w.open) >= MaxOpenPartitions {
		if err := w.finishPartition(0); err != nil {
			return err
		}
	}
	dir := filepath.Join(w.dir, "messages", c, "date="+date)
	if err := w.mkdir(dir); err != nil {
		return err
	}
	var opts []parquet.WriterOption
	for _, col := range noBoundsColumns {
		opts = append(opts, parquet.SkipPageStatistics(col), parquet.SkipPageBounds(col))
	}
	t, err := openTable[MessageRow](filepath.Join(dir, partName(key, w.files[p])), opts...)
	if err != nil {
		return err
	}
	w.files[p]++
	w.open[p] = t
	w.lru = append(w.lru, p)
	w.cur, w.curPart = t, p
	return nil
}

// finishPartition finishes the file of the i-th open partition in lru.
func (w *Writer) finishPartition(i int) error {
	p := w.lru[i]
	w.lru = append(w.lru[:i], w.lru[i+1:]...)
	t := w.open[p]
	delete(w.open, p)
	w.done = append(w.done, t)
	return t.finish()
}

// touch moves p to the most recently used end of lru.
func (w *Writer) touch(p partition) {
	for i, q := range w.lru {
		if q == p {
			copy(w.lru[i:], w.lru[i+1:])
			w.lru[len(w.lru)-1] = p
			return
		}
	}
}

// Session adds a row to the sessions table. The sessions of one capture
// come together (a capture's file is read to its end before the next), so
// a new capture's first row finishes the file of the one before.
func (w *Writer) Session(row SessionRow) error {
	if w.err != nil {
		return w.err
	}
	ck := captureKey{w.captureDir(row.File), w.CaptureKey(row.File)}
	t := w.sessions[ck]
	if t == nil {
		for k, old := range w.sessions {
			delete(w.sessions, k)
			w.doneSess = append(w.doneSess, old)
			if w.err = old.finish(); w.err != nil {
				return w.err
			}
		}
		w.keys[ck] = true
		dir := filepath.Join(w.dir, "sessions", ck.dir)
		if w.err = w.mkdir(dir); w.err != nil {
			return w.err
		}
		if t, w.err = openTable[SessionRow](filepath.Join(dir, partName(ck.key, w.sessFiles[ck]))); w.err != nil {
			return w.err
		}
		w.sessFiles[ck]++
		w.sessions[ck] = t
	}
	w.err = t.add(row)
	return w.err
}

// Close finishes the files and renames them into place, then removes the
// parts an earlier export of the same captures left that this one did not
// write (the days a capture no longer has). A Writer that failed removes
// what it wrote, as Abort does, and reports the first error.
func (w *Writer) Close() error {
	err := w.err
	if err == nil {
		err = w.finishAll()
	}
	if err != nil {
		w.Abort()
		return err
	}
	written := map[string]bool{}
	for _, t := range w.done {
		if err := t.commit(); err != nil {
			return err
		}
		written[t.path] = true
	}
	for _, t := range w.doneSess {
		if err := t.commit(); err != nil {
			return err
		}
		written[t.path] = true
	}
	return w.removeStale(written)
}

// finishAll finishes every open file, moving them to done.
func (w *Writer) finishAll() error {
	var err error
	for _, p := range w.lru {
		t := w.open[p]
		w.done = append(w.done, t)
		if e := t.finish(); err == nil {
			err = e
		}
	}
	w.open, w.lru, w.cur = map[partition]*table[MessageRow]{}, nil, nil
	for _, t := range w.sessions {
		w.doneSess = append(w.doneSess, t)
		if e := t.finish(); err == nil {
			err = e
		}
	}
	w.sessions = map[captureKey]*table[SessionRow]{}
	return err
}

// Abort removes every file this Writer began and the partition
// directories it created that are empty again, leaving the directory as
// it found it. Signal handlers and failed runs call it instead of Close.
func (w *Writer) Abort() {
	if w.err == nil {
		w.err = errors.New("export: aborted")
	}
	for _, t := range w.open {
		t.discard()
	}
	for _, t := range w.sessions {
		t.discard()
	}
	for _, t := range w.done {
		t.discard()
	}
	for _, t := range w.doneSess {
		t.discard()
	}
	w.open, w.sessions, w.done, w.doneSess, w.lru, w.cur = nil, nil, nil, nil, nil, nil
	for i := len(w.created) - 1; i >= 0; i-- {
		os.Remove(w.created[i]) // fails, as it should, if another export wrote there
	}
	w.created = nil
}

// removeStale removes the parts of this run's captures that it did not
// write, and the directories that leaves empty.
func (w *Writer) removeStale(written map[string]bool) error {
	for ck := range w.keys {
		var dirs []string
		msgs := filepath.Join(w.dir, "messages", ck.dir)
		days, err := os.ReadDir(msgs)
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		for _, d := range days {
			if d.IsDir() && strings.HasPrefix(d.Name(), "date=") {
				dirs = append(dirs, filepath.Join(msgs, d.Name()))
			}
		}
		dirs = append(dirs, filepath.Join(w.dir, "sessions", ck.dir))
		for _, dir := range dirs {
			files, err := os.ReadDir(dir)
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			for _, f := range files {
				path := filepath.Join(dir, f.Name())
				if written[path] || !ownPart(f.Name(), ck.key) {
					continue
				}
				if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
					return err
				}
				os.Remove(dir) // only if now empty
			}
		}
		os.Remove(msgs)
	}
	return nil
}

// ownPart reports whether name is one of key's part names.
func ownPart(name, key string) bool {
	rest, ok := strings.CutPrefix(name, "part-"+key)
	if !ok {
		return false
	}
	if rest == ".parquet" {
		return true
	}
	n, ok := strings.CutSuffix(rest, ".parquet")
	if !ok || len(n) < 2 || n[0] != '-' {
		return false
	}
	for _, c := range n[1:] {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// PartitionValue escapes a partition value as Hive does (and as DuckDB
// and Spark decode it): each byte that is special in a path, a glob or a
// partition name, control characters, '%' itself, and the bytes of
// invalid UTF-8, as %XX. Decoding gives the name back, so two names never
// share a value.
func PartitionValue(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n <= 1 || r < 0x80 && hiveEscapes(byte(r)) {
			fmt.Fprintf(&b, "%%%02X", s[i])
			i++
			continue
		}
		b.WriteString(s[i : i+n])
		i += n
	}
	return b.String()
}

// hiveEscapes reports whether Hive's FileUtils escapes c in a partition
// value.
func hiveEscapes(c byte) bool {
	return c < 0x20 || c == 0x7f || strings.IndexByte("\"#%'*/:=?\\{[]^", c) >= 0
}
