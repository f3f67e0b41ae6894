// This file holds the Internet checksum (RFC 1071) of IPv4 headers and UDP
// datagrams. It runs once or twice for every datagram read, so it adds
// 64-bit words with carries (eight bytes per addition) instead of 16-bit
// words, and folds the sum down to 16 bits only at the end. The ones'
// complement sum does not care in which order or in which word size the
// 16-bit words are added, as long as every byte keeps its position within
// its 16-bit word, which holds because every piece summed starts at an even
// offset of the datagram.

package capture

import (
	"encoding/binary"
	"math/bits"
)

// onesAdd adds b, as big-endian 16-bit words (an odd last byte padded with
// a zero byte), to the running 64-bit ones' complement sum acc.
//
// It loads the words little-endian, which saves a byte swap per load: every
// 16-bit word is then added byte-swapped, and the ones' complement sum of
// byte-swapped words is the byte-swapped sum. Reversing the bytes of acc on
// the way in and out swaps the bytes within each 16-bit lane (and reorders
// the lanes, which the sum does not mind either).
func onesAdd(acc uint64, b []byte) uint64 {
	acc = bits.ReverseBytes64(acc)
	var carry uint64
	n := len(b)
	if n < 8 {
		// Pack the 0 to 7 bytes into one word. Any 16-bit lane will do
		// for each piece, since the fold adds all lanes alike.
		var tail uint64
		if n >= 4 {
			tail = uint64(binary.LittleEndian.Uint32(b))
			b = b[4:]
		}
		if len(b) >= 2 {
			tail |= uint64(binary.LittleEndian.Uint16(b)) << 32
			b = b[2:]
		}
		if len(b) == 1 {
			tail |= uint64(b[0]) << 48 // the low byte of the top lane, the high one once swapped
		}
		acc, carry = bits.Add64(acc, tail, 0)
		return bits.ReverseBytes64(acc + carry) // when acc carried out, it is 0
	}
	// The last n%8 bytes, loaded with the bytes before them, which are
	// shifted out. They start a multiple of 8 bytes in, so each keeps its
	// place in its 16-bit lane (an odd last byte is the low byte of one,
	// the high byte once swapped, padded with zeros).
	last := binary.LittleEndian.Uint64(b[n-8:])
	for len(b) >= 32 {
		acc, carry = bits.Add64(acc, binary.LittleEndian.Uint64(b[0:8]), carry)
		acc, carry = bits.Add64(acc, binary.LittleEndian.Uint64(b[8:16]), carry)
		acc, carry = bits.Add64(acc, binary.LittleEndian.Uint64(b[16:24]), carry)
		acc, carry = bits.Add64(acc, binary.LittleEndian.Uint64(b[24:32]), carry)
		b = b[32:]
	}
	// Under 32 bytes left: no loop, as game datagrams are short.
	if len(b) >= 16 {
		acc, carry = bits.Add64(acc, binary.LittleEndian.Uint64(b[0:8]), carry)
		acc, carry = bits.Add64(acc, binary.LittleEndian.Uint64(b[8:16]), carry)
		b = b[16:]
	}
	if len(b) >= 8 {
		acc, carry = bits.Add64(acc, binary.LittleEndian.Uint64(b), carry)
	}
	if r := n & 7; r != 0 {
		acc, carry = bits.Add64(acc, last>>((64-8*r)&63), carry)
	}
	// The end-around carry, in two steps: when the first carries out,
	// acc is 0, so the second cannot.
	acc, carry = bits.Add64(acc, 0, carry)
	return bits.ReverseBytes64(acc + carry)
}

// fold reduces a 64-bit ones' complement sum to 16 bits.
func fold(acc uint64) uint16 {
	acc = acc>>32 + acc&0xffffffff // at most 33 bits
	acc = acc>>32 + acc&0xffffffff // at most 32 bits
	acc = acc>>16 + acc&0xffff     // at most 17 bits
	acc = acc>>16 + acc&0xffff     // 16 bits
	return uint16(acc)
}

// sumVerifies reports whether a 64-bit ones' complement sum folds to
// 0xFFFF, as the sum over a header or datagram with the right checksum
// does. Since 2^16 is 1 modulo 0xFFFF, folding keeps the remainder modulo
// 0xFFFF, and a sum other than 0 folds to 0xFFFF exactly when that
// remainder is 0; a remainder by a constant costs a few instructions, the
// four folding steps many more.
func sumVerifies(acc uint64) bool { return acc != 0 && acc%0xffff == 0 }

// pseudoHeaderSum is the sum of the UDP pseudo-header of RFC 768: source
// and destination address, protocol and UDP length.
func pseudoHeaderSum(src, dst [4]byte, udpLen int) uint64 {
	return uint64(binary.BigEndian.Uint32(src[:])) + uint64(binary.BigEndian.Uint32(dst[:])) +
		ipProtoUDP + uint64(udpLen)
}

// ipv4HeaderOK verifies an IPv4 header's checksum.
func ipv4HeaderOK(h []byte) bool {
	if len(h) != 20 {
		return fold(onesAdd(0, h)) == 0xffff
	}
	return ipv4Header20OK((*[20]byte)(h))
}

// ipv4Header20OK verifies the checksum of the usual 20-byte header without
// a loop.
func ipv4Header20OK(b *[20]byte) bool {
	sum, carry := bits.Add64(binary.BigEndian.Uint64(b[0:8]), binary.BigEndian.Uint64(b[8:16]), 0)
	sum, carry = bits.Add64(sum, uint64(binary.BigEndian.Uint32(b[16:20])), carry)
	// When that carried out, sum is at most 2^32, so adding the carry
	// back cannot carry again.
	return sumVerifies(sum + carry)
}

// ipv4Checksum is the checksum to put in an IPv4 header whose checksum
// field is zero.
func ipv4Checksum(h []byte) uint16 { return ^fold(onesAdd(0, h)) }

// udpChecksum is the checksum to put in the UDP header of udp (header and
// payload, its checksum field zero). A computed 0 is sent as 0xFFFF, since
// 0 in the field means "no checksum"; the two are the same number in ones'
// complement.
func udpChecksum(src, dst [4]byte, udp []byte) uint16 {
	c := ^fold(onesAdd(pseudoHeaderSum(src, dst, len(udp)), udp))
	if c == 0 {
		c = 0xffff
	}
	return c
}
