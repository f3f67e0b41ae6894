// This file holds the pcapng block reader: section headers (which may switch
// byte order), interface descriptions (link type, time stamp resolution and
// offset), the three packet block kinds, quiet skipping of the other block
// types the pcapng specification defines, and a report of any other block.

package capture

import (
	"encoding/binary"
	"fmt"
	"io"
	"math/bits"
	"time"
)

// Block types.
const (
	ngBlockSHB = 0x0a0d0d0a // section header; palindromic, so byte order does not matter
	ngBlockIDB = 1          // interface description
	ngBlockPB  = 2          // packet (obsolete)
	ngBlockSPB = 3          // simple packet
	ngBlockNRB = 4          // name resolution
	ngBlockISB = 5          // interface statistics
	ngBlockEPB = 6          // enhanced packet
	ngBlockDSB = 0x0a       // decryption secrets (the last of the low block types)

	ngBlockCustomCopy   = 0x00000bad // custom block that rewriters may copy
	ngBlockCustomNoCopy = 0x40000bad // custom block that rewriters must not copy
	ngBlockLocalUse     = 0x80000000 // this bit set: reserved for local use

	ngByteOrderMagic = 0x1a2b3c4d
	// Blocks longer than this are taken to be damage (libpcap uses the same
	// limit), which bounds the memory a hostile length can claim.
	ngMaxBlock = 16 << 20
)

// Interface description options used here.
const (
	ngOptEnd      = 0
	ngOptIfName   = 2
	ngOptTSResol  = 9
	ngOptTSOffset = 14
)

type ngIface struct {
	info        InterfaceInfo
	unitsPerSec uint64 // time stamp units per second, from if_tsresol
	tsOffset    int64  // seconds to add to every time stamp, from if_tsoffset
}

type ngSource struct {
	in     *input
	order  fileOrder // of the current section
	ifaces []ngIface // of the current section
	resync bool      // block framing was bad: scan for the next plausible block
	skip   bool      // the current section has an unknown version: skip its blocks
}

func newNgSource(in *input) (*ngSource, error) {
	h, err := in.peek(12)
	if len(h) < 12 {
		if err == nil || err == io.EOF {
			err = fmt.Errorf("capture: pcapng section header truncated (%d bytes)", len(h))
		}
		return nil, err
	}
	order, ok := ngByteOrder(h[8:12])
	if !ok {
		return nil, fmt.Errorf("capture: not a pcapng file (byte-order magic %x)", h[8:12])
	}
	// The section header itself is read by next, like any later one.
	return &ngSource{in: in, order: order}, nil
}

func ngByteOrder(b []byte) (fileOrder, bool) {
	switch {
	case binary.LittleEndian.Uint32(b) == ngByteOrderMagic:
		return fileOrder{big: false}, true
	case binary.BigEndian.Uint32(b) == ngByteOrderMagic:
		return fileOrder{big: true}, true
	}
	return fileOrder{}, false
}

// ngDefinedBlock tells whether the pcapng specification (its block type
// registry) defines blocks of type typ: the packet and interface blocks,
// name resolution, interface statistics, IRIG time stamps, ARINC 429,
// systemd journal export and decryption secrets (1 to 0x0A), the Hone
// Project's (0x101, 0x102) and Sysdig's blocks (0x201 to 0x222), the two
// custom blocks and the section header. Local-use types are not included.
func ngDefinedBlock(typ uint32) bool {
	switch {
	case typ >= ngBlockIDB && typ <= ngBlockDSB,
		typ == 0x101 || typ == 0x102,
		typ >= 0x201 && typ <= 0x222,
		typ == ngBlockCustomCopy || typ == ngBlockCustomNoCopy,
		typ == ngBlockSHB:
		return true
	}
	return false
}

func isPacketBlock(typ uint32) bool {
	return typ == ngBlockEPB || typ == ngBlockSPB || typ == ngBlockPB
}

func (s *ngSource) iface(i int) (InterfaceInfo, bool) {
	if i < 0 || i >= len(s.ifaces) {
		return InterfaceInfo{}, false
	}
	return s.ifaces[i].info, true
}

