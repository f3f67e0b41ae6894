package dissect_test

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
)

// TestParseMatchesReferenceOnCaptures splits every datagram of the bundled
// captures, decrypted, with Datagram.Parse and with the reference splitter
// it replaced: the messages and errors must be the same. Damaged and
// non-game datagrams (GameSpy queries decrypt to noise) are compared too.
func TestParseMatchesReferenceOnCaptures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "testdata", "pcaps", "*.pcap*"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, f := range files {
		if filepath.Ext(f) != ".pcap" && filepath.Ext(f) != ".pcapng" {
			continue
		}
		rd, err := capture.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		var plain []byte
		for {
			p, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				continue // a damaged frame: the reader goes on with the next
			}
			plain = append(plain[:0], p.Payload...)
			dissect.Decrypt(plain, p.Payload)
			for _, b := range [][]byte{plain, p.Payload} {
				if msg := dissect.CompareParse(b); msg != "" {
					t.Fatalf("%s frame %d: %s", filepath.Base(f), p.Frame, msg)
				}
				n++
			}
		}
		rd.Close()
	}
	if n == 0 {
		t.Fatal("no datagrams")
	}
}

// FuzzParseMatchesReference: any bytes split the same way by Datagram.Parse
// and by the reference splitter.
func FuzzParseMatchesReference(f *testing.F) {
	f.Add([]byte{0x01, 0x01, 0x32, 0x06, 0x80, 0x01, 0x00, 0x1C})
	f.Add([]byte{0x01, 0x02, 0x32, 0x04, 0x00, 0x1C, 0x01, 0x00, 0x00, 0x02})
	f.Add([]byte{0x01, 0x01, 0x32, 0x0A, 0xA0, 0x05, 0x00, 0x00, 0x03, 0x21, 0x2A, 0x00})
	f.Add([]byte{0x01, 0x01, 0x32, 0x04, 0x80, 0x01})
	f.Add([]byte{0x01, 0x01, 0x03, 0x08, 0x01, 0, 0, 0, 0x7F, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		if msg := dissect.CompareParse(b); msg != "" {
			t.Fatal(msg)
		}
	})
}
