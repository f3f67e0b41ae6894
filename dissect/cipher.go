package dissect

// The AlbyRules cipher, as the stock game applies it to every UDP datagram
// that is not a GameSpy query. It is a stream cipher whose state starts fresh
// for each datagram: a 10-byte key string, five 16-bit key words derived from
// it per byte, and a small multiplicative PRNG. Every plaintext byte is XORed
// into all ten key bytes, so the keystream depends on the plaintext already
// seen. Byte 0 of the datagram (the peer id) is sent in clear.
//
// Because every key byte is XORed with the same plaintext byte, the key
// string at any moment is the initial string XORed with the running XOR of
// all plaintext bytes so far. The implementation keeps that one running byte
// instead of ten, which keeps the per-byte loop free of memory traffic.

// cipherKey is the initial key string, "AlbyRules!".
var cipherKey = [10]byte{'A', 'l', 'b', 'y', 'R', 'u', 'l', 'e', 's', '!'}

// keyWords holds the initial key string as five big-endian 16-bit words.
var keyWords = [5]uint32{
	uint32(cipherKey[0])<<8 | uint32(cipherKey[1]),
	uint32(cipherKey[2])<<8 | uint32(cipherKey[3]),
	uint32(cipherKey[4])<<8 | uint32(cipherKey[5]),
	uint32(cipherKey[6])<<8 | uint32(cipherKey[7]),
	uint32(cipherKey[8])<<8 | uint32(cipherKey[9]),
}

// cipherState is the per-datagram state: the PRNG's two carried integers and
// the running XOR of the plaintext (standing for the mutated key string).
type cipherState struct {
	sum, a uint32
	fold   uint32 // running plaintext XOR, replicated into both bytes of a word
}

// keystream returns the 16-bit accumulator for the next byte; the byte is
// XORed with its low and high halves.
func (s *cipherState) keystream() uint32 {
	sum, a := s.sum, s.a
	var acc, prev uint32
	for r := uint32(0); r < 5; r++ {
		kw := keyWords[r] ^ s.fold ^ prev // prev is kw[r-1] after its update
		cross1 := (sum + r) * 0x4E35
		cross2 := kw * 0x015A
		sum = a + cross1 + cross2
		a = cross2
		kw = kw*0x4E35 + 1
		acc ^= sum ^ kw
		prev = kw
	}
	s.sum, s.a = sum, a
	return acc
}

// Encrypt writes the encrypted form of the datagram src into dst, which must
// be at least len(src) long; dst and src may be the same slice. Byte 0 is
// copied unchanged.
func Encrypt(dst, src []byte) {
	if len(src) == 0 {
		return
	}
	dst = dst[:len(src)]
	dst[0] = src[0]
	var s cipherState
	for i := 1; i < len(src); i++ {
		acc := s.keystream()
		p := src[i]
		dst[i] = p ^ byte(acc) ^ byte(acc>>8)
		s.fold ^= uint32(p) | uint32(p)<<8
	}
}

// Decrypt writes the plaintext of the encrypted datagram src into dst, which
// must be at least len(src) long; dst and src may be the same slice.
func Decrypt(dst, src []byte) {
	if len(src) == 0 {
		return
	}
	dst = dst[:len(src)]
	dst[0] = src[0]
	var s cipherState
	for i := 1; i < len(src); i++ {
		acc := s.keystream()
		p := src[i] ^ byte(acc) ^ byte(acc>>8)
		dst[i] = p
		s.fold ^= uint32(p) | uint32(p)<<8
	}
}
