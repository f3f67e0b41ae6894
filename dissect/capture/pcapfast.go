// This file holds the Reader's fused path for the usual record of a
// classic pcap file: an Ethernet frame carrying a whole IPv4 UDP datagram.

package capture

import (
	"encoding/binary"
	"net/netip"
	"time"
)

// fastRecordLen is the shortest record nextPcapUDP takes: the record
// header, an Ethernet header, a 20-byte IPv4 header and a UDP header.
const fastRecordLen = pcapRecordHeaderLen + 14 + 20 + 8

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
// (FuzzPcapFastPathMatchesGeneral), except that the record LastRecord
// shows is only noted (Reader.fusedAt) and built when asked for.
//
// Its fields are read through fixed-size views of the record, which need
// no bounds checks. (Slicing the buffer again after the checksum's call,
// rather than keeping the slices across it, cost more instructions than
// the stores and loads it saved.)
func (r *Reader) nextPcapUDP(s *pcapSource) *Packet {
	in := s.in
	b := in.buf[in.pos:in.end]
	// Shorter than fastRecordLen, the record is cut by the buffer or too
	// short to be taken.
	if len(b) < fastRecordLen || s.resync || s.link != Ethernet {
		return nil
	}
	rp := (*[fastRecordLen]byte)(b)
	h := s.order.pcapRecordHeader((*[pcapRecordHeaderLen]byte)(rp[:16]))
	n := pcapRecordHeaderLen + int(h.caplen)
	if h.caplen > s.maxLen || len(b) < n {
		return nil
	}
	d := r.dec
	if d.oldest != nil || rp[16+12] != etherTypeIPv4>>8 || rp[16+13] != etherTypeIPv4&0xff {
		return nil
	}
	// From here on, decode's fast case. The IPv4 header and the UDP
	// header follow the Ethernet header.
	hd := (*[28]byte)(rp[30:])
	if hd[0] != 0x45 || hd[9] != ipProtoUDP || hd[6]&0x3f != 0 || hd[7] != 0 {
		return nil
	}
	total := int(binary.BigEndian.Uint16(hd[2:4]))
	ulen := int(binary.BigEndian.Uint16(hd[24:26]))
	if total > n-30 || ulen < 8 || ulen > total-20 {
		return nil
	}
	if !d.opts.IgnoreChecksums {
		if !ipv4Header20OK((*[20]byte)(hd[:20])) {
			return nil
		}
		// As in decode's fast case: a checksum left to the network card
		// is tested for first once one was seen (Decoder.offloaded).
		if c := binary.BigEndian.Uint16(hd[26:28]); c != 0 {
			pseudo := pseudoHeaderSum([4]byte(hd[12:16]), [4]byte(hd[16:20]), ulen)
			if !d.offloaded || c != fold(pseudo) {
				if !sumVerifies(onesAdd(pseudo, b[50:50+ulen])) {
					if c != fold(pseudo) {
						return nil
					}
					d.offloaded = true
				}
			}
		}
	}
	// The record is taken: what pcapSource.next, decode and Next do.
	r.fusedAt = in.pos
	in.discard(n)
	if s.plausible(h.sec, h.frac, h.caplen, h.origLen) {
		s.lastSec, s.haveLast = h.sec, true
	}
	if d.rec != &r.rec {
		d.rec = &r.rec
	}
	d.stats.Records++
	p := &d.pkt
	p.Frame = d.stats.Records
	p.Interface = 0
	p.Time = time.Unix(int64(h.sec), int64(h.frac)*s.fracUnit).UTC()
	p.Src = netip.AddrPortFrom(netip.AddrFrom4([4]byte(hd[12:16])), binary.BigEndian.Uint16(hd[20:22]))
	p.Dst = netip.AddrPortFrom(netip.AddrFrom4([4]byte(hd[16:20])), binary.BigEndian.Uint16(hd[22:24]))
	p.Payload = b[58 : 50+ulen]
	p.Reassembled = false
	p.TCP.Valid = false
	d.stats.UDP++
	r.lastGood = in.off
	return p
}

// fusedRecord fills r.rec with the record nextPcapUDP took last, which
// lies at r.fusedAt in the buffer until the next call of Next.
func (r *Reader) fusedRecord() {
	b := r.in.buf[r.fusedAt:]
	h := r.pcap.order.pcapRecordHeader((*[pcapRecordHeaderLen]byte)(b))
	rec := &r.rec
	rec.data = b[pcapRecordHeaderLen : pcapRecordHeaderLen+int(h.caplen)]
	rec.time = r.dec.pkt.Time
	rec.linkType = Ethernet
	rec.iface = 0
	rec.origLen = int(h.origLen)
	rec.offset = r.in.off - int64(pcapRecordHeaderLen+int(h.caplen))
	r.fusedAt = -1
}
