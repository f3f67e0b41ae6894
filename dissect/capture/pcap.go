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
	order    binary.ByteOrder
	nanos    bool // time stamp fraction is in ns rather than µs
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
	s := &pcapSource{in: in, order: binary.LittleEndian}
	switch binary.LittleEndian.Uint32(h) {
	case pcapMagicMicroBE:
		s.order = binary.BigEndian
	case pcapMagicNanoLE:
		s.nanos = true
	case pcapMagicNanoBE:
		s.order, s.nanos = binary.BigEndian, true
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

func (s *pcapSource) next() (record, error) {
	if s.resync {
		if err := s.scan(); err != nil {
			return record{}, err
		}
		s.resync = false
	}
	off := s.in.off
	h, err := s.in.peek(pcapRecordHeaderLen)
	if len(h) < pcapRecordHeaderLen {
		if len(h) == 0 || !isEOF(err) {
			return record{}, err // io.EOF at a clean end, or an I/O error
		}
		s.in.discard(len(h))
		return record{}, &recordError{off, true,
			fmt.Errorf("%w: %d of %d record header bytes", ErrTruncated, len(h), pcapRecordHeaderLen)}
	}
	sec := s.order.Uint32(h[0:4])
	frac := s.order.Uint32(h[4:8])
	caplen := s.order.Uint32(h[8:12])
	origLen := int(s.order.Uint32(h[12:16])) // h is invalid once we read on
	// Only a plausible header's time stamp anchors resynchronisation: a
	// record read out of step (after a damaged length that was not absurd)
	// has junk there, and anchoring on it would reject every real header
	// after the next absurd one.
	anchor := s.plausible(h)
	if caplen > s.maxLen {
		// Step one byte past the header's start and look for the next
		// plausible header on the following call.
		s.in.discard(1)
		s.resync = true
		return record{}, &recordError{off, true,
			fmt.Errorf("%w: record length %d exceeds the limit of %d", ErrBadRecord, caplen, s.maxLen)}
	}
	s.in.discard(pcapRecordHeaderLen)
	data, err := s.in.read(int(caplen))
	if err != nil {
		if !isEOF(err) {
			return record{}, err
		}
		return record{}, &recordError{off, true,
			fmt.Errorf("%w: %d of %d bytes", ErrTruncated, len(data), caplen)}
	}
	if anchor {
		s.lastSec, s.haveLast = sec, true
	}
	return record{data: data, time: s.time(sec, frac), linkType: s.link, origLen: origLen, offset: off}, nil
}

func (s *pcapSource) time(sec, frac uint32) time.Time {
	nsec := int64(frac)
	if !s.nanos {
		nsec *= 1000
	}
	return time.Unix(int64(sec), nsec).UTC()
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
		if s.plausible(h) && s.followedByPlausible(h) {
			return nil
		}
		s.in.discard(1)
	}
}

// plausible tells whether h looks like a real record header: sane lengths, a
// valid fraction and, once a good record has been seen, a nearby time stamp.
func (s *pcapSource) plausible(h []byte) bool {
	sec := s.order.Uint32(h[0:4])
	frac := s.order.Uint32(h[4:8])
	caplen := s.order.Uint32(h[8:12])
	origlen := s.order.Uint32(h[12:16])
	maxFrac := uint32(1e6)
	if s.nanos {
		maxFrac = 1e9
	}
	if frac >= maxFrac || origlen == 0 || caplen > origlen || origlen > pcapMaxPlausibleLen || caplen > s.maxLen {
		return false
	}
	if s.haveLast {
		d := int64(sec) - int64(s.lastSec)
		if d < -pcapResyncWindow || d > pcapResyncWindow {
			return false
		}
	}
	return true
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
	ok := s.plausible(b[n:])
	s.lastSec, s.haveLast = saved, savedHave
	return ok
}
