// This file holds the classic pcap record reader, including the
// resynchronisation that skips over a record header with an absurd length.

package capture

import (
	"encoding/binary"
	"fmt"
	"io"
	"time"
)

// Classic pcap magic numbers, as seen when read little-endian.
const (
	pcapMagicMicroLE = 0xa1b2c3d4
	pcapMagicMicroBE = 0xd4c3b2a1
	pcapMagicNanoLE  = 0xa1b23c4d
	pcapMagicNanoBE  = 0x4d3cb2a1
)

func isPcapMagic(m uint32) bool {
	switch m {
	case pcapMagicMicroLE, pcapMagicMicroBE, pcapMagicNanoLE, pcapMagicNanoBE:
		return true
	}
	return false
}

const (
	pcapFileHeaderLen   = 24
	pcapRecordHeaderLen = 16
	// A record longer than both the snap length and this is absurd
	// (262144 is the largest snap length libpcap uses).
	pcapMaxPlausibleLen = 262144
	// Hard cap even when the file header claims a bigger snap length, so a
	// hostile header cannot make us buffer gigabytes.
	pcapHardMaxLen = 16 << 20
	// During resynchronisation a candidate's time stamp must lie within
	// this distance of the last good record's.
	pcapResyncWindow = 24 * 60 * 60 // seconds
)

type pcapSource struct {
	in       *input
	order    fileOrder
	fracUnit int64  // nanoseconds per unit of the time stamp fraction (1 or 1000)
	maxFrac  uint32 // the fraction must stay below this (1e9 or 1e6)
	snaplen  uint32
	link     LinkType
	maxLen   uint32 // longest record accepted
	lastSec  uint32 // time stamp of the last good record
	haveLast bool
	resync   bool // the last header was absurd: scan for the next plausible one
}

func newPcapSource(in *input) (*pcapSource, error) {
	h, err := in.peek(pcapFileHeaderLen)
	if len(h) < pcapFileHeaderLen {
		if err == nil || err == io.EOF {
			err = fmt.Errorf("capture: pcap file header truncated (%d of %d bytes)", len(h), pcapFileHeaderLen)
		}
		return nil, err
	}
	s := &pcapSource{in: in, fracUnit: 1000, maxFrac: 1e6}
	switch binary.LittleEndian.Uint32(h) {
	case pcapMagicMicroBE:
		s.order.big = true
	case pcapMagicNanoLE:
		s.fracUnit, s.maxFrac = 1, 1e9
	case pcapMagicNanoBE:
		s.order.big, s.fracUnit, s.maxFrac = true, 1, 1e9
	}
	// The version (bytes 4..8) is ignored: every pcap in the wild is 2.4 and
	// older ones have the same record layout.
	s.snaplen = s.order.Uint32(h[16:20])
	// The upper 16 bits of the link-type field carry FCS information.
	s.link = LinkType(s.order.Uint32(h[20:24]) & 0xffff)
	s.maxLen = min(max(s.snaplen, pcapMaxPlausibleLen), pcapHardMaxLen)
	in.discard(pcapFileHeaderLen)
	return s, nil
}

func (s *pcapSource) iface(i int) (InterfaceInfo, bool) {
	if i != 0 {
		return InterfaceInfo{}, false
	}
	return InterfaceInfo{LinkType: s.link, SnapLen: int(s.snaplen)}, true
}

func (s *pcapSource) next(rec *record) error {
	// The common case first: a record whose header is sane and which lies
	// whole in the buffer.
	in := s.in
	off := in.off
	var h pcapRecordHeader
	var data []byte
	fast := false
	if b := in.buf[in.pos:in.end]; len(b) >= pcapRecordHeaderLen && !s.resync {
		h = s.order.pcapRecordHeader((*[pcapRecordHeaderLen]byte)(b))
		if n := pcapRecordHeaderLen + int(h.caplen); h.caplen <= s.maxLen && len(b) >= n {
			data, fast = b[pcapRecordHeaderLen:n], true
			in.discard(n)
		}
	}
	if !fast {
		var err error
		if h, data, off, err = s.nextSlow(); err != nil {
			return err
		}
	}
	// Only a plausible header's time stamp anchors resynchronisation: a
	// record read out of step (after a damaged length that was not absurd)
	// has junk there, and anchoring on it would reject every real header
	// after the next absurd one.
	if s.plausible(h.sec, h.frac, h.caplen, h.origLen) {
		s.lastSec, s.haveLast = h.sec, true
	}
	// Field by field: a composite literal would be built aside and copied.
	rec.data = data
	rec.time = time.Unix(int64(h.sec), int64(h.frac)*s.fracUnit).UTC()
	rec.linkType = s.link
	rec.iface = 0
	rec.origLen = int(h.origLen)
	rec.offset = off
	return nil
}

