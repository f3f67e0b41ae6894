// This file holds test helpers: hand-built pcap and pcapng files (any byte
// order, magic and link type), hand-built frames and IPv4 fragments, and a
// bounded read-everything loop.

package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net/netip"
	"testing"
	"time"

	"github.com/google/gopacket"
)

var (
	addrA = netip.MustParseAddrPort("10.0.0.1:22101")
	addrB = netip.MustParseAddrPort("192.168.7.20:2302")
	addrC = netip.MustParseAddrPort("172.16.1.9:22101")
	t0    = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
)

// payload returns n deterministic bytes seeded by seed.
func payload(seed, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(seed*31 + i*7 + i>>8)
	}
	return b
}

// byteOrder is what binary.LittleEndian and binary.BigEndian both are.
type byteOrder interface {
	binary.ByteOrder
	binary.AppendByteOrder
}

// --- classic pcap ---

type pcapBuilder struct {
	order byteOrder
	nanos bool
	buf   []byte
}

func newPcap(order byteOrder, nanos bool, link LinkType, snaplen uint32) *pcapBuilder {
	p := &pcapBuilder{order: order, nanos: nanos}
	magic := uint32(pcapMagicMicroLE)
	if nanos {
		magic = pcapMagicNanoLE
	}
	p.buf = order.AppendUint32(p.buf, magic) // the magic is written in the file's byte order
	p.buf = order.AppendUint16(p.buf, 2)
	p.buf = order.AppendUint16(p.buf, 4)
	p.buf = order.AppendUint32(p.buf, 0)
	p.buf = order.AppendUint32(p.buf, 0)
	p.buf = order.AppendUint32(p.buf, snaplen)
	p.buf = order.AppendUint32(p.buf, uint32(link))
	return p
}

func (p *pcapBuilder) header(sec, frac, caplen, origlen uint32) *pcapBuilder {
	p.buf = p.order.AppendUint32(p.buf, sec)
	p.buf = p.order.AppendUint32(p.buf, frac)
	p.buf = p.order.AppendUint32(p.buf, caplen)
	p.buf = p.order.AppendUint32(p.buf, origlen)
	return p
}

func (p *pcapBuilder) record(t time.Time, data []byte) *pcapBuilder {
	frac := uint32(t.Nanosecond())
	if !p.nanos {
		frac /= 1000
	}
	p.header(uint32(t.Unix()), frac, uint32(len(data)), uint32(len(data)))
	p.buf = append(p.buf, data...)
	return p
}

func (p *pcapBuilder) raw(b []byte) *pcapBuilder {
	p.buf = append(p.buf, b...)
	return p
}

// --- pcapng ---

type ngBuilder struct {
	order byteOrder
	buf   []byte
}

func newNg(order byteOrder) *ngBuilder {
	n := &ngBuilder{order: order}
	n.shb()
	return n
}

// block appends a block, padding the body to 4 bytes.
func (n *ngBuilder) block(typ uint32, body []byte) *ngBuilder {
	for len(body)%4 != 0 {
		body = append(body, 0)
	}
	l := uint32(12 + len(body))
	n.buf = n.order.AppendUint32(n.buf, typ)
	n.buf = n.order.AppendUint32(n.buf, l)
	n.buf = append(n.buf, body...)
	n.buf = n.order.AppendUint32(n.buf, l)
	return n
}

func (n *ngBuilder) shb() *ngBuilder { return n.shbVersion(1) }

func (n *ngBuilder) shbVersion(major uint16) *ngBuilder {
	var body []byte
	body = n.order.AppendUint32(body, ngByteOrderMagic)
	body = n.order.AppendUint16(body, major)
	body = n.order.AppendUint16(body, 0)
	body = n.order.AppendUint64(body, ^uint64(0))
	return n.block(ngBlockSHB, body)
}

// ngOpt encodes one option, padded.
func ngOpt(order byteOrder, code uint16, val []byte) []byte {
	b := order.AppendUint16(nil, code)
	b = order.AppendUint16(b, uint16(len(val)))
	b = append(b, val...)
	for len(b)%4 != 0 {
		b = append(b, 0)
	}
	return b
}

func (n *ngBuilder) idb(link LinkType, snaplen uint32, opts ...[]byte) *ngBuilder {
	var body []byte
	body = n.order.AppendUint16(body, uint16(link))
	body = n.order.AppendUint16(body, 0)
	body = n.order.AppendUint32(body, snaplen)
	for _, o := range opts {
		body = append(body, o...)
	}
	if len(opts) > 0 {
		body = append(body, 0, 0, 0, 0)
	}
	return n.block(ngBlockIDB, body)
}

// epb appends an enhanced packet block; ts is in the interface's units.
func (n *ngBuilder) epb(iface uint32, ts uint64, data []byte) *ngBuilder {
	var body []byte
	body = n.order.AppendUint32(body, iface)
	body = n.order.AppendUint32(body, uint32(ts>>32))
	body = n.order.AppendUint32(body, uint32(ts))
	body = n.order.AppendUint32(body, uint32(len(data)))
	body = n.order.AppendUint32(body, uint32(len(data)))
	body = append(body, data...)
	return n.block(ngBlockEPB, body)
}

