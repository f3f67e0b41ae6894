// This file holds the Decoder: the allocation-free path from one raw
// link-layer frame to a UDP datagram (link header, IPv4, UDP, and hand-off to
// reassembly for fragments). Reader feeds file records through it; a live
// capture source can feed frames straight into Decode.

package capture

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/google/gopacket"
)

const (
	etherTypeIPv4    = 0x0800
	etherTypeVLAN    = 0x8100 // 802.1Q
	etherTypeQinQ    = 0x88a8 // 802.1ad
	etherTypeQinQOld = 0x9100 // pre-standard QinQ
	afINET           = 2      // AF_INET on every OS that matters
	ipProtoUDP       = 17
	ipv4MaxPayload   = 65535 - 20 // largest possible IPv4 payload
)

// Decoder turns link-layer frames into UDP datagrams. The zero value is not
// usable; create one with NewDecoder. A Decoder is not safe for concurrent use.
type Decoder struct {
	opts  Options
	stats Stats
	pkt   Packet  // returned to the caller, reused on every call
	rec   *record // the frame being decoded; its number is stats.Records
	frame record  // the record Decode builds around a frame
	// offloaded: a UDP checksum left to the network card was seen, so
	// the fast cases test for one before they sum a datagram.
	offloaded bool
	defrag
}

// NewDecoder returns a Decoder with the given reassembly options.
func NewDecoder(opts Options) *Decoder {
	d := &Decoder{opts: opts.withDefaults()}
	d.defrag.init()
	return d
}

// Stats returns the counters so far.
func (d *Decoder) Stats() Stats { return d.stats }

// Decode decodes one frame of the given link type. Each call counts as one
// record: Packet.Frame and PacketError.Frame are the number of Decode calls
// so far (plus damaged records reported by a Reader).
//
// It returns the UDP datagram, or (nil, nil) when the frame yields none
// (not IPv4, not UDP, or a fragment of a datagram still being reassembled),
// or (nil, *PacketError) when the frame is damaged. The returned Packet and
// its Payload (which may alias frame) are valid until the next call; frame
// must not be modified meanwhile. ci.Timestamp drives the fragment timeout;
// ci.InterfaceIndex is copied to Packet.Interface; ci.Length, if set, tells a
// frame cut by the snap length (ErrSnapLen) from a damaged one.
func (d *Decoder) Decode(linkType LinkType, frame []byte, ci gopacket.CaptureInfo) (*Packet, error) {
	d.frame = record{data: frame, time: ci.Timestamp, linkType: linkType, origLen: ci.Length, iface: ci.InterfaceIndex}
	p, pe := d.decode(&d.frame)
	if pe != nil {
		return nil, pe
	}
	return p, nil
}

