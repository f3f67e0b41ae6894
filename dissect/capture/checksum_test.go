// This file tests the Internet checksum against a plain 16-bit reference
// and measures it.

package capture

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// refSum is RFC 1071 done the slow, obvious way.
func refSum(b []byte) uint16 {
	var sum uint32
	for i := 0; i < len(b); i += 2 {
		w := uint32(b[i]) << 8
		if i+1 < len(b) {
			w |= uint32(b[i+1])
		}
		sum += w
		sum = sum>>16 + sum&0xffff
	}
	return uint16(sum)
}

func TestOnesAddMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 200 {
		for _, fill := range []string{"random", "ones", "zeros"} {
			b := make([]byte, n)
			for i := range b {
				switch fill {
				case "random":
					b[i] = byte(rng.Uint32())
				case "ones":
					b[i] = 0xff // the carries pile up: the end-around carry must not be lost
				}
			}
			got, want := fold(onesAdd(0, b)), refSum(b)
			// 0 and 0xffff are both zero in ones' complement; only all-zero
			// input sums to 0 in both.
			if got != want {
				t.Errorf("%d %s bytes: sum %#04x, reference %#04x", n, fill, got, want)
			}
		}
	}
	// A running sum that is already near the top of 64 bits.
	b := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x12, 0x34}
	if got, want := fold(onesAdd(^uint64(0)-1, b)), refSum(append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}, b...)); got != want {
		t.Errorf("near-overflow start: %#04x, want %#04x", got, want)
	}
}

func TestUDPChecksum(t *testing.T) {
	src, dst := addrA.Addr().As4(), addrB.Addr().As4()
	udp := ipv4UDP(addrA, addrB, 1, payload(7, 101))[20:] // odd length
	c := udpChecksum(src, dst, udp)
	binary.BigEndian.PutUint16(udp[6:], c)
	if s := udpSum(src, dst, udp); s != 0xffff {
		t.Errorf("checksum %#04x: sum %#04x, want 0xffff", c, s)
	}
}

// A datagram whose checksum computes to 0 carries 0xFFFF, since 0 means
// "no checksum".
func TestUDPChecksumZeroIsSentAsFFFF(t *testing.T) {
	src, dst := addrA.Addr().As4(), addrB.Addr().As4()
	udp := ipv4UDP(addrA, addrB, 1, make([]byte, 10))[20:]
	// Make the sum of everything but the checksum 0xffff via the last two
	// payload bytes, so that the checksum computes to 0.
	binary.BigEndian.PutUint16(udp[len(udp)-2:], ^fold(onesAdd(pseudoHeaderSum(src, dst, len(udp)), udp)))
	if c := udpChecksum(src, dst, udp); c != 0xffff {
		t.Fatalf("checksum %#04x, want 0xffff", c)
	}
}

// BenchmarkChecksum: the UDP checksum of a 100-byte datagram (pseudo-header
// included), which the reader computes for every datagram.
func BenchmarkChecksum(b *testing.B) {
	src, dst := addrA.Addr().As4(), addrB.Addr().As4()
	udp := payload(3, 100)
	b.SetBytes(int64(len(udp)))
	b.ReportAllocs()
	var sink uint16
	for b.Loop() {
		sink += udpChecksum(src, dst, udp)
	}
	_ = sink
}
