package export

import (
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
)

var day1 = time.Date(2026, 1, 10, 12, 0, 0, 0, time.UTC)

// writeRows exports n message rows of file, the i-th at dayOf(i), and one
// session row, with one Writer.
func writeRows(t *testing.T, dir, file string, n int, dayOf func(i int) time.Time) {
	t.Helper()
	w, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		row, err := w.NextMessage(file, dayOf(i))
		if err != nil {
			t.Fatal(err)
		}
		*row = MessageRow{File: file, Frame: int64(i + 1), Time: dayOf(i), Kind: "message"}
	}
	if err := w.Session(SessionRow{File: file, Client: "x"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}

func sameDay(int) time.Time { return day1 }

// files lists the regular files under dir, relative, sorted.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, rel)
		}
		return nil
	})
	slices.Sort(out)
	return out
}

// emptyDirs lists the directories under dir that hold nothing.
func emptyDirs(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if d.IsDir() && p != dir {
			if es, _ := os.ReadDir(p); len(es) == 0 {
				out = append(out, p)
			}
		}
		return nil
	})
	return out
}

func countRows(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	for _, f := range files(t, dir) {
		if !strings.HasPrefix(f, "messages") {
			continue
		}
		rows, err := parquet.ReadFile[MessageRow](filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		n += len(rows)
	}
	return n
}

// Exporting a capture again replaces its part (DuckDB counted a second
// part twice); each part is readable by others (-rw-r--r--).
func TestExportReplacesItsPart(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(t.TempDir(), "a.pcap")
	writeRows(t, dir, file, 10, sameDay)
	writeRows(t, dir, file, 7, sameDay)
	got := files(t, dir)
	if len(got) != 2 {
		t.Fatalf("files %v, want one messages and one sessions part", got)
	}
	if n := countRows(t, dir); n != 7 {
		t.Errorf("%d rows after the second export of 7", n)
	}
	for _, f := range got {
		st, _ := os.Stat(filepath.Join(dir, f))
		if st.Mode().Perm() != 0o644 {
			t.Errorf("%s: mode %v", f, st.Mode())
		}
	}
}

// Two captures of the same name from different folders keep a part each,
// also when both exports run at once (they both picked part-0 and the later
// rename lost 219,200 rows).
func TestExportSameNameDifferentFolders(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(t.TempDir(), "x.pcap")
	b := filepath.Join(t.TempDir(), "x.pcap")
	var wg sync.WaitGroup
	for _, f := range []string{a, b} {
		wg.Go(func() { writeRows(t, dir, f, 5000, sameDay) })
	}
	wg.Wait()
	if n := countRows(t, dir); n != 10000 {
		t.Errorf("%d rows, want 10000 from the two captures", n)
	}
	if got := files(t, dir); len(got) != 4 {
		t.Errorf("files %v, want two parts per table", got)
	}
}

// Records that go back and forth between two days make one file per day,
// not one per switch (10,796 records made 10,797 files).
func TestExportOneFilePerPartition(t *testing.T) {
	dir := t.TempDir()
	alternate := func(i int) time.Time { return day1.AddDate(0, 0, i%2) }
	writeRows(t, dir, filepath.Join(t.TempDir(), "a.pcap"), 10000, alternate)
	msgs := 0
	for _, f := range files(t, dir) {
		if strings.HasPrefix(f, "messages") {
			msgs++
		}
	}
	if msgs != 2 {
		t.Errorf("%d messages files for two days: %v", msgs, files(t, dir))
	}
	if n := countRows(t, dir); n != 10000 {
		t.Errorf("%d rows", n)
	}
}

// Past MaxOpenPartitions days at once a partition gains a second part, and
// no row is lost; exporting again with fewer days removes the stale parts
// and the folders they leave empty.
func TestExportManyDaysThenFewer(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(t.TempDir(), "a.pcap")
	days := MaxOpenPartitions + 4
	writeRows(t, dir, file, days*3, func(i int) time.Time { return day1.AddDate(0, 0, i%days) })
	if n := countRows(t, dir); n != days*3 {
		t.Errorf("%d rows, wrote %d", n, days*3)
	}
	writeRows(t, dir, file, 5, sameDay)
	if got := files(t, dir); len(got) != 2 {
		t.Errorf("after the second export: %v", got)
	}
	if e := emptyDirs(t, dir); len(e) > 0 {
		t.Errorf("empty folders left: %v", e)
	}
}

// An aborted export (SIGINT) leaves no temporary file and no folder it
// made, and the parts an earlier export wrote stay as they were.
func TestExportAbortLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(t.TempDir(), "old.pcap")
	writeRows(t, dir, old, 3, sameDay)
	before := files(t, dir)

	w, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 * RowGroupRows { // enough to write row groups to disk
		row, err := w.NextMessage(old, day1.AddDate(0, 0, i%3))
		if err != nil {
			t.Fatal(err)
		}
		row.Kind = "message"
	}
	if _, err := w.NextMessage(filepath.Join(t.TempDir(), "new.pcap"), day1); err != nil {
		t.Fatal(err)
	}
	if tmp, _ := filepath.Glob(filepath.Join(dir, "messages", "*", "*", ".part-*.parquet.tmp")); len(tmp) < 3 {
		t.Fatalf("temporary files %v while writing, want at least 3", tmp)
	}
	w.Abort()
	if got := files(t, dir); !slices.Equal(got, before) {
		t.Errorf("after abort: %v, before: %v", got, before)
	}
	if e := emptyDirs(t, dir); len(e) > 0 {
		t.Errorf("empty folders left: %v", e)
	}
	if n := countRows(t, dir); n != 3 {
		t.Errorf("the earlier export now has %d rows", n)
	}
}