func (s *ngSource) next(rec *record) error {
	for {
		off := s.in.off
		typ, block, err := s.block()
		if err != nil {
			return err
		}
		damage := func(isRecord bool, err error) error {
			return &recordError{offset: off, isRecord: isRecord, err: err}
		}
		body := block[8 : len(block)-4]

		if s.skip && typ != ngBlockSHB {
			continue
		}
		switch typ {
		case ngBlockEPB, ngBlockPB, ngBlockSPB:
			if err := s.packet(typ, body, rec); err != nil {
				return damage(true, err)
			}
			rec.offset = off
			return nil
		case ngBlockSHB:
			// Interface numbers restart with every section. A section of
			// another major version cannot be parsed, so the pcapng spec
			// says to skip it; say so once, since packets are lost.
			s.ifaces = s.ifaces[:0]
			if len(body) < 8 {
				s.skip = true
				return damage(false, fmt.Errorf("%w: section header of %d bytes; skipping the section", ErrBadRecord, len(block)))
			}
			if major := s.order.Uint16(body[4:6]); major != 1 {
				s.skip = true
				return damage(false, fmt.Errorf("%w: skipping pcapng section of version %d.%d",
					ErrBadRecord, major, s.order.Uint16(body[6:8])))
			}
			s.skip = false
		case ngBlockIDB:
			if err := s.addIface(body); err != nil {
				return damage(false, err)
			}
		default:
			// Blocks the specification defines, and local-use ones (macOS
			// tcpdump writes its process information in 0x80000001), are
			// legal and carry nothing for us. Any other type is not a
			// pcapng block at all: a writer's bug or damage, so say so;
			// its framing held, so reading goes on after it.
			if !ngDefinedBlock(typ) && typ&ngBlockLocalUse == 0 {
				return damage(false, fmt.Errorf("%w: type 0x%08X, %d bytes; skipped", ErrUnknownBlock, typ, len(block)))
			}
		}
	}
}

// block consumes the next block and returns its type and bytes, framing
// included, which stay valid until the next call. Damage to the framing is
// a *recordError.
func (s *ngSource) block() (uint32, []byte, error) {
	// The common case first: a well-framed block, not a section header,
	// lying whole in the buffer.
	in := s.in
	if b := in.buf[in.pos:in.end]; len(b) >= 12 && !s.resync {
		typ, blen := s.order.Uint32(b[0:4]), s.order.Uint32(b[4:8])
		if typ != ngBlockSHB && blen >= 12 && blen%4 == 0 && blen <= ngMaxBlock && int(blen) <= len(b) &&
			s.order.Uint32(b[blen-4:]) == blen {
			in.discard(int(blen))
			return typ, b[:blen], nil
		}
	}
	return s.blockSlow()
}

