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

// cipherRow is what one value of the running plaintext XOR (the fold)
// fixes: x is the XOR of the five updated key words, t0..t4 the constant
// terms of the five rounds' sums, v the constant term of the next byte's B.
// One row is 32 bytes, so a byte costs one cache line and one base address
// (seven separate arrays cost seven address computations per byte).
type cipherRow struct {
	x, t0, t1, t2, t3, t4, v uint32
	_                        uint32 // pads the row to 32 bytes
}

// cipherRows is indexed by the fold byte.
var cipherRows [256]cipherRow

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
		// B' = a' + sum_5*M = c2[4] + (B*M^4 + t[4])*M.
		cipherRows[f] = cipherRow{x: x, t0: t[0], t1: t[1], t2: t[2], t3: t[3], t4: t[4], v: t[4]*cipherM + c2[4]}
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
		r := &cipherRows[f]
		acc := r.x ^ (b + r.t0) ^
			((b*cipherM + r.t1) ^ (b*cipherM2 + r.t2)) ^
			((b*cipherM3 + r.t3) ^ (b*cipherM4 + r.t4))
		p := src[i]
		dst[i] = p ^ byte(acc) ^ byte(acc>>8)
		b = b*cipherM5 + r.v
		f ^= p
	}
}

// Decrypt writes the plaintext of the encrypted datagram src into dst, which
// must be at least len(src) long; dst and src may be the same slice.
//
// Here the next byte's fold depends on this byte's keystream, so the loop is
// bound by the latency of that chain (one row load, an add, three levels of
// XOR, the fold of acc's two bytes), and the statements keep it that short:
// the powers of b and fold^ciphertext are ready before the row arrives, and
// fold^ciphertext joins the XOR tree at its first level (it only touches the
// low byte, which the final fold keeps). DecryptBatch runs many such chains
// side by side for more throughput.
func Decrypt(dst, src []byte) {
	if len(src) == 0 {
		return
	}
	dst = dst[:len(src)]
	dst[0] = src[0]
	decryptFrom(dst, src, 1, 0, 0)
}

// decryptFrom decrypts src[i:] into dst[i:] from the state (b, f) reached
// at byte i; len(dst) must equal len(src).
func decryptFrom(dst, src []byte, i int, b, f uint32) {
	for ; i < len(src) && i < len(dst); i++ {
		b1, b2, b3, b4 := b*cipherM, b*cipherM2, b*cipherM3, b*cipherM4
		r := &cipherRows[f&0xFF]
		fc := f ^ uint32(src[i])
		acc := ((r.x ^ fc) ^ (b + r.t0)) ^
			((b1 + r.t1) ^ (b2 + r.t2)) ^
			((b3 + r.t3) ^ (b4 + r.t4))
		next := (acc ^ acc>>8) & 0xFF // f ^ plaintext
		dst[i] = byte(next ^ f)
		b = b*cipherM5 + r.v
		f = next
	}
}

// DecryptBatch decrypts src[k] into dst[k] for every k, each exactly as
// Decrypt would. Each dst[k] must be at least as long as src[k]; dst[k] may
// be src[k] but must not overlap any other.
//
// One datagram's bytes form a serial chain that leaves most of the CPU idle.
// Where the CPU has AVX-512 and the batch is large enough, DecryptBatch runs
// 32 chains at once with SIMD instructions (see cipher_rows.go); otherwise
// it runs two chains side by side in Go.
func DecryptBatch(dst, src [][]byte) {
	if useRowKernel && len(src) >= rowMinBatch {
		decryptBatchRows(dst, src, decryptLanesKernel)
		return
	}
	decryptBatchTwo(dst, src)
}

// useRowKernel selects the SIMD form of DecryptBatch; the tests turn it off
// to check the Go form on machines that have the kernel.
var useRowKernel = haveRowKernel

// rowMinBatch is the smallest batch DecryptBatch gives the row kernel: below
// it, the two-lane Go form is faster (BenchmarkCipherDecryptBatchSizes puts
// the crossover at 12 to 16 datagrams of the battle's lengths).
const rowMinBatch = 16

// decryptBatchTwo is DecryptBatch in Go: two lanes each take the next
// datagram of the batch as soon as theirs is done, so that only the end of
// the last one runs alone.
func decryptBatchTwo(dst, src [][]byte) {
	var a, b lane
	next := 0
	// take loads the next non-empty datagram into l.
	take := func(l *lane) bool {
		for ; next < len(src); next++ {
			if len(src[next]) == 0 {
				continue
			}
			d, s := dst[next][:len(src[next])], src[next]
			d[0] = s[0]
			*l = lane{dst: d[1:], src: s[1:]}
			next++
			return true
		}
		return false
	}
	if !take(&a) {
		return
	}
	for take(&b) {
		// Run both lanes until the shorter is done, then refill it.
		for len(a.src) > 0 && len(b.src) > 0 {
			n := min(len(a.src), len(b.src))
			decryptTwo(&a, &b, n)
		}
		if len(a.src) == 0 {
			a, b = b, a
		}
	}
	decryptFrom(a.dst, a.src, 0, a.b, a.f)
}

// lane is one datagram being decrypted: the bytes still to do and the
// cipher state reached.
type lane struct {
	dst, src []byte
	b, f     uint32
}

// decryptTwo advances both lanes by n bytes, interleaving their chains.
func decryptTwo(la, lb *lane, n int) {
	dA, sA, dB, sB := la.dst[:n], la.src[:n], lb.dst[:n], lb.src[:n]
	bA, fA, bB, fB := la.b, la.f, lb.b, lb.f
	for i := range sA {
		rA, rB := &cipherRows[fA&0xFF], &cipherRows[fB&0xFF]
		fcA, fcB := fA^uint32(sA[i]), fB^uint32(sB[i])
		accA := ((rA.x ^ fcA) ^ (bA + rA.t0)) ^
			((bA*cipherM + rA.t1) ^ (bA*cipherM2 + rA.t2)) ^
			((bA*cipherM3 + rA.t3) ^ (bA*cipherM4 + rA.t4))
		accB := ((rB.x ^ fcB) ^ (bB + rB.t0)) ^
			((bB*cipherM + rB.t1) ^ (bB*cipherM2 + rB.t2)) ^
			((bB*cipherM3 + rB.t3) ^ (bB*cipherM4 + rB.t4))
		nextA, nextB := (accA^accA>>8)&0xFF, (accB^accB>>8)&0xFF
		dA[i], dB[i] = byte(nextA^fA), byte(nextB^fB)
		bA, bB = bA*cipherM5+rA.v, bB*cipherM5+rB.v
		fA, fB = nextA, nextB
	}
	la.dst, la.src, la.b, la.f = la.dst[n:], la.src[n:], bA, fA
	lb.dst, lb.src, lb.b, lb.f = lb.dst[n:], lb.src[n:], bB, fB
}

// CipherRowTable returns the cipher's per-byte constants for each value of
// the running plaintext XOR (x, t0..t4, v; see cipherRow): for generated
// decrypters in other languages (bcwire wireshark), which then need no
// copy of the key schedule.
func CipherRowTable() (rows [256][7]uint32, m [5]uint32) {
	for f, r := range cipherRows {
		rows[f] = [7]uint32{r.x, r.t0, r.t1, r.t2, r.t3, r.t4, r.v}
	}
	return rows, [5]uint32{cipherM, cipherM2, cipherM3, cipherM4, cipherM5}
}