// What is in the way is an error, at once: a plain file where a table's
// folder goes, a name too long for a folder (both spun at 100% CPU).
func TestExportErrorsInTheWay(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "messages"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	w, _ := New(dir)
	if _, err := w.NextMessage("a.pcap", day1); err == nil {
		t.Error("no error with a file named messages in the way")
	}
	if err := w.Close(); err == nil {
		t.Error("Close reports no error")
	}
	w, _ = New(t.TempDir())
	if _, err := w.NextMessage(strings.Repeat("n", 248)+".pcap", day1); err == nil {
		t.Error("no error for a name too long")
	}
	w.Abort()
}

// PartitionValue escapes what Hive escapes and DuckDB and Spark decode
// back: every value decodes (percent-decoding) to its name, and the
// values hold no character a Hive reader or a glob treats specially.
func TestPartitionValueRoundTrips(t *testing.T) {
	for _, name := range []string{"battle.pcap", "a=b.pcap", "a%3Db.pcap", "a_b.pcap", "what?.pcap",
		"new\nline.pcap", "sp ace é.pcap", "x/y\\z", "[g]*{h}^#'\":", "bad\xffutf8", "%", ""} {
		v := PartitionValue(name)
		back, err := url.PathUnescape(v)
		if err != nil || back != name {
			t.Errorf("%q → %q decodes to %q (%v)", name, v, back, err)
		}
		if strings.ContainsAny(v, "/\\=?*[]{^#'\":\n") {
			t.Errorf("%q → %q keeps a special character", name, v)
		}
	}
	if PartitionValue("a=b.pcap") == PartitionValue("a_b.pcap") || PartitionValue("a%3Db.pcap") == PartitionValue("a=b.pcap") {
		t.Error("two names share a value")
	}
}

func FuzzPartitionValue(f *testing.F) {
	f.Add("a=b?.pcap")
	f.Add("a%3Db\n")
	f.Fuzz(func(t *testing.T, name string) {
		v := PartitionValue(name)
		back, err := url.PathUnescape(v)
		if err != nil || back != name {
			t.Fatalf("%q → %q decodes to %q (%v)", name, v, back, err)
		}
		if strings.ContainsAny(v, "/\\=?*[]\x00") {
			t.Fatalf("%q → %q", name, v)
		}
	})
}

// Many captures in one run keep at most one sessions file and the
// partitions of one capture open: the file of a capture is finished when
// the next one's rows begin (a run over 10,000 captures held a file each).
func TestExportFinishesEarlierCaptures(t *testing.T) {
	dir := t.TempDir()
	w, err := New(dir)
	if err != nil {
		t.Fatal(err)
	}
	src := t.TempDir()
	for i := range 40 {
		file := filepath.Join(src, strings.Repeat("c", i%5+1)+".pcap", "x") // same names, other folders
		if _, err := w.NextMessage(file, day1); err != nil {
			t.Fatal(err)
		}
		if err := w.Session(SessionRow{File: file}); err != nil {
			t.Fatal(err)
		}
		if len(w.open) > 1 || len(w.sessions) > 1 {
			t.Fatalf("capture %d: %d messages and %d sessions files open", i, len(w.open), len(w.sessions))
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := len(files(t, dir)); got != 80 {
		t.Errorf("%d files, want 80", got)
	}
}

// A temporary file that no process holds (an export killed by SIGKILL) is
// reported by the next export into its partition; one being written by a
// running export is not.
func TestExportReportsStaleTemp(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(t.TempDir(), "a.pcap")
	writeRows(t, dir, file, 3, sameDay)
	part := filepath.Join(dir, "messages", "capture=a.pcap", "date=2026-01-10")
	stale := filepath.Join(part, ".part-123.parquet.tmp")
	if err := os.WriteFile(stale, []byte("half a file"), 0o644); err != nil {
		t.Fatal(err)
	}
	running, err := New(dir) // another export, still writing
	if err != nil {
		t.Fatal(err)
	}
	if _, err := running.NextMessage(filepath.Join(t.TempDir(), "a.pcap"), day1); err != nil {
		t.Fatal(err)
	}
	defer running.Abort()

	w, _ := New(dir)
	var got []string
	w.Stale = func(path string, size int64) { got = append(got, path) }
	if _, err := w.NextMessage(file, day1); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	if len(got) != 1 || got[0] != stale {
		t.Errorf("reported %v, want only %s", got, stale)
	}
	if _, err := os.Stat(stale); err != nil {
		t.Errorf("the stale file was touched: %v", err)
	}
}
