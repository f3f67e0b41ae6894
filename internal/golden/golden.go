// Package golden compares a test's output with a golden file, or writes
// the file when the test runs with -update. Only tests import it.
//
// It defines no -update flag: a package whose tests keep golden files
// defines its own and passes its value to Compare, so that only those
// packages accept -update.
package golden

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// Compare compares got with the golden file at path, or, when update is
// set, writes got there. A path ending in .gz holds the output gzipped. A
// difference is reported with its first differing line, which is what a
// reader of a long output needs.
func Compare(tb testing.TB, path string, got []byte, update bool) {
	tb.Helper()
	gz := strings.HasSuffix(path, ".gz")
	if update {
		data := got
		if gz {
			var b bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
			zw.Write(got)
			zw.Close()
			data = b.Bytes()
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(path, data, 0o644); err != nil {
			tb.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("%v (regenerate with go test -update)", err)
	}
	if gz {
		zr, err := gzip.NewReader(bytes.NewReader(want))
		if err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
		if want, err = io.ReadAll(zr); err != nil {
			tb.Fatalf("%s: %v", path, err)
		}
	}
	if msg := FirstDiff(want, got); msg != "" {
		tb.Fatalf("%s: %s\n(regenerate with go test -update if intended, and read the diff)", path, msg)
	}
}

// FirstDiff describes the first line where got differs from want, or
// returns "" when they are equal.
func FirstDiff(want, got []byte) string {
	if bytes.Equal(want, got) {
		return ""
	}
	wl, gl := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := 0; i < len(wl) && i < len(gl); i++ {
		if wl[i] != gl[i] {
			return "line " + strconv.Itoa(i+1) + " differs:\n golden: " + wl[i] + "\n    got: " + gl[i]
		}
	}
	return strconv.Itoa(len(wl)) + " lines golden, " + strconv.Itoa(len(gl)) + " now"
}
