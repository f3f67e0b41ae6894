package capture

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A pcapng record writer takes records of several link types, one
// interface each, alternating (each new link type's description block
// before its first record); reading the file back gives every record with
// its own link type and payload, in order. A pcap writer refuses the
// second link type with the reason.
func TestWriteRecordsOfSeveralLinkTypes(t *testing.T) {
	var recs []RawRecord
	var payloads [][]byte
	for _, name := range []string{"sll.pcap", "join.pcap"} {
		file, err := os.ReadFile(filepath.Join("..", "..", "testdata", "pcaps", name))
		if err != nil {
			t.Fatal(err)
		}
		r, _ := NewReader(bytes.NewReader(file))
		for i := 0; i < 20; i++ {
			p, err := r.Next()
			var pe *PacketError
			if err == io.EOF {
				break
			} else if errors.As(err, &pe) {
				continue
			} else if err != nil {
				t.Fatal(err)
			}
			rec, _ := r.LastRecord()
			rec.Data = bytes.Clone(rec.Data)
			recs = append(recs, rec)
			payloads = append(payloads, bytes.Clone(p.Payload))
		}
	}
	// Interleave: SLL, Ethernet, SLL, ...
	var order []int
	for i := 0; i < 20; i++ {
		order = append(order, i, 20+i)
	}
	var out bytes.Buffer
	w, err := NewRecordWriter(&out, PCAPNG, recs[0].LinkType)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range order {
		if err := w.WriteRecord(recs[i]); err != nil {
			t.Fatal(err)
		}
	}
	w.Flush()
	r, err := NewReader(bytes.NewReader(out.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for n, i := range order {
		p, err := r.Next()
		if err != nil {
			t.Fatalf("record %d: %v", n, err)
		}
		rec, _ := r.LastRecord()
		if rec.LinkType != recs[i].LinkType || !bytes.Equal(p.Payload, payloads[i]) || !rec.Time.Equal(recs[i].Time) {
			t.Fatalf("record %d: link %v payload %x, want %v %x", n, rec.LinkType, p.Payload, recs[i].LinkType, payloads[i])
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("after the records: %v", err)
	}
	pw, _ := NewRecordWriter(io.Discard, PCAP, recs[0].LinkType)
	if err := pw.WriteRecord(recs[20]); err == nil || !strings.Contains(err.Error(), "write pcapng") {
		t.Errorf("pcap with a second link type: %v", err)
	}
}
