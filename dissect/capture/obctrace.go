// This file reads OBCTRACE files (the format OBCTrace), which OpenBC's
// networked battle test (tests/test_networked_battle.c, format in its
// tests/test_harness.h) writes: the magic "OBCTRACE", then records
//
//	[tick u32 LE]['S' or 'R'][slot u8][len u16 LE][game message]
//
// 'S' is a message a test client sent (client to server), 'R' one it
// received. The file holds game messages only, with no transport, no
// addresses and no clock, so each record becomes a datagram built here:
//
//   - a game message goes in one unreliable data message (type 0x32) of a
//     datagram of its own; the sender's peer id is 0x01 for 'R' and
//     slot+2 for 'S';
//   - an 'R' record whose first byte is 0x80 (18 bytes in the battle
//     test, whose players have four-letter names) is not a game message:
//     the test client's transport parser hands out a keepalive (type 0x00)
//     from its third byte on. It becomes that keepalive again ([0x00]
//     [len+2][body], the body starting with the high byte of its length
//     field), so it is counted as a keepalive, not as opcode 0x80;
//   - the server is 0.0.0.0:22101 (or Options.TraceServer), the client of
//     slot N 0.0.1.N:(50000+N): stand-ins;
//   - the time is the tick times 100 ms (NB_DT, "100ms per tick", in
//     test_networked_battle.c: the battle loop's tick), from 1970-01-01
//     UTC; records of one tick share their time.
//
// The transport figures of such a file are those of this reconstruction,
// not of the wire.

package capture

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"net/netip"
	"time"
)

// OBCTrace is OpenBC's OBCTRACE test trace format (read only).
const OBCTrace Format = PacketTrace + 1

var obcMagic = []byte("OBCTRACE")

// OBCTraceTick is the time one OBCTRACE tick stands for.
const OBCTraceTick = 100 * time.Millisecond

// obcMaxGame is the largest game message one unfragmented data message
// carries: its 13-bit length covers the 3-byte header too.
const obcMaxGame = 1<<13 - 1 - 3

type obcSource struct {
	in     *input
	server netip.AddrPort
	frameBuilder
}

func newOBCSource(in *input, opts Options) (*obcSource, error) {
	if traceEncrypt == nil {
		return nil, errCipherMissing
	}
	if _, err := in.read(len(obcMagic)); err != nil {
		return nil, err
	}
	s := &obcSource{in: in, server: opts.TraceServer}
	if !s.server.IsValid() {
		s.server = DefaultTraceServer
	}
	return s, nil
}

func (s *obcSource) iface(i int) (InterfaceInfo, bool) {
	if i != 0 {
		return InterfaceInfo{}, false
	}
	return InterfaceInfo{LinkType: RawIPv4, SnapLen: 65535, Name: "OBCTRACE"}, true
}

// obcClient is the stand-in address of the test client of a slot.
func obcClient(slot uint8) netip.AddrPort {
	return netip.AddrPortFrom(netip.AddrFrom4([4]byte{0, 0, 1, slot}), 50000+uint16(slot))
}

func (s *obcSource) next(rec *record) error {
	off := s.in.off
	h, err := s.in.read(8)
	if err != nil {
		if err == io.EOF {
			return io.EOF
		}
		if isEOF(err) {
			return &recordError{offset: off, isRecord: true, err: fmt.Errorf("%w: OBCTRACE record header", ErrTruncated)}
		}
		return err
	}
	tick := binary.LittleEndian.Uint32(h[0:4])
	dir, slot, n := h[4], h[5], int(binary.LittleEndian.Uint16(h[6:8]))
	body, err := s.in.read(n)
	if err != nil && !isEOF(err) {
		return err
	}
	if len(body) < n {
		return &recordError{offset: off, isRecord: true, err: fmt.Errorf("%w: OBCTRACE record of %d bytes holds %d", ErrTruncated, n, len(body))}
	}
	var sent bool
	switch dir {
	case 'S':
		sent = true
	case 'R':
	default:
		return &recordError{offset: off, isRecord: true, err: fmt.Errorf("%w: OBCTRACE direction %q, want 'S' or 'R'", ErrBadRecord, dir)}
	}
	switch {
	case n == 0:
		return &recordError{offset: off, isRecord: true, err: fmt.Errorf("%w: empty OBCTRACE record", ErrBadRecord)}
	case n > obcMaxGame:
		return &recordError{offset: off, isRecord: true, err: fmt.Errorf("%w: OBCTRACE message of %d bytes, more than one data message holds", ErrBadRecord, n)}
	}
	client := obcClient(slot)
	src, dst, peer := s.server, client, byte(0x01)
	if sent {
		src, dst, peer = client, s.server, slot+2
	}
	f := s.frame(src, dst, 2+3+n)
	d := f[udpFrameHeader:]
	d[0], d[1] = peer, 1
	if !sent && isKeepaliveBody(body) {
		// A keepalive's body from the third byte of the message on.
		d[2], d[3] = 0x00, byte(n+2)
		copy(d[4:], body)
		f = f[:len(f)-1]
		s.fixLengths(f)
	} else {
		l := uint16(3 + n)
		d[2], d[3], d[4] = 0x32, byte(l), byte(l>>8)
		copy(d[5:], body)
	}
	// Encrypted as on the wire: readers decrypt what they read.
	traceEncrypt(f[udpFrameHeader:], f[udpFrameHeader:])
	rec.data, rec.time, rec.linkType, rec.iface = f, time.Unix(0, 0).UTC().Add(time.Duration(tick)*OBCTraceTick), RawIPv4, 0
	rec.origLen, rec.offset, rec.damage = len(f), off, nil
	return nil
}

// fixLengths rewrites the IPv4 and UDP lengths (and the header checksum)
// of a frame made shorter than frame made it.
func (s *obcSource) fixLengths(f []byte) {
	total, ulen := len(f), len(f)-20
	f[2], f[3] = byte(total>>8), byte(total)
	f[24], f[25] = byte(ulen>>8), byte(ulen)
	f[10], f[11] = 0, 0
	c := ipv4Checksum(f[:20])
	f[10], f[11] = byte(c>>8), byte(c)
}

// isKeepaliveBody reports whether an 'R' record is a keepalive from its
// third byte on: the high byte of a length field under 256 with the
// reliable bit (and perhaps the ordered one) set, then at least a sequence
// number, a slot and an IPv4 address. No game opcode is 0x80 or 0xC0.
func isKeepaliveBody(b []byte) bool {
	return len(b) >= 8 && len(b)+2 <= 0xFF && b[0]&0x80 != 0 && b[0]&0x3F == 0
}

// isOBCTrace reports whether b starts with the OBCTRACE magic.
func isOBCTrace(b []byte) bool { return bytes.HasPrefix(b, obcMagic) }