// decode is Decode for the Reader's records, without the CaptureInfo and
// the error interface, which would cost copies on every record.
func (d *Decoder) decode(rec *record) (*Packet, *PacketError) {
	d.stats.Records++
	d.rec = rec
	if d.oldest != nil {
		d.expire(rec.time)
	}
	lt, ip := rec.linkType, rec.data
	// Ethernet carrying untagged IPv4 is by far the most common frame; the
	// general link switch handles everything else.
	if lt == Ethernet && len(ip) >= 14 && ip[12] == etherTypeIPv4>>8 && ip[13] == etherTypeIPv4&0xff {
		ip = ip[14:]
	} else {
		var kind int
		var err error
		ip, kind, err = stripLink(lt, ip)
		switch {
		case err != nil:
			return nil, d.damage(err)
		case kind == linkUnknown:
			d.stats.UnknownLink++
			return nil, nil
		case kind == linkOther:
			d.stats.NonIPv4++
			return nil, nil
		}
	}
	// Then the usual datagram, in one pass: a 20-byte IPv4 header without
	// options, not a fragment, carrying UDP, every length consistent and
	// both checksums right (or not to be checked). At the first thing that
	// is not usual, decodeIPv4 takes over; it accepts the same datagrams the
	// same way and tells what is wrong with the others.
	if len(ip) < 28 {
		return d.decodeIPv4(ip)
	}
	h := (*[28]byte)(ip) // the IPv4 header and the UDP header
	// Version 4 with a 20-byte header; neither more fragments nor an
	// offset (DF and the reserved bit do not matter).
	if h[0] != 0x45 || h[9] != ipProtoUDP || h[6]&0x3f != 0 || h[7] != 0 {
		return d.decodeIPv4(ip)
	}
	total := int(binary.BigEndian.Uint16(h[2:4]))
	ulen := int(binary.BigEndian.Uint16(h[24:26]))
	if total > len(ip) || ulen < 8 || ulen > total-20 {
		return d.decodeIPv4(ip)
	}
	src, dst := [4]byte(h[12:16]), [4]byte(h[16:20])
	if !d.opts.IgnoreChecksums {
		if !ipv4Header20OK((*[20]byte)(h[:20])) {
			return d.decodeIPv4(ip)
		}
		if c := binary.BigEndian.Uint16(h[26:28]); c != 0 {
			pseudo := pseudoHeaderSum(src, dst, ulen)
			// A checksum left to the network card (see checkUDPMismatch)
			// is no damage either. It holds just the pseudo-header's sum,
			// which costs far less to test than the datagram's: once one
			// was seen (a capture made on loopback has nothing else), it
			// is tested for first.
			if !d.offloaded || c != fold(pseudo) {
				if !sumVerifies(onesAdd(pseudo, ip[20:20+ulen])) {
					if c != fold(pseudo) {
						return d.decodeIPv4(ip)
					}
					d.offloaded = true
				}
			}
		}
	}
	p := &d.pkt
	p.Frame = d.stats.Records
	p.Interface = rec.iface
	p.Time = rec.time
	p.Src = netip.AddrPortFrom(netip.AddrFrom4(src), binary.BigEndian.Uint16(h[20:22]))
	p.Dst = netip.AddrPortFrom(netip.AddrFrom4(dst), binary.BigEndian.Uint16(h[22:24]))
	p.Payload = ip[28 : 20+ulen]
	p.Reassembled = false
	p.TCP.Valid = false
	d.stats.UDP++
	return p, nil
}

// damage counts and wraps an error for the frame being decoded.
func (d *Decoder) damage(err error) *PacketError {
	d.stats.Damaged++
	pe := &PacketError{Frame: d.stats.Records, Offset: -1, Err: err}
	if d.rec != nil {
		pe.Time = d.rec.time // the frame is damaged, not its record header
	}
	return pe
}

// What stripLink found in front of the network layer.
const (
	linkIPv4    = iota // IPv4 follows
	linkOther          // a valid frame carrying something else
	linkUnknown        // a link type this package cannot parse
)