// nextSlow is next for the rest: a record that needs more input, an absurd
// length, resynchronisation, the end of the file. It returns the record's
// header, data and file offset.
func (s *pcapSource) nextSlow() (pcapRecordHeader, []byte, int64, error) {
	var hdr pcapRecordHeader
	if s.resync {
		if err := s.scan(); err != nil {
			return hdr, nil, 0, err
		}
		s.resync = false
	}
	in := s.in
	off := in.off
	h, err := in.peek(pcapRecordHeaderLen)
	if len(h) < pcapRecordHeaderLen {
		if len(h) == 0 || !isEOF(err) {
			return hdr, nil, 0, err // io.EOF at a clean end, or an I/O error
		}
		in.discard(len(h))
		return hdr, nil, 0, &recordError{offset: off, isRecord: true,
			err: fmt.Errorf("%w: %d of %d record header bytes", ErrTruncated, len(h), pcapRecordHeaderLen)}
	}
	hdr = s.order.pcapRecordHeader((*[pcapRecordHeaderLen]byte)(h))
	caplen := hdr.caplen
	if caplen > s.maxLen {
		// Step one byte past the header's start and look for the next
		// plausible header on the following call.
		in.discard(1)
		s.resync = true
		return hdr, nil, 0, &recordError{offset: off, isRecord: true,
			err: fmt.Errorf("%w: record length %d exceeds the limit of %d", ErrBadRecord, caplen, s.maxLen)}
	}
	in.discard(pcapRecordHeaderLen)
	data, err := in.read(int(caplen))
	if err != nil {
		if !isEOF(err) {
			return hdr, nil, 0, err
		}
		// The header is whole: the record keeps its time stamp.
		re := &recordError{offset: off, isRecord: true, err: fmt.Errorf("%w: %d of %d bytes", ErrTruncated, len(data), caplen)}
		if s.plausible(hdr.sec, hdr.frac, hdr.caplen, hdr.origLen) {
			re.time = time.Unix(int64(hdr.sec), int64(hdr.frac)*s.fracUnit).UTC()
		}
		return hdr, nil, 0, re
	}
	return hdr, data, off, nil
}

// pcapRecordHeader is the fields of a record header.
type pcapRecordHeader struct{ sec, frac, caplen, origLen uint32 }

// pcapRecordHeader reads a record header, testing the byte order once
// rather than for every field.
func (o fileOrder) pcapRecordHeader(h *[pcapRecordHeaderLen]byte) pcapRecordHeader {
	if o.big {
		return pcapRecordHeader{binary.BigEndian.Uint32(h[0:4]), binary.BigEndian.Uint32(h[4:8]),
			binary.BigEndian.Uint32(h[8:12]), binary.BigEndian.Uint32(h[12:16])}
	}
	return pcapRecordHeader{binary.LittleEndian.Uint32(h[0:4]), binary.LittleEndian.Uint32(h[4:8]),
		binary.LittleEndian.Uint32(h[8:12]), binary.LittleEndian.Uint32(h[12:16])}
}

// scan moves forward one byte at a time until the input starts with a
// plausible record header, or to the end of the file. Peeks never exceed
// maxScanRecord+2 headers, which fits in the read buffer, so the scan is
// linear in the bytes skipped.
func (s *pcapSource) scan() error {
	for {
		h, err := s.in.peek(pcapRecordHeaderLen)
		if len(h) < pcapRecordHeaderLen {
			if !isEOF(err) && err != nil {
				return err
			}
			s.in.discard(len(h)) // trailing junk: nothing left to find
			return io.EOF
		}
		if s.plausibleHeader(h) && s.followedByPlausible(h) {
			return nil
		}
		s.in.discard(1)
	}
}

func (s *pcapSource) plausibleHeader(h []byte) bool {
	return s.plausible(s.order.Uint32(h[0:4]), s.order.Uint32(h[4:8]), s.order.Uint32(h[8:12]), s.order.Uint32(h[12:16]))
}

// plausible tells whether a record header looks real: sane lengths, a valid
// fraction and, once a good record has been seen, a nearby time stamp.
func (s *pcapSource) plausible(sec, frac, caplen, origLen uint32) bool {
	if frac >= s.maxFrac || origLen == 0 || caplen > origLen || origLen > pcapMaxPlausibleLen || caplen > s.maxLen {
		return false
	}
	d := int64(sec) - int64(s.lastSec)
	return !s.haveLast || (d >= -pcapResyncWindow && d <= pcapResyncWindow)
}

// followedByPlausible checks that the header after the candidate record is
// plausible too, which makes a false match inside packet data very unlikely.
// A candidate whose record reaches the end of the file is accepted.
func (s *pcapSource) followedByPlausible(h []byte) bool {
	// Read h before peeking further: a longer peek may move the buffer.
	sec := s.order.Uint32(h[0:4])
	n := pcapRecordHeaderLen + int(s.order.Uint32(h[8:12]))
	b, _ := s.in.peek(n + pcapRecordHeaderLen)
	if len(b) < n+pcapRecordHeaderLen {
		return true
	}
	// Judge the next header against the candidate's time, not the last
	// good record's.
	saved, savedHave := s.lastSec, s.haveLast
	s.lastSec, s.haveLast = sec, true
	ok := s.plausibleHeader(b[n:])
	s.lastSec, s.haveLast = saved, savedHave
	return ok
}
