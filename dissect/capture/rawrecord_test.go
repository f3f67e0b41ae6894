package capture

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestCopyRecordsAsCaptured copies every other record of the bundled
// captures (each link type and both formats) with LastRecord and
// WriteRecord, and reads the copy back: the kept packets, frame numbers
// aside, are the original's, and so is each record's original length.
func TestCopyRecordsAsCaptured(t *testing.T) {
	for _, name := range []string{"battle.pcap", "duel.pcapng", "sll.pcap"} {
		for _, format := range []Format{PCAP, PCAPNG} {
			file, err := os.ReadFile(filepath.Join("..", "..", "testdata", "pcaps", name))
			if err != nil {
				t.Fatal(err)
			}
			r, err := NewReader(bytes.NewReader(file))
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			var w *Writer
			var want []got
			var origLens []int
			for {
				p, err := r.Next()
				if err == io.EOF {
					break
				}
				var pe *PacketError
				if errors.As(err, &pe) {
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				rec, ok := r.LastRecord()
				if !ok || rec.Frame != p.Frame || !rec.Time.Equal(p.Time) {
					t.Fatalf("%s: LastRecord %v frame %d, packet frame %d", name, ok, rec.Frame, p.Frame)
				}
				if p.Frame%2 == 1 {
					continue
				}
				if w == nil {
					if w, err = NewRecordWriter(&out, format, rec.LinkType); err != nil {
						t.Fatal(err)
					}
				}
				if err := w.WriteRecord(rec); err != nil {
					t.Fatal(err)
				}
				want = append(want, got{0, 0, p.Time, p.Src, p.Dst, bytes.Clone(p.Payload), p.Reassembled})
				origLens = append(origLens, rec.OrigLen)
			}
			if _, ok := r.LastRecord(); ok {
				t.Errorf("%s: LastRecord after the end", name)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			pkts, errs, _ := readAll(t, out.Bytes(), Options{})
			if len(errs) > 0 || len(pkts) != len(want) || len(want) == 0 {
				t.Fatalf("%s %v: copy has %d packets and %v, want %d", name, format, len(pkts), errs, len(want))
			}
			for i := range pkts {
				pkts[i].Frame, pkts[i].Iface = 0, 0
			}
			if !reflect.DeepEqual(pkts, want) {
				t.Errorf("%s %v: the copied packets differ", name, format)
			}
			r2, _ := NewReader(bytes.NewReader(out.Bytes()))
			for i := 0; ; i++ {
				if _, err := r2.Next(); err != nil {
					break
				}
				if rec, _ := r2.LastRecord(); rec.OrigLen != origLens[i] {
					t.Errorf("%s: record %d original length %d, want %d", name, i, rec.OrigLen, origLens[i])
					break
				}
			}
		}
	}
}

func TestWriteRecordRefusesAnotherLinkType(t *testing.T) {
	w, err := NewRecordWriter(io.Discard, PCAP, Ethernet)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteRecord(RawRecord{LinkType: LinuxSLL, Data: []byte{1}}); err == nil {
		t.Error("a LINUX_SLL record went into an Ethernet capture")
	}
}