func (n *ngBuilder) spb(data []byte) *ngBuilder {
	body := n.order.AppendUint32(nil, uint32(len(data)))
	return n.block(ngBlockSPB, append(body, data...))
}

// --- frames ---

// ipv4UDP builds a complete IPv4+UDP packet.
func ipv4UDP(src, dst netip.AddrPort, id uint16, pl []byte) []byte {
	frags := ipv4Fragments(src, dst, id, pl, 1<<20)
	return frags[0]
}

// ipv4Fragments splits a UDP datagram into IPv4 packets carrying at most
// chunk (a multiple of 8) bytes of IP payload each.
func ipv4Fragments(src, dst netip.AddrPort, id uint16, pl []byte, chunk int) [][]byte {
	udp := binary.BigEndian.AppendUint16(nil, src.Port())
	udp = binary.BigEndian.AppendUint16(udp, dst.Port())
	udp = binary.BigEndian.AppendUint16(udp, uint16(8+len(pl)))
	udp = binary.BigEndian.AppendUint16(udp, 0)
	udp = append(udp, pl...)
	var out [][]byte
	for off := 0; off < len(udp); off += chunk {
		end := min(off+chunk, len(udp))
		out = append(out, ipv4Fragment(src, dst, id, off, end < len(udp), udp[off:end]))
	}
	return out
}

// ipv4Fragment builds one IPv4 packet carrying data at byte offset off.
func ipv4Fragment(src, dst netip.AddrPort, id uint16, off int, more bool, data []byte) []byte {
	b := appendIPv4Header(nil, src.Addr().As4(), dst.Addr().As4(), id, off, more, ipProtoUDP, len(data))
	return append(b, data...)
}

// fixIPv4Checksum recomputes the header checksum of an IPv4 packet after a
// test changed its header, if the header is all there.
func fixIPv4Checksum(b []byte) []byte {
	if len(b) < 20 {
		return b
	}
	hl := int(b[0]&0x0f) * 4
	if hl < 20 || hl > len(b) {
		hl = 20
	}
	binary.BigEndian.PutUint16(b[10:12], 0)
	binary.BigEndian.PutUint16(b[10:12], ipv4Checksum(b[:hl]))
	return b
}

// ipv4Proto builds an IPv4 packet of another protocol.
func ipv4Proto(proto uint8, pl []byte) []byte {
	b := appendIPv4Header(nil, addrA.Addr().As4(), addrB.Addr().As4(), 1, 0, false, proto, len(pl))
	return append(b, pl...)
}

func ethernet(etherType uint16, l3 []byte, vlanTPIDs ...uint16) []byte {
	b := make([]byte, 12, 64)
	for i := range b {
		b[i] = byte(i + 1)
	}
	for i, tpid := range vlanTPIDs {
		b = binary.BigEndian.AppendUint16(b, tpid)
		b = binary.BigEndian.AppendUint16(b, uint16(100+i)) // TCI: VLAN id
	}
	b = binary.BigEndian.AppendUint16(b, etherType)
	return append(b, l3...)
}

func sll2(protocol uint16, l3 []byte) []byte {
	b := binary.BigEndian.AppendUint16(nil, protocol)
	b = append(b, 0, 0)       // reserved
	b = append(b, 0, 0, 0, 3) // ifindex
	b = append(b, 0, 1)       // ARPHRD_ETHER
	b = append(b, 0, 6)       // packet type, address length
	b = append(b, 1, 2, 3, 4, 5, 6, 0, 0)
	return append(b, l3...)
}

func null(order byteOrder, family uint32, l3 []byte) []byte {
	return append(order.AppendUint32(nil, family), l3...)
}

// --- reading ---

func ci(t time.Time) gopacket.CaptureInfo { return gopacket.CaptureInfo{Timestamp: t} }

type got struct {
	Frame       int
	Iface       int
	Time        time.Time
	Src, Dst    netip.AddrPort
	Payload     []byte
	Reassembled bool
}

// readAll reads a whole capture, collecting packets (copied) and errors.
func readAll(t *testing.T, file []byte, opts Options) ([]got, []*PacketError, *Reader) {
	t.Helper()
	r, err := NewReaderWithOptions(bytes.NewReader(file), opts)
	if err != nil {
		t.Fatalf("NewReader: %v", err)
	}
	var pkts []got
	var errs []*PacketError
	for range 100000 {
		p, err := r.Next()
		if err == io.EOF {
			return pkts, errs, r
		}
		var pe *PacketError
		if errors.As(err, &pe) {
			errs = append(errs, pe)
			continue
		}
		if err != nil {
			t.Fatalf("Next: unexpected error %v", err)
		}
		pkts = append(pkts, got{p.Frame, p.Interface, p.Time, p.Src, p.Dst, bytes.Clone(p.Payload), p.Reassembled})
	}
	t.Fatal("reader did not reach EOF")
	return nil, nil, nil
}
