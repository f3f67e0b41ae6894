// This file holds the Reader's fused path for the usual record of a
// classic pcap file: an Ethernet frame carrying a whole IPv4 UDP datagram.

package capture

import (
	"encoding/binary"
	"net/netip"
	"time"
)

// nextPcapUDP is Next for the usual record of a classic pcap file, in one
// function: a record whose header is sane and which lies whole in the
// buffer (pcapSource.next's fast case), holding an Ethernet frame with a
// plain IPv4 UDP datagram whose checksums are right or not to be checked
// (Decoder.decode's fast case), while no fragments wait for reassembly.
// The general path spends a call through the source interface, a call to
// decode, and the record's fields written by one and read back by the
// other on each such record: a tenth of reading's instructions.
//
// For any other record it returns nil having changed nothing, and Next
// reads the record the general way; otherwise it leaves the Reader, the
// source and the Decoder as the general path would
// (FuzzPcapFastPathMatchesGeneral).
func (r *Reader) nextPcapUDP(s *pcapSource) *Packet {
	in := s.in
	b := in.buf[in.pos:in.end]
	if len(b) < pcapRecordHeaderLen || s.resync || s.link != Ethernet {
		return nil
	}
	h := s.order.pcapRecordHeader((*[pcapRecordHeaderLen]byte)(b))
	n := pcapRecordHeaderLen + int(h.caplen)
	if h.caplen > s.maxLen || len(b) < n {
		return nil
	}
	d := r.dec
	frame := b[pcapRecordHeaderLen:n]
	if d.oldest != nil || len(frame) < 14+28 || frame[12] != etherTypeIPv4>>8 || frame[13] != etherTypeIPv4&0xff {
		return nil
	}
	// From here on, decode's fast case.
	ip := frame[14:]
	hd := (*[28]byte)(ip)
	if hd[0] != 0x45 || hd[9] != ipProtoUDP || hd[6]&0x3f != 0 || hd[7] != 0 {
		return nil
	}
	total := int(binary.BigEndian.Uint16(hd[2:4]))
	ulen := int(binary.BigEndian.Uint16(hd[24:26]))
	if total > len(ip) || ulen < 8 || ulen > total-20 {
		return nil
	}
	src, dst := [4]byte(hd[12:16]), [4]byte(hd[16:20])
	if !d.opts.IgnoreChecksums {
		if !ipv4Header20OK((*[20]byte)(hd[:20])) {
			return nil
		}
		if hd[26] != 0 || hd[27] != 0 {
			pseudo := pseudoHeaderSum(src, dst, ulen)
			if !sumVerifies(onesAdd(pseudo, ip[20:20+ulen])) && binary.BigEndian.Uint16(hd[26:28]) != fold(pseudo) {
				return nil
			}
		}
	}
	// The record is taken: what pcapSource.next, decode and Next do.
	rec := &r.rec
	rec.offset = in.off
	in.discard(n)
	if s.plausible(h.sec, h.frac, h.caplen, h.origLen) {
		s.lastSec, s.haveLast = h.sec, true
	}
	t := time.Unix(int64(h.sec), int64(h.frac)*s.fracUnit).UTC()
	rec.data = frame
	rec.time = t
	rec.linkType = Ethernet
	rec.iface = 0
	rec.origLen = int(h.origLen)
	d.stats.Records++
	d.rec = rec
	p := &d.pkt
	p.Frame = d.stats.Records
	p.Interface = 0
	p.Time = t
	p.Src = netip.AddrPortFrom(netip.AddrFrom4(src), binary.BigEndian.Uint16(hd[20:22]))
	p.Dst = netip.AddrPortFrom(netip.AddrFrom4(dst), binary.BigEndian.Uint16(hd[22:24]))
	p.Payload = ip[28 : 20+ulen]
	p.Reassembled = false
	p.TCP.Valid = false
	d.stats.UDP++
	r.lastGood = in.off
	return p
}