// blockSlow is block for the rest: section headers, damaged framing,
// resynchronisation, blocks that need more input, the end of the file.
func (s *ngSource) blockSlow() (uint32, []byte, error) {
	if s.resync {
		if err := s.scan(); err != nil {
			return 0, nil, err
		}
		s.resync = false
	}
	off := s.in.off
	damage := func(isRecord bool, err error) (uint32, []byte, error) {
		return 0, nil, &recordError{offset: off, isRecord: isRecord, err: err}
	}
	h, err := s.in.peek(12)
	if len(h) < 8 {
		if len(h) == 0 || !isEOF(err) {
			return 0, nil, err // io.EOF at a clean end, or an I/O error
		}
		s.in.discard(len(h))
		return damage(false, fmt.Errorf("%w: %d of 8 block header bytes", ErrTruncated, len(h)))
	}
	typ := s.order.Uint32(h[0:4])
	if typ == ngBlockSHB {
		// A new section may switch byte order.
		if len(h) < 12 {
			s.in.discard(len(h))
			return damage(false, fmt.Errorf("%w: section header of %d bytes", ErrTruncated, len(h)))
		}
		order, ok := ngByteOrder(h[8:12])
		if !ok {
			s.in.discard(1)
			s.resync = true
			return damage(false, fmt.Errorf("%w: section header with bad byte-order magic", ErrBadRecord))
		}
		s.order = order
	}
	blen := s.order.Uint32(h[4:8])
	if blen < 12 || blen%4 != 0 || blen > ngMaxBlock {
		s.in.discard(1)
		s.resync = true
		return damage(isPacketBlock(typ), fmt.Errorf("%w: block type %#x with length %d", ErrBadRecord, typ, blen))
	}
	block, err := s.in.read(int(blen))
	if err != nil {
		if !isEOF(err) {
			return 0, nil, err
		}
		return damage(isPacketBlock(typ), fmt.Errorf("%w: %d of %d block bytes", ErrTruncated, len(block), blen))
	}
	if trail := s.order.Uint32(block[blen-4:]); trail != blen {
		// The block is consumed; if its length was wrong the next
		// header will not parse and triggers a resynchronisation.
		return damage(isPacketBlock(typ), fmt.Errorf("%w: block length %d but trailing length %d", ErrBadRecord, blen, trail))
	}
	return typ, block, nil
}

// addIface parses an interface description block body.
func (s *ngSource) addIface(body []byte) error {
	if len(body) < 8 {
		return fmt.Errorf("%w: interface description of %d bytes", ErrBadRecord, len(body))
	}
	ifc := ngIface{
		info: InterfaceInfo{
			LinkType: LinkType(s.order.Uint16(body[0:2])),
			SnapLen:  int(s.order.Uint32(body[4:8])),
		},
		unitsPerSec: 1e6, // the default resolution is microseconds
	}
	// Options: code(2) length(2) value, padded to 4 bytes. Malformed options
	// end the list quietly; none of them is essential.
	opts := body[8:]
	for len(opts) >= 4 {
		code := s.order.Uint16(opts[0:2])
		n := int(s.order.Uint16(opts[2:4]))
		if code == ngOptEnd || 4+n > len(opts) {
			break
		}
		val := opts[4 : 4+n]
		switch {
		case code == ngOptIfName:
			ifc.info.Name = string(val)
		case code == ngOptTSResol && n >= 1:
			if u, ok := unitsPerSecond(val[0]); ok {
				ifc.unitsPerSec = u
			}
		case code == ngOptTSOffset && n >= 8:
			ifc.tsOffset = int64(s.order.Uint64(val))
		}
		opts = opts[min(len(opts), 4+(n+3)&^3):]
	}
	s.ifaces = append(s.ifaces, ifc)
	return nil
}

// unitsPerSecond decodes if_tsresol: the top bit selects a power of two
// instead of ten. Resolutions that do not fit in 64 bits are rejected.
func unitsPerSecond(r byte) (uint64, bool) {
	e := uint(r & 0x7f)
	if r&0x80 != 0 {
		return 1 << e, e <= 63
	}
	if e > 19 {
		return 0, false
	}
	u := uint64(1)
	for range e {
		u *= 10
	}
	return u, true
}

