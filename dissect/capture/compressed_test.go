package capture

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

func gzipBytes(t *testing.T, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func zstdBytes(t *testing.T, b []byte) []byte {
	t.Helper()
	zw, err := zstd.NewWriter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer zw.Close()
	return zw.EncodeAll(b, nil)
}

// TestCompressedCapturesReadAsPlain reads the battle capture and the duel
// pcapng gzip- and zstd-compressed, and expects exactly the packets and
// damage of the plain file, with the compression named by the Reader.
func TestCompressedCapturesReadAsPlain(t *testing.T) {
	for _, name := range []string{"battle.pcap", "duel.pcapng", "damaged.pcap"} {
		plain, err := os.ReadFile(filepath.Join("..", "..", "testdata", "pcaps", name))
		if err != nil {
			t.Fatal(err)
		}
		wantPkts, wantErrs, _ := readAll(t, plain, Options{})
		for _, tc := range []struct {
			c    Compression
			file []byte
		}{{Gzip, gzipBytes(t, plain)}, {Zstd, zstdBytes(t, plain)}} {
			if got := SniffCompression(tc.file); got != tc.c {
				t.Errorf("%s %v: SniffCompression = %v", name, tc.c, got)
			}
			pkts, errs, r := readAll(t, tc.file, Options{})
			if r.Compression() != tc.c {
				t.Errorf("%s: Compression() = %v, want %v", name, r.Compression(), tc.c)
			}
			if len(pkts) != len(wantPkts) || !reflect.DeepEqual(pkts, wantPkts) {
				t.Errorf("%s %v: %d packets differ from the plain file's %d", name, tc.c, len(pkts), len(wantPkts))
			}
			if len(errs) != len(wantErrs) {
				t.Errorf("%s %v: %d errors, plain file %d", name, tc.c, len(errs), len(wantErrs))
			}
			if err := r.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		}
	}
}

// TestCompressionByMagicNotName opens a gzip file named .pcap and a zstd
// file named .gz: the content decides.
func TestCompressionByMagicNotName(t *testing.T) {
	plain, err := os.ReadFile(filepath.Join("..", "..", "testdata", "pcaps", "join.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ := readAll(t, plain, Options{})
	dir := t.TempDir()
	for name, data := range map[string][]byte{
		"looks-plain.pcap": gzipBytes(t, plain),
		"looks-gzip.gz":    zstdBytes(t, plain),
		"plain.pcap.zst":   plain,
	} {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r, err := Open(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		n := 0
		for {
			p, err := r.Next()
			if err != nil {
				break
			}
			if n < len(want) && !bytes.Equal(p.Payload, want[n].Payload) {
				t.Errorf("%s: packet %d differs", name, n)
			}
			n++
		}
		r.Close()
		if n != len(want) {
			t.Errorf("%s: %d packets, want %d", name, n, len(want))
		}
	}
}

// TestCompressedGarbage: a gzip magic followed by garbage, and a gzip
// stream holding no capture, are errors that say which compression.
func TestCompressedGarbage(t *testing.T) {
	if _, err := NewReader(bytes.NewReader([]byte{0x1f, 0x8b, 0x00, 0x01, 0x02})); err == nil {
		t.Error("garbage after a gzip magic: no error")
	}
	_, err := NewReader(bytes.NewReader(gzipBytes(t, []byte("hello, not a capture"))))
	if err == nil || !strings.Contains(err.Error(), "gzip-compressed") || !strings.Contains(err.Error(), "not a pcap or pcapng") {
		t.Errorf("gzip of text: err = %v, want it to say gzip-compressed and not a pcap", err)
	}
	_, err = NewReader(bytes.NewReader(zstdBytes(t, nil)))
	if err == nil || !strings.Contains(err.Error(), "zstd-compressed") {
		t.Errorf("empty zstd: err = %v", err)
	}
}

// TestOpenStdin reads "-" from standard input.
func TestOpenStdin(t *testing.T) {
	plain, err := os.ReadFile(filepath.Join("..", "..", "testdata", "pcaps", "join.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ := readAll(t, plain, Options{})
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdin
	os.Stdin = pr
	defer func() { os.Stdin = old; pr.Close() }()
	gz := gzipBytes(t, plain)
	go func() {
		pw.Write(gz)
		pw.Close()
	}()
	r, err := Open(Stdin)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		if _, err := r.Next(); err != nil {
			break
		}
		n++
	}
	if err := r.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if n != len(want) {
		t.Errorf("stdin: %d packets, want %d", n, len(want))
	}
}

// TestTruncatedGzipSaysGzip: a gzip header cut short names the compression.
func TestTruncatedGzipSaysGzip(t *testing.T) {
	_, err := NewReader(bytes.NewReader([]byte{0x1F, 0x8B, 8, 0, 0, 0, 0, 0}))
	if err == nil || !strings.Contains(err.Error(), "gzip-compressed") {
		t.Errorf("err = %v", err)
	}
}