// stripLink removes the link-layer header and reports what follows it.
func stripLink(lt LinkType, b []byte) ([]byte, int, error) {
	switch lt {
	case Ethernet:
		if len(b) < 14 {
			return nil, 0, fmt.Errorf("%w: Ethernet frame of %d bytes", ErrLinkHeader, len(b))
		}
		return etherPayload(binary.BigEndian.Uint16(b[12:14]), b[14:])
	case LinuxSLL:
		// pkttype(2) hatype(2) halen(2) addr(8) protocol(2)
		if len(b) < 16 {
			return nil, 0, fmt.Errorf("%w: Linux SLL frame of %d bytes", ErrLinkHeader, len(b))
		}
		return etherPayload(binary.BigEndian.Uint16(b[14:16]), b[16:])
	case LinuxSLL2:
		// protocol(2) reserved(2) ifindex(4) hatype(2) pkttype(1) halen(1) addr(8)
		if len(b) < 20 {
			return nil, 0, fmt.Errorf("%w: Linux SLL2 frame of %d bytes", ErrLinkHeader, len(b))
		}
		return etherPayload(binary.BigEndian.Uint16(b[0:2]), b[20:])
	case Loopback, Loop:
		// A 4-byte address family. NULL stores it in the byte order of the
		// capturing host, which the file does not record, so accept both;
		// AF_INET (2) is unambiguous either way. LOOP is always big-endian.
		if len(b) < 4 {
			return nil, 0, fmt.Errorf("%w: loopback frame of %d bytes", ErrLinkHeader, len(b))
		}
		fam := binary.BigEndian.Uint32(b)
		if fam == afINET || (lt == Loopback && binary.LittleEndian.Uint32(b) == afINET) {
			return b[4:], linkIPv4, nil
		}
		return nil, linkOther, nil
	case Raw, RawDLT12, RawDLT14:
		// Raw IP: the version nibble says whether it is IPv4 or IPv6.
		if len(b) == 0 {
			return nil, 0, fmt.Errorf("%w: empty raw IP frame", ErrIPv4Header)
		}
		switch b[0] >> 4 {
		case 4:
			return b, linkIPv4, nil
		case 6:
			return nil, linkOther, nil
		}
		return nil, 0, fmt.Errorf("%w: raw IP frame with version %d", ErrIPv4Header, b[0]>>4)
	case RawIPv4:
		return b, linkIPv4, nil
	case RawIPv6:
		return nil, linkOther, nil
	}
	return nil, linkUnknown, nil
}

// etherPayload skips any number of VLAN tags after an EtherType and reports
// whether IPv4 follows. The loop ends because every tag consumes 4 bytes.
func etherPayload(etherType uint16, b []byte) ([]byte, int, error) {
	for etherType == etherTypeVLAN || etherType == etherTypeQinQ || etherType == etherTypeQinQOld {
		if len(b) < 4 {
			return nil, 0, fmt.Errorf("%w: truncated VLAN tag", ErrLinkHeader)
		}
		etherType = binary.BigEndian.Uint16(b[2:4])
		b = b[4:]
	}
	if etherType != etherTypeIPv4 {
		return nil, linkOther, nil
	}
	return b, linkIPv4, nil
}

// decodeIPv4 parses an IPv4 header, trims link-layer padding, and passes the
// payload to UDP parsing or to reassembly.
func (d *Decoder) decodeIPv4(b []byte) (*Packet, *PacketError) {
	if len(b) < 20 {
		return nil, d.damage(fmt.Errorf("%w: %d bytes, need 20", ErrIPv4Header, len(b)))
	}
	if v := b[0] >> 4; v != 4 {
		return nil, d.damage(fmt.Errorf("%w: version %d", ErrIPv4Header, v))
	}
	hl := int(b[0]&0x0f) * 4
	total := int(binary.BigEndian.Uint16(b[2:4]))
	switch {
	case hl < 20:
		return nil, d.damage(fmt.Errorf("%w: header length %d", ErrIPv4Header, hl))
	case total < hl:
		return nil, d.damage(fmt.Errorf("%w: total length %d < header length %d", ErrIPv4Header, total, hl))
	case total > len(b) && d.rec.origLen > len(d.rec.data):
		return nil, d.damage(fmt.Errorf("%w: %d of %d frame bytes captured, IPv4 total length %d",
			ErrSnapLen, len(d.rec.data), d.rec.origLen, total))
	case total > len(b):
		return nil, d.damage(fmt.Errorf("%w: total length %d exceeds the %d captured bytes", ErrIPv4Header, total, len(b)))
	}
	if !d.opts.IgnoreChecksums && !ipv4HeaderOK(b[:hl]) {
		d.stats.BadChecksums++
		return nil, d.damage(fmt.Errorf("%w: IPv4 header checksum 0x%04X, computed 0x%04X",
			ErrChecksum, binary.BigEndian.Uint16(b[10:12]), ^fold(onesAdd(onesAdd(0, b[:10]), b[12:hl]))))
	}
	src := [4]byte(b[12:16])
	dst := [4]byte(b[16:20])
	payload := b[hl:total] // drops Ethernet padding after the datagram
	flagsOff := binary.BigEndian.Uint16(b[6:8])
	if b[9] == ipProtoTCP && flagsOff&0x3fff == 0 {
		return d.decodeTCP(payload, src, dst)
	}
	if b[9] != ipProtoUDP {
		d.stats.NonUDP++
		return nil, nil
	}

	if flagsOff&0x3fff == 0 { // neither more fragments nor an offset: whole
		return d.decodeUDP(payload, src, dst, false)
	}
	d.stats.FragmentsSeen++
	key := fragKey{src: src, dst: dst, id: binary.BigEndian.Uint16(b[4:6]), proto: ipProtoUDP}
	last := flagsOff&0x2000 == 0
	whole, err := d.addFragment(key, int(flagsOff&0x1fff)*8, payload, last, d.stats.Records, d.rec.time)
	if err != nil {
		return nil, d.damage(err)
	}
	if whole == nil {
		return nil, nil
	}
	d.stats.Reassembled++
	return d.decodeUDP(whole, src, dst, true)
}

