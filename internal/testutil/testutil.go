// Package testutil holds the helpers that tests of several packages share:
// golden files, hex fixtures and the bundled battle capture. Only tests
// import it.
//
// It defines no -update flag: a package whose tests keep golden files
// defines its own and passes its value to Golden, so that only those
// packages accept -update.
package testutil

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
	"unsafe"

	"github.com/bcwire/bcwire/dissect/capture"
)

// Golden compares got with the golden file at path, or, when update is
// set, writes got there. A path ending in .gz holds the output gzipped. A
// difference is reported with its first differing line, which is what a
// reader of a long output needs.
func Golden(tb testing.TB, path string, got []byte, update bool) {
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

// Unhex decodes hex written for people: spaces, newlines, tabs and colons
// between the digits are ignored.
func Unhex(tb testing.TB, s string) []byte {
	tb.Helper()
	s = strings.NewReplacer(" ", "", "\n", "", "\t", "", ":", "").Replace(s)
	b, err := hex.DecodeString(s)
	if err != nil {
		tb.Fatalf("bad hex %q: %v", s, err)
	}
	return b
}

// Datagram is one UDP datagram of a capture, its payload copied.
type Datagram struct {
	Frame    int
	Time     time.Time
	Src, Dst netip.AddrPort
	Payload  []byte
}

// LoadBattle reads every UDP datagram of the bundled 4-player battle
// (testdata/pcaps/battle.pcap at the repository root).
func LoadBattle(tb testing.TB) []Datagram {
	tb.Helper()
	return LoadCapture(tb, filepath.Join("testdata", "pcaps", "battle.pcap"))
}

// LoadCapture reads every UDP datagram of the capture at rel, a path from
// the repository root, into memory.
func LoadCapture(tb testing.TB, rel string) []Datagram {
	tb.Helper()
	rd, err := capture.Open(filepath.Join(RepoRoot(tb), rel))
	if err != nil {
		tb.Fatal(err)
	}
	defer rd.Close()
	var out []Datagram
	for {
		p, err := rd.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, Datagram{p.Frame, p.Time, p.Src, p.Dst, append([]byte(nil), p.Payload...)})
	}
}

// RepoRoot is the directory holding go.mod, found from the working
// directory up (go test runs each package's tests in its own directory).
func RepoRoot(tb testing.TB) string {
	tb.Helper()
	dir, err := os.Getwd()
	if err != nil {
		tb.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			tb.Fatal("no go.mod above the working directory")
		}
		dir = parent
	}
}

// FillNonZero sets every field of the struct v (addressable), unexported
// ones and those of nested structs and arrays too, to a value that is not
// zero: for tests that check that code reusing a value resets every field
// of it.
func FillNonZero(tb testing.TB, v reflect.Value) {
	if !v.CanSet() {
		v = reflect.NewAt(v.Type(), unsafe.Pointer(v.UnsafeAddr())).Elem()
	}
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			FillNonZero(tb, v.Field(i))
		}
	case reflect.Array:
		for i := range v.Len() {
			FillNonZero(tb, v.Index(i))
		}
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 4))
	case reflect.Pointer:
		v.Set(reflect.New(v.Type().Elem()))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		v.SetInt(1)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(1)
	case reflect.Float32, reflect.Float64:
		v.SetFloat(1)
	default:
		tb.Fatalf("FillNonZero: no value for a %s", v.Kind())
	}
}
