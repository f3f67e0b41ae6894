// This file holds Writer, which writes UDP/IPv4 datagrams (fragmenting them
// at the MTU) or raw records to a pcap or pcapng file. Its output depends
// only on its inputs, byte for byte.
//
// The file formats are written here rather than through gopacket's pcapgo
// writers: those pull in gopacket/layers, whose 5 MB of pointer-holding
// tables every garbage collection of every bcwire command had to scan (and
// keep resident), for nothing the reading side uses.

package capture

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net/netip"
	"time"
)

// Format is a capture file format.
type Format int

const (
	PCAP   Format = iota + 1 // classic pcap, little-endian, nanosecond time stamps
	PCAPNG                   // pcapng, one section with one interface
)

func (f Format) String() string {
	switch f {
	case PCAP:
		return "pcap"
	case PCAPNG:
		return "pcapng"
	case PacketTrace:
		return "packet_trace.log"
	case OBCTrace:
		return "OBCTRACE"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

const (
	writerSnapLen = 262144
	defaultMTU    = 1500
	minMTU        = 68 // the smallest MTU IPv4 allows
	writerTTL     = 128
)

// Writer writes a capture file. Call Flush when done.
type Writer struct {
	// MTU is the largest IPv4 packet (header included) that WriteUDP emits
	// unfragmented; larger datagrams are split into IPv4 fragments.
	// NewWriter sets it to 1500.
	MTU int

	link   LinkType
	format Format
	// The pcapng interfaces, by index: the link type of each (a record of
	// another link type adds one), their name, and the current one.
	ifaces []LinkType
	ifName string
	iface  uint32
	bw     *bufio.Writer
	hdr    [32]byte // scratch: one record header
	ipID   uint16   // last IP identification used
	ipBuf  []byte   // scratch: UDP header + payload
	frame  []byte   // scratch: one link-layer frame
}

// NewWriter writes the file header and returns a Writer. link must be
// Ethernet, LinuxSLL, Loopback or RawIPv4. A pcapng file names its one
// interface bcwire0 (a generated capture has no real one).
func NewWriter(w io.Writer, format Format, link LinkType) (*Writer, error) {
	return NewWriterInterface(w, format, link, "bcwire0")
}

// NewWriterInterface is NewWriter for packets captured on the interface
// ifName (eth0, lo), which a pcapng file names in its interface block.
func NewWriterInterface(w io.Writer, format Format, link LinkType, ifName string) (*Writer, error) {
	switch link {
	case Ethernet, LinuxSLL, Loopback, RawIPv4:
	default:
		return nil, fmt.Errorf("capture: cannot write link type %v", link)
	}
	return newWriter(w, format, link, ifName)
}

func newWriter(w io.Writer, format Format, link LinkType, ifName string) (*Writer, error) {
	wr := &Writer{MTU: defaultMTU, link: link, format: format, bw: bufio.NewWriter(w), ifaces: []LinkType{link}, ifName: ifName}
	var h []byte
	switch format {
	case PCAP:
		// Little-endian, nanosecond time stamps, version 2.4.
		h = binary.LittleEndian.AppendUint32(h, 0xA1B23C4D)
		h = binary.LittleEndian.AppendUint16(h, 2)
		h = binary.LittleEndian.AppendUint16(h, 4)
		h = binary.LittleEndian.AppendUint32(h, 0) // time zone
		h = binary.LittleEndian.AppendUint32(h, 0) // accuracy
		h = binary.LittleEndian.AppendUint32(h, writerSnapLen)
		h = binary.LittleEndian.AppendUint32(h, uint32(link))
	case PCAPNG:
		// One section (its application named, nothing host-dependent) and
		// one interface with nanosecond time stamps.
		h = appendNgBlock(h, ngBlockSHB, func(b []byte) []byte {
			b = binary.LittleEndian.AppendUint32(b, 0x1A2B3C4D) // byte-order magic
			b = binary.LittleEndian.AppendUint16(b, 1)
			b = binary.LittleEndian.AppendUint16(b, 0)
			b = binary.LittleEndian.AppendUint64(b, ^uint64(0)) // section length unknown
			b = appendNgOption(b, 4, []byte("bcwire"))          // shb_userappl
			return appendNgOption(b, 0, nil)
		})
		h = appendNgIDB(h, link, ifName)
	default:
		return nil, fmt.Errorf("capture: unknown format %v", format)
	}
	if _, err := wr.bw.Write(h); err != nil {
		return nil, err
	}
	return wr, nil
}

// appendNgIDB appends an interface description block: link, the
// writer's snap length, the name and nanosecond time stamps.
func appendNgIDB(h []byte, link LinkType, ifName string) []byte {
	return appendNgBlock(h, ngBlockIDB, func(b []byte) []byte {
		b = binary.LittleEndian.AppendUint16(b, uint16(link))
		b = binary.LittleEndian.AppendUint16(b, 0)
		b = binary.LittleEndian.AppendUint32(b, writerSnapLen)
		if ifName != "" {
			b = appendNgOption(b, 2, []byte(ifName)) // if_name
		}
		b = appendNgOption(b, 9, []byte{9}) // if_tsresol: nanoseconds
		return appendNgOption(b, 0, nil)
	})
}

// appendNgBlock appends a pcapng block of type typ whose body body appends.
func appendNgBlock(b []byte, typ uint32, body func([]byte) []byte) []byte {
	start := len(b)
	b = binary.LittleEndian.AppendUint32(b, typ)
	b = binary.LittleEndian.AppendUint32(b, 0) // length, set below
	b = body(b)
	n := uint32(len(b) - start + 4)
	binary.LittleEndian.PutUint32(b[start+4:], n)
	return binary.LittleEndian.AppendUint32(b, n)
}

// appendNgOption appends one option padded to 32 bits (code 0 ends the
// list).
func appendNgOption(b []byte, code uint16, v []byte) []byte {
	b = binary.LittleEndian.AppendUint16(b, code)
	b = binary.LittleEndian.AppendUint16(b, uint16(len(v)))
	b = append(b, v...)
	return append(b, make([]byte, pad4(len(v)))...)
}

func pad4(n int) int { return (4 - n%4) % 4 }

// Flush writes out buffered data.
func (w *Writer) Flush() error { return w.bw.Flush() }

// WriteRaw writes one record holding data as-is (it must start with the
// Writer's link-layer header). A zero t is written as the Unix epoch.
func (w *Writer) WriteRaw(t time.Time, data []byte) error {
	return w.writeRecord(t, data, len(data))
}

// writeRecord writes one record of data, from a frame of origLen bytes.
func (w *Writer) writeRecord(t time.Time, data []byte, origLen int) error {
	if t.IsZero() {
		t = time.Unix(0, 0)
	}
	if len(data) > writerSnapLen {
		return fmt.Errorf("capture: record of %d bytes exceeds the snap length %d", len(data), writerSnapLen)
	}
	h := w.hdr[:0]
	n, orig := uint32(len(data)), uint32(origLen)
	if w.format == PCAP {
		h = binary.LittleEndian.AppendUint32(h, uint32(t.Unix()))
		h = binary.LittleEndian.AppendUint32(h, uint32(t.Nanosecond()))
		h = binary.LittleEndian.AppendUint32(h, n)
		h = binary.LittleEndian.AppendUint32(h, orig)
		w.bw.Write(h)
		_, err := w.bw.Write(data)
		return err
	}
	ts := uint64(t.UnixNano())
	total := uint32(32 + len(data) + pad4(len(data)))
	h = binary.LittleEndian.AppendUint32(h, ngBlockEPB)
	h = binary.LittleEndian.AppendUint32(h, total)
	h = binary.LittleEndian.AppendUint32(h, w.iface)
	h = binary.LittleEndian.AppendUint32(h, uint32(ts>>32))
	h = binary.LittleEndian.AppendUint32(h, uint32(ts))
	h = binary.LittleEndian.AppendUint32(h, n)
	h = binary.LittleEndian.AppendUint32(h, orig)
	w.bw.Write(h)
	w.bw.Write(data)
	h = append(w.hdr[:0], make([]byte, pad4(len(data)))...)
	h = binary.LittleEndian.AppendUint32(h, total)
	_, err := w.bw.Write(h)
	return err
}

// WriteUDP writes one UDP/IPv4 datagram: a record per IPv4 packet, several
// if it has to be fragmented to fit the MTU. Each datagram takes the next IP
// identification; the IPv4 header and UDP checksums are set (the UDP one, over
// the whole datagram, travels in the first fragment).
func (w *Writer) WriteUDP(t time.Time, src, dst netip.AddrPort, payload []byte) error {
	s, d := src.Addr().Unmap(), dst.Addr().Unmap()
	if !s.Is4() || !d.Is4() {
		return fmt.Errorf("capture: WriteUDP needs IPv4 addresses, got %v -> %v", src, dst)
	}
	udpLen := 8 + len(payload)
	if udpLen > ipv4MaxPayload {
		return fmt.Errorf("capture: UDP payload of %d bytes does not fit in IPv4", len(payload))
	}
	mtu := w.MTU
	if mtu == 0 {
		mtu = defaultMTU
	}
	if mtu < minMTU {
		return fmt.Errorf("capture: MTU %d below the IPv4 minimum of %d", mtu, minMTU)
	}
	w.ipID++

	b := w.ipBuf[:0]
	b = binary.BigEndian.AppendUint16(b, src.Port())
	b = binary.BigEndian.AppendUint16(b, dst.Port())
	b = binary.BigEndian.AppendUint16(b, uint16(udpLen))
	b = binary.BigEndian.AppendUint16(b, 0) // the checksum, set below
	b = append(b, payload...)
	binary.BigEndian.PutUint16(b[6:8], udpChecksum(s.As4(), d.As4(), b))
	w.ipBuf = b

	// Fragments other than the last must carry a multiple of 8 bytes.
	chunk := udpLen
	if 20+udpLen > mtu {
		chunk = (mtu - 20) &^ 7
	}
	for off := 0; off < udpLen; off += chunk {
		end := min(off+chunk, udpLen)
		f := appendLinkHeader(w.frame[:0], w.link, s.As4(), d.As4())
		f = appendIPv4Header(f, s.As4(), d.As4(), w.ipID, off, end < udpLen, ipProtoUDP, end-off)
		f = append(f, b[off:end]...)
		w.frame = f
		if err := w.WriteRaw(t, f); err != nil {
			return err
		}
	}
	return nil
}

// macFor derives a fixed, locally administered MAC address from an IPv4
// address, so the Ethernet headers are plausible and deterministic.
func macFor(ip [4]byte) [6]byte {
	return [6]byte{0x02, 0x00, ip[0], ip[1], ip[2], ip[3]}
}

// appendLinkHeader appends the link-layer header for an IPv4 packet.
func appendLinkHeader(b []byte, link LinkType, src, dst [4]byte) []byte {
	switch link {
	case Ethernet:
		dm, sm := macFor(dst), macFor(src)
		b = append(b, dm[:]...)
		b = append(b, sm[:]...)
		b = binary.BigEndian.AppendUint16(b, etherTypeIPv4)
	case LinuxSLL:
		sm := macFor(src)
		b = binary.BigEndian.AppendUint16(b, 0) // packet type: to us
		b = binary.BigEndian.AppendUint16(b, 1) // ARPHRD_ETHER
		b = binary.BigEndian.AppendUint16(b, 6) // address length
		b = append(b, sm[:]...)
		b = append(b, 0, 0) // address field is 8 bytes
		b = binary.BigEndian.AppendUint16(b, etherTypeIPv4)
	case Loopback:
		// Written as a little-endian host would.
		b = binary.LittleEndian.AppendUint32(b, afINET)
	}
	return b
}

// appendIPv4Header appends a 20-byte IPv4 header with a valid checksum.
// fragOff is the payload offset in bytes (a multiple of 8), more sets MF.
func appendIPv4Header(b []byte, src, dst [4]byte, id uint16, fragOff int, more bool, proto uint8, payloadLen int) []byte {
	flagsOff := uint16(fragOff / 8)
	if more {
		flagsOff |= 0x2000
	}
	h := [20]byte{0: 0x45, 8: writerTTL, 9: proto}
	binary.BigEndian.PutUint16(h[2:4], uint16(20+payloadLen))
	binary.BigEndian.PutUint16(h[4:6], id)
	binary.BigEndian.PutUint16(h[6:8], flagsOff)
	copy(h[12:16], src[:])
	copy(h[16:20], dst[:])
	binary.BigEndian.PutUint16(h[10:12], ipv4Checksum(h[:]))
	return append(b, h[:]...)
}