// decodeUDP parses the UDP header and fills the reused Packet.
func (d *Decoder) decodeUDP(b []byte, src, dst [4]byte, reassembled bool) (*Packet, *PacketError) {
	if len(b) < 8 {
		return nil, d.damage(fmt.Errorf("%w: %d bytes, need 8", ErrUDPHeader, len(b)))
	}
	ulen := int(binary.BigEndian.Uint16(b[4:6]))
	if ulen < 8 || ulen > len(b) {
		return nil, d.damage(fmt.Errorf("%w: length field %d, IP payload %d bytes", ErrUDPHeader, ulen, len(b)))
	}
	// Field by field: a composite literal would be built on the stack and
	// copied.
	p := &d.pkt
	p.Frame = d.stats.Records
	p.Interface = d.rec.iface
	p.Time = d.rec.time
	p.Src = netip.AddrPortFrom(netip.AddrFrom4(src), binary.BigEndian.Uint16(b[0:2]))
	p.Dst = netip.AddrPortFrom(netip.AddrFrom4(dst), binary.BigEndian.Uint16(b[2:4]))
	p.Payload = b[8:ulen]
	p.Reassembled = reassembled
	p.TCP.Valid = false
	if !d.opts.IgnoreChecksums && (b[6] != 0 || b[7] != 0) {
		udp := b[:ulen]
		pseudo := pseudoHeaderSum(src, dst, ulen)
		if fold(onesAdd(pseudo, udp)) != 0xffff {
			if err := checkUDPMismatch(pseudo, udp); err != nil {
				d.stats.BadChecksums++
				pe := d.damage(err)
				pe.Packet = p
				return nil, pe
			}
		}
	}
	d.stats.UDP++
	return p, nil
}

// checkUDPMismatch looks into a UDP datagram whose sum (with pseudo, the
// pseudo-header sum) did not come out right: it is damage unless the
// checksum was never computed.
func checkUDPMismatch(pseudo uint64, udp []byte) error {
	// A field holding just the folded pseudo-header sum is a checksum the
	// sending host left for its network card to finish (Linux
	// CHECKSUM_PARTIAL, which is also what the loopback interface shows):
	// captured on that host, it was never computed, so it is no damage.
	got := binary.BigEndian.Uint16(udp[6:8])
	if got == fold(pseudo) {
		return nil
	}
	want := ^fold(onesAdd(onesAdd(pseudo, udp[:6]), udp[8:]))
	if want == 0 {
		want = 0xffff
	}
	return fmt.Errorf("%w: UDP checksum 0x%04X, computed 0x%04X", ErrChecksum, got, want)
}