// packet parses the body of an enhanced, simple or obsolete packet block
// into rec.
func (s *ngSource) packet(typ uint32, body []byte, rec *record) error {
	var ifIndex, caplen, origLen uint32
	var tsHi, tsLo uint32
	var rest []byte
	switch typ {
	case ngBlockEPB:
		// interface(4) ts high(4) ts low(4) caplen(4) origlen(4) data options
		if len(body) < 20 {
			return fmt.Errorf("%w: enhanced packet block of %d bytes", ErrBadRecord, len(body))
		}
		ifIndex = s.order.Uint32(body[0:4])
		tsHi, tsLo = s.order.Uint32(body[4:8]), s.order.Uint32(body[8:12])
		caplen = s.order.Uint32(body[12:16])
		origLen = s.order.Uint32(body[16:20])
		rest = body[20:]
	case ngBlockPB:
		// interface(2) drops(2) ts high(4) ts low(4) caplen(4) origlen(4) data options
		if len(body) < 20 {
			return fmt.Errorf("%w: packet block of %d bytes", ErrBadRecord, len(body))
		}
		ifIndex = uint32(s.order.Uint16(body[0:2]))
		tsHi, tsLo = s.order.Uint32(body[4:8]), s.order.Uint32(body[8:12])
		caplen = s.order.Uint32(body[12:16])
		origLen = s.order.Uint32(body[16:20])
		rest = body[20:]
	case ngBlockSPB:
		// origlen(4) data; no time stamp, always interface 0, and the
		// captured length is implied by the block length and snap length.
		if len(body) < 4 {
			return fmt.Errorf("%w: simple packet block of %d bytes", ErrBadRecord, len(body))
		}
		rest = body[4:]
		origLen = s.order.Uint32(body[0:4])
		caplen = min(origLen, uint32(len(rest)))
		if len(s.ifaces) > 0 && s.ifaces[0].info.SnapLen > 0 {
			caplen = min(caplen, uint32(s.ifaces[0].info.SnapLen))
		}
	}
	if ifIndex >= uint32(len(s.ifaces)) {
		return fmt.Errorf("%w: packet for undeclared interface %d", ErrBadRecord, ifIndex)
	}
	if caplen > uint32(len(rest)) {
		return fmt.Errorf("%w: captured length %d exceeds the block", ErrBadRecord, caplen)
	}
	ifc := &s.ifaces[ifIndex]
	// Field by field: a composite literal would be built aside and copied.
	rec.data = rest[:caplen]
	rec.linkType = ifc.info.LinkType
	rec.iface = int(ifIndex)
	rec.origLen = int(origLen)
	rec.time = time.Time{}
	if typ != ngBlockSPB {
		rec.time = ifc.time(tsHi, tsLo)
	}
	return nil
}

// time converts a 64-bit pcapng time stamp in the interface's units.
func (f *ngIface) time(hi, lo uint32) time.Time {
	ts := uint64(hi)<<32 | uint64(lo)
	var sec, nsec uint64
	switch u := f.unitsPerSec; u {
	case 1e6: // the default, and what most writers use
		sec, nsec = ts/1e6, ts%1e6*1e3
	case 1e9:
		sec, nsec = ts/1e9, ts%1e9
	default:
		// nsec = (ts % u) * 1e9 / u, in 128 bits because u may exceed
		// 1e9. The quotient is below 1e9, so Div64 cannot overflow.
		ph, pl := bits.Mul64(ts%u, 1e9)
		sec = ts / u
		nsec, _ = bits.Div64(ph, pl, u)
	}
	return time.Unix(int64(sec)+f.tsOffset, int64(nsec)).UTC()
}

// scan moves forward one byte at a time until the input starts with a
// plausible block, or to the end of the file.
func (s *ngSource) scan() error {
	for {
		h, err := s.in.peek(12)
		if len(h) < 12 {
			if !isEOF(err) && err != nil {
				return err
			}
			s.in.discard(len(h)) // trailing junk: nothing left to find
			return io.EOF
		}
		if s.plausibleBlock(h) {
			return nil
		}
		s.in.discard(1)
	}
}

// plausibleBlock tells whether h starts a block of a defined type whose
// trailing length matches its leading one. A block that runs into the end of
// the file is accepted; next then reports it as truncated.
func (s *ngSource) plausibleBlock(h []byte) bool {
	order := s.order
	typ := order.Uint32(h[0:4])
	switch typ {
	case ngBlockSHB:
		var ok bool
		if order, ok = ngByteOrder(h[8:12]); !ok {
			return false
		}
	default:
		if !ngDefinedBlock(typ) {
			return false
		}
	}
	blen := order.Uint32(h[4:8])
	if blen < 12 || blen%4 != 0 || blen > maxScanRecord {
		return false
	}
	b, _ := s.in.peek(int(blen)) // h may be invalid from here on
	if len(b) < int(blen) {
		return true
	}
	return order.Uint32(b[blen-4:]) == blen
}
