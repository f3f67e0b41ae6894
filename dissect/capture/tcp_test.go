package capture

import (
	"encoding/binary"
	"testing"

	"github.com/google/gopacket"
)

// tcpFrame is a raw IPv4 frame holding a TCP segment.
func tcpFrame(sport, dport uint16, seq uint32, flags byte, data string) []byte {
	tcp := make([]byte, 20, 20+len(data))
	binary.BigEndian.PutUint16(tcp[0:], sport)
	binary.BigEndian.PutUint16(tcp[2:], dport)
	binary.BigEndian.PutUint32(tcp[4:], seq)
	tcp[12] = 5 << 4
	tcp[13] = flags
	tcp = append(tcp, data...)
	ip := make([]byte, 20, 20+len(tcp))
	ip[0], ip[8], ip[9] = 0x45, 64, ipProtoTCP
	binary.BigEndian.PutUint16(ip[2:], uint16(20+len(tcp)))
	copy(ip[12:], []byte{10, 0, 0, 5})
	copy(ip[16:], []byte{10, 0, 0, 9})
	binary.BigEndian.PutUint16(ip[10:], ^fold(onesAdd(0, ip)))
	return append(ip, tcp...)
}

// TestTCPOfTheMasterListPort: a segment to or from port 28900 comes out
// with its sequence number and flags (bare ACKs do not); any other TCP is
// skipped as before.
func TestTCPOfTheMasterListPort(t *testing.T) {
	d := NewDecoder(Options{})
	for _, tc := range []struct {
		frame []byte
		want  bool
		data  string
	}{
		{tcpFrame(40000, MasterListPort, 7, 0x18, `\list\cmp\gamename\bcommander\final\`), true, `\list\cmp\gamename\bcommander\final\`},
		{tcpFrame(MasterListPort, 40000, 9, TCPSyn|0x10, ""), true, ""},
		{tcpFrame(MasterListPort, 40000, 9, 0x10, ""), false, ""}, // a bare ACK
		{tcpFrame(40000, 80, 7, 0x18, "GET / HTTP/1.0\r\n"), false, ""},
	} {
		p, err := d.Decode(Raw, tc.frame, gopacket.CaptureInfo{CaptureLength: len(tc.frame), Length: len(tc.frame)})
		if err != nil {
			t.Fatal(err)
		}
		if (p != nil) != tc.want {
			t.Fatalf("segment returned %v, want %v", p != nil, tc.want)
		}
		if p != nil && (!p.TCP.Valid || string(p.Payload) != tc.data) {
			t.Errorf("packet %+v", p)
		}
	}
	if s := d.Stats(); s.TCP != 2 || s.NonUDP != 2 {
		t.Errorf("stats: %d TCP returned, %d skipped; want 2 and 2", s.TCP, s.NonUDP)
	}
}
