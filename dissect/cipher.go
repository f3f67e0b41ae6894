package dissect

// The AlbyRules cipher, as the stock game applies it to every UDP datagram
// that is not a GameSpy query. It is a stream cipher whose state starts fresh
// for each datagram: a 10-byte key string, five 16-bit key words derived from
// it per byte, and a small multiplicative PRNG. Every plaintext byte is XORed
// into all ten key bytes, so the keystream depends on the plaintext already
// seen. Byte 0 of the datagram (the peer id) is sent in clear.
//
// The straightforward form of the algorithm (kept in cipher_ref_test.go as
// the reference the tests compare against) runs five rounds per byte:
//
//	for r := 0..4:
//	    kw     = keyWord[r] ^ fold ^ prev   // prev = kw of round r-1, updated
//	    cross1 = (sum + r) * 0x4E35
//	    cross2 = kw * 0x015A
//	    sum    = a + cross1 + cross2
//	    a      = cross2
//	    kw     = kw*0x4E35 + 1
//	    acc   ^= sum ^ kw
//	    prev   = kw
//
// and XORs the byte with both halves of acc. fold is the running XOR of all
// plaintext bytes so far, replicated into both bytes of a word: every key
// byte is XORed with every plaintext byte, so the key string is always the
// initial one XORed with that running byte.
//
// The fast form below rests on three facts:
//
//  1. Only the low 16 bits of acc are used, and add, multiply and XOR never
//     carry information from high bits to low ones, so everything can be
//     computed modulo 2^16 (the code keeps 32-bit words and ignores the
//     high half, which is cheaper than masking).
//  2. The kw chain depends on fold alone, which has 256 values: the five
//     cross2 values and the XOR of the five updated kw values are tabled.
//  3. The sum chain is affine: with B = a + sum*0x4E35 (known before the
//     byte's fold is), round j's sum is B*M^j + T_j(fold) for M = 0x4E35
//     and tabled T_j, and the next byte's B is B*M^5 + V(fold).
//
// So one byte costs one table row, five independent multiply-adds off the
// critical path, a six-way XOR and the fold update; the serial chain from one
// byte's fold to the next is a load, an add and a few XORs.

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

// The PRNG multiplier and its powers, modulo 2^16 (only the low 16 bits
// count).
const (
	cipherM  uint32 = 0x4E35
	cipherM2        = cipherM * cipherM & 0xFFFF
	cipherM3        = cipherM2 * cipherM & 0xFFFF
	cipherM4        = cipherM3 * cipherM & 0xFFFF
	cipherM5        = cipherM4 * cipherM & 0xFFFF
)

// The per-fold tables, indexed by the running plaintext XOR byte (kept as
// separate arrays so that a byte index addresses them directly): cipherX is
// the XOR of the five updated key words, cipherT0..cipherT4 the constant
// terms of the five rounds' sums, cipherV the constant term of the next
// byte's B.
var cipherX, cipherT0, cipherT1, cipherT2, cipherT3, cipherT4, cipherV [256]uint32

func init() {
	for f := range 256 {
		fold := uint32(f) | uint32(f)<<8
		var c2 [5]uint32
		var x, prev uint32
		for r := range 5 {
			kw := keyWords[r] ^ fold ^ prev
			c2[r] = kw * 0x015A
			prev = kw*cipherM + 1
			x ^= prev
		}
		// sum_1 = B + c2[0]; sum_{k+1} = sum_k*M + k*M + c2[k-1] + c2[k].
		var t [5]uint32
		t[0] = c2[0]
		for k := 1; k < 5; k++ {
			t[k] = t[k-1]*cipherM + uint32(k)*cipherM + c2[k-1] + c2[k]
		}
		cipherX[f] = x
		cipherT0[f], cipherT1[f], cipherT2[f], cipherT3[f], cipherT4[f] = t[0], t[1], t[2], t[3], t[4]
		// B' = a' + sum_5*M = c2[4] + (B*M^4 + t[4])*M.
		cipherV[f] = t[4]*cipherM + c2[4]
	}
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
	var b uint32 // a + sum*M of the reference form; both start at 0
	var f uint8  // running plaintext XOR
	for i := 1; i < len(src); i++ {
		acc := cipherX[f] ^ (b + cipherT0[f]) ^
			((b*cipherM + cipherT1[f]) ^ (b*cipherM2 + cipherT2[f])) ^
			((b*cipherM3 + cipherT3[f]) ^ (b*cipherM4 + cipherT4[f]))
		p := src[i]
		dst[i] = p ^ byte(acc) ^ byte(acc>>8)
		b = b*cipherM5 + cipherV[f]
		f ^= p
	}
}

// Decrypt writes the plaintext of the encrypted datagram src into dst, which
// must be at least len(src) long; dst and src may be the same slice.
//
// Here the next byte's fold depends on this byte's keystream, so the loop is
// bound by that chain's latency; the statements are arranged to keep it
// short: the powers of b and fold^ciphertext are ready before the table
// loads return, and the six terms are XORed as a tree.
func Decrypt(dst, src []byte) {
	if len(src) == 0 {
		return
	}
	dst = dst[:len(src)]
	dst[0] = src[0]
	var b uint32
	var f uint8
	for i := 1; i < len(src); i++ {
		b1, b2, b3, b4 := b*cipherM, b*cipherM2, b*cipherM3, b*cipherM4
		fc := f ^ src[i]
		s0 := cipherX[f] ^ (b + cipherT0[f])
		s1 := (b1 + cipherT1[f]) ^ (b2 + cipherT2[f])
		s2 := (b3 + cipherT3[f]) ^ (b4 + cipherT4[f])
		acc := s0 ^ (s1 ^ s2)
		acc ^= acc >> 8
		next := fc ^ byte(acc) // f ^ plaintext
		dst[i] = next ^ f
		b = b*cipherM5 + cipherV[f]
		f = next
	}
}
