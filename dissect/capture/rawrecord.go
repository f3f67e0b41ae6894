// This file lets a capture be cut: the Reader shows the record a packet
// came from as it lies in the file, and a Writer copies such records, of
// any link type, so that `decode -w` writes the frames a filter kept as
// they were captured.

package capture

import (
	"fmt"
	"io"
	"time"
)

// RawRecord is one capture record as it lies in the file.
type RawRecord struct {
	Frame    int // 1-based record number, as Packet.Frame
	Time     time.Time
	LinkType LinkType
	Data     []byte // the captured bytes, link-layer header first
	OrigLen  int    // the frame's length on the wire
}

// LastRecord returns the record that Next decoded last: the one that
// carried the Packet it returned (for a reassembled datagram, the last
// fragment), or the damaged record of the PacketError it returned. Its Data
// is valid until the next call to Next; ok is false before the first
// record and after the end of the file.
func (r *Reader) LastRecord() (rec RawRecord, ok bool) {
	if r.dec.rec == nil || r.eof {
		return RawRecord{}, false
	}
	if r.fusedAt >= 0 {
		r.fusedRecord()
	}
	d := r.dec.rec
	return RawRecord{Frame: r.dec.stats.Records, Time: d.time, LinkType: d.linkType, Data: d.data, OrigLen: d.origLen}, true
}

// NewRecordWriter writes a capture whose records are copied with
// WriteRecord, so any link type can be written; NewWriter's link types are
// only those WriteUDP can build frames for.
func NewRecordWriter(w io.Writer, format Format, link LinkType) (*Writer, error) {
	return newWriter(w, format, link, "bcwire0")
}

// WriteRecord writes rec as it was captured: its bytes, time and original
// length. A pcap file holds one link type, the Writer's; a pcapng file
// gets an interface for each link type written (its description block
// comes before the first record of that type), as pcapng allows.
func (w *Writer) WriteRecord(rec RawRecord) error {
	if rec.LinkType != w.link {
		if w.format != PCAPNG {
			return fmt.Errorf("capture: a %v record cannot go into a pcap file of %v records: the inputs mix link types, which a pcap file cannot hold (write pcapng, which can)", rec.LinkType, w.link)
		}
		if err := w.useLink(rec.LinkType); err != nil {
			return err
		}
	}
	return w.writeRecord(rec.Time, rec.Data, max(rec.OrigLen, len(rec.Data)))
}

// useLink makes the pcapng interface of link the current one, describing
// it first when it is new.
func (w *Writer) useLink(link LinkType) error {
	for i, l := range w.ifaces {
		if l == link {
			w.link, w.iface = link, uint32(i)
			return nil
		}
	}
	if _, err := w.bw.Write(appendNgIDB(nil, link, w.ifName)); err != nil {
		return err
	}
	w.ifaces = append(w.ifaces, link)
	w.link, w.iface = link, uint32(len(w.ifaces)-1)
	return nil
}
