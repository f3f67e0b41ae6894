// This file cross-checks Writer output with independent code: gopacket's
// pcapgo readers parse the files and gopacket's layers decode the frames, so
// a mistake shared by our writer and our reader cannot hide.

package capture

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"testing"

	"github.com/google/gopacket"
	"github.com/google/gopacket/layers"
	"github.com/google/gopacket/pcapgo"
)

type packetSource interface {
	ReadPacketData() ([]byte, gopacket.CaptureInfo, error)
}

func TestWriterAgainstGopacket(t *testing.T) {
	first := map[LinkType]gopacket.Decoder{
		Ethernet: layers.LayerTypeEthernet,
		LinuxSLL: layers.LayerTypeLinuxSLL,
		Loopback: layers.LayerTypeLoopback,
		RawIPv4:  layers.LayerTypeIPv4,
	}
	for _, format := range []Format{PCAP, PCAPNG} {
		for _, link := range []LinkType{Ethernet, LinuxSLL, Loopback, RawIPv4} {
			t.Run(fmt.Sprintf("%v/%v", format, link), func(t *testing.T) {
				var buf bytes.Buffer
				w, err := NewWriter(&buf, format, link)
				if err != nil {
					t.Fatal(err)
				}
				w.MTU = 576
				if err := w.WriteUDP(t0, addrA, addrB, []byte("small")); err != nil {
					t.Fatal(err)
				}
				if err := w.WriteUDP(t0, addrB, addrA, payload(1, 1200)); err != nil { // 3 fragments
					t.Fatal(err)
				}
				w.Flush()

				var src packetSource
				if format == PCAP {
					src, err = pcapgo.NewReader(bytes.NewReader(buf.Bytes()))
				} else {
					src, err = pcapgo.NewNgReader(bytes.NewReader(buf.Bytes()), pcapgo.DefaultNgReaderOptions)
				}
				if err != nil {
					t.Fatal(err)
				}
				type frag struct {
					id        uint16
					off       uint16
					more      bool
					payload   int
					udpLength int
				}
				var frags []frag
				udpBytes := map[uint16][]byte{} // the UDP datagram of each IP id, rebuilt from its fragments
				for {
					data, ci, err := src.ReadPacketData()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					if !ci.Timestamp.Equal(t0) {
						t.Errorf("time %v", ci.Timestamp)
					}
					pkt := gopacket.NewPacket(data, first[link], gopacket.Default)
					ip, _ := pkt.Layer(layers.LayerTypeIPv4).(*layers.IPv4)
					if ip == nil {
						t.Fatalf("no IPv4 layer: %v", pkt)
					}
					if sum := onesSum(ip.Contents); sum != 0xffff {
						t.Errorf("IPv4 header checksum wrong (sum %#x)", sum)
					}
					if ip.TTL != writerTTL || ip.Protocol != layers.IPProtocolUDP {
						t.Errorf("TTL %d protocol %v", ip.TTL, ip.Protocol)
					}
					if len(data) > w.MTU+linkHeaderLen(link) {
						t.Errorf("frame of %d bytes exceeds the MTU", len(data))
					}
					f := frag{ip.Id, ip.FragOffset, ip.Flags&layers.IPv4MoreFragments != 0, len(ip.Payload), -1}
					if f.off == 0 && len(ip.Payload) >= 8 {
						f.udpLength = int(binary.BigEndian.Uint16(ip.Payload[4:6]))
					}
					// gopacket decodes UDP only in unfragmented packets.
					if udp, _ := pkt.Layer(layers.LayerTypeUDP).(*layers.UDP); udp != nil {
						if udp.SrcPort != layers.UDPPort(addrA.Port()) || udp.DstPort != layers.UDPPort(addrB.Port()) || string(udp.Payload) != "small" {
							t.Errorf("UDP layer %v", udp)
						}
					} else if !f.more && f.off == 0 {
						t.Errorf("no UDP layer in an unfragmented packet: %v", pkt)
					}
					frags = append(frags, f)
					off := int(ip.FragOffset) * 8
					if need := off + len(ip.Payload); len(udpBytes[ip.Id]) < need {
						udpBytes[ip.Id] = append(udpBytes[ip.Id], make([]byte, need-len(udpBytes[ip.Id]))...)
					}
					copy(udpBytes[ip.Id][off:], ip.Payload)
				}
				for id, udp := range udpBytes {
					if sum := udpSum(addrA.Addr().As4(), addrB.Addr().As4(), udp); sum != 0xffff || udp[6]|udp[7] == 0 {
						t.Errorf("IP id %d: UDP checksum %02x%02x wrong (sum %#x)", id, udp[6], udp[7], sum)
					}
				}
				want := []frag{
					{1, 0, false, 13, 13},
					{2, 0, true, 552, 1208},
					{2, 69, true, 552, -1},
					{2, 138, false, 104, -1},
				}
				if fmt.Sprint(frags) != fmt.Sprint(want) {
					t.Errorf("got %v\nwant %v", frags, want)
				}
			})
		}
	}
}

func linkHeaderLen(l LinkType) int {
	return len(appendLinkHeader(nil, l, [4]byte{}, [4]byte{}))
}

// onesSum is the ones'-complement sum of b; 0xffff for a valid IPv4 header.
func onesSum(b []byte) uint16 {
	var sum uint32
	for i := 0; i+1 < len(b); i += 2 {
		sum += uint32(binary.BigEndian.Uint16(b[i:]))
	}
	for sum > 0xffff {
		sum = sum>>16 + sum&0xffff
	}
	return uint16(sum)
}

// udpSum is the ones'-complement sum of the UDP pseudo-header and datagram
// (the addresses in either order give the same sum); 0xffff when the
// checksum is right.
func udpSum(src, dst [4]byte, udp []byte) uint16 {
	b := append(append(src[:], dst[:]...), 0, ipProtoUDP)
	b = binary.BigEndian.AppendUint16(b, uint16(len(udp)))
	b = append(b, udp...)
	if len(b)%2 == 1 {
		b = append(b, 0)
	}
	return onesSum(b)
}
