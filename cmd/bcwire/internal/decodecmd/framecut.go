package decodecmd

// decode -w: the frames of the messages a filter keeps, copied as they
// were captured, so that a person can cut one session or one player out of
// a capture.

import (
	"io"
	"strings"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
)

// FrameCutter copies the capture records of kept messages to a capture.
// Each frame is written once, however many of its messages are kept. A
// datagram reassembled from IPv4 fragments is written as the record of its
// last fragment.
type FrameCutter struct {
	out     io.Writer
	format  capture.Format
	w       *capture.Writer
	rd      *capture.Reader
	last    int // the frame written last, of the current file
	Written int // frames written
}

// NewFrameCutter writes to out in format.
func NewFrameCutter(out io.Writer, format capture.Format) *FrameCutter {
	return &FrameCutter{out: out, format: format}
}

// FormatForName is pcapng for a name ending in .pcapng (or .ntar), else
// pcap.
func FormatForName(path string) capture.Format {
	p := strings.ToLower(path)
	if strings.HasSuffix(p, ".pcapng") || strings.HasSuffix(p, ".ntar") {
		return capture.PCAPNG
	}
	return capture.PCAP
}

// Source starts a file: it returns rd for flow.Run in a form that makes
// Run read one datagram at a time (rather than ahead), so that the
// reader's last record is the one whose messages are being emitted.
func (c *FrameCutter) Source(rd *capture.Reader) flow.Source {
	c.rd, c.last = rd, 0
	return oneAtATime{rd}
}

// Keep writes the frame of r, a record of the current file being emitted.
// Records of frames no longer at hand (fragments found missing at the end
// of the file) are not written.
func (c *FrameCutter) Keep(r *flow.Record) error {
	if c.rd == nil || r.Frame == c.last {
		return nil
	}
	rec, ok := c.rd.LastRecord()
	if !ok || rec.Frame != r.Frame {
		return nil
	}
	if c.w == nil {
		w, err := capture.NewRecordWriter(c.out, c.format, rec.LinkType)
		if err != nil {
			return err
		}
		c.w = w
	}
	if err := c.w.WriteRecord(rec); err != nil {
		return err
	}
	c.last = r.Frame
	c.Written++
	return nil
}

// Flush writes out what is buffered. A cutter that kept nothing writes a
// capture with no packets, of the first input's link type (Ethernet when
// unknown), so the output is a capture all the same.
func (c *FrameCutter) Flush(link capture.LinkType) error {
	if c.w == nil {
		w, err := capture.NewRecordWriter(c.out, c.format, link)
		if err != nil {
			return err
		}
		c.w = w
	}
	return c.w.Flush()
}

// oneAtATime hides the reader's Buffered, which is what flow.Run reads
// ahead by.
type oneAtATime struct{ r *capture.Reader }

func (o oneAtATime) Next() (*capture.Packet, error)        { return o.r.Next() }
func (o oneAtATime) Stats() capture.Stats                  { return o.r.Stats() }
func (o oneAtATime) Incomplete() []capture.FragmentSetInfo { return o.r.Incomplete() }
