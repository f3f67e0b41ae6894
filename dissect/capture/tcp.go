package capture

import (
	"encoding/binary"
	"fmt"
	"net/netip"
)

// MasterListPort is the GameSpy master server's TCP list port. TCP
// segments to or from it are the one TCP a Bridge Commander capture holds
// of interest (a game client browsing for servers); the Decoder returns
// them, and skips every other TCP segment as it skips all that is not UDP.
const MasterListPort = 28900

const ipProtoTCP = 6

// TCP flags the stream follower needs.
const (
	TCPFin = 0x01
	TCPSyn = 0x02
	TCPRst = 0x04
)

// TCPSegment describes the TCP segment a Packet carries; Valid is false
// for UDP datagrams. The segment's data is the Packet's Payload.
type TCPSegment struct {
	Valid bool
	Seq   uint32
	Flags uint8 // TCPFin, TCPSyn, TCPRst and the other header flags
}

// decodeTCP fills the reused Packet from a TCP segment of the master list
// port; other segments, and segments with neither data nor SYN, FIN or
// RST, give nil. Its checksum is not checked (bcwire reads this stream
// only to show it).
func (d *Decoder) decodeTCP(b []byte, src, dst [4]byte) (*Packet, *PacketError) {
	if len(b) < 20 {
		return nil, d.damage(fmt.Errorf("%w: TCP header of %d bytes, need 20", ErrIPv4Header, len(b)))
	}
	sport, dport := binary.BigEndian.Uint16(b[0:2]), binary.BigEndian.Uint16(b[2:4])
	if sport != MasterListPort && dport != MasterListPort {
		d.stats.NonUDP++
		return nil, nil
	}
	off := int(b[12]>>4) * 4
	if off < 20 || off > len(b) {
		return nil, d.damage(fmt.Errorf("%w: TCP data offset %d in a %d-byte segment", ErrIPv4Header, off, len(b)))
	}
	flags := b[13]
	if off == len(b) && flags&(TCPFin|TCPSyn|TCPRst) == 0 {
		d.stats.NonUDP++ // a bare ACK
		return nil, nil
	}
	p := &d.pkt
	p.Frame = d.stats.Records
	p.Interface = d.rec.iface
	p.Time = d.rec.time
	p.Src = netip.AddrPortFrom(netip.AddrFrom4(src), sport)
	p.Dst = netip.AddrPortFrom(netip.AddrFrom4(dst), dport)
	p.Payload = b[off:]
	p.Reassembled = false
	p.TCP = TCPSegment{Valid: true, Seq: binary.BigEndian.Uint32(b[4:8]), Flags: flags}
	d.stats.TCP++
	return p, nil
}
