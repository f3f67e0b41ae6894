package dissect

import (
	"bytes"
	"encoding/hex"
	"math/rand/v2"
	"slices"
	"testing"
)

// This file keeps the straightforward form of the AlbyRules cipher (five
// rounds per byte, as described in cipher.go) as the reference that the fast
// table-driven form is checked against.

type refCipherState struct {
	sum, a uint32
	fold   uint32 // running plaintext XOR, replicated into both bytes of a word
}

func (s *refCipherState) keystream() uint32 {
	sum, a := s.sum, s.a
	var acc, prev uint32
	for r := uint32(0); r < 5; r++ {
		kw := keyWords[r] ^ s.fold ^ prev
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

func refEncrypt(dst, src []byte) {
	if len(src) == 0 {
		return
	}
	dst = dst[:len(src)]
	dst[0] = src[0]
	var s refCipherState
	for i := 1; i < len(src); i++ {
		acc := s.keystream()
		p := src[i]
		dst[i] = p ^ byte(acc) ^ byte(acc>>8)
		s.fold ^= uint32(p) | uint32(p)<<8
	}
}

func refDecrypt(dst, src []byte) {
	if len(src) == 0 {
		return
	}
	dst = dst[:len(src)]
	dst[0] = src[0]
	var s refCipherState
	for i := 1; i < len(src); i++ {
		acc := s.keystream()
		p := src[i] ^ byte(acc) ^ byte(acc>>8)
		dst[i] = p
		s.fold ^= uint32(p) | uint32(p)<<8
	}
}

// checkAgainstRef compares both directions of the fast cipher with the
// reference on b (as plaintext and as ciphertext).
func checkAgainstRef(t *testing.T, b []byte) {
	t.Helper()
	want := make([]byte, len(b))
	got := make([]byte, len(b))
	refEncrypt(want, b)
	Encrypt(got, b)
	if !bytes.Equal(got, want) {
		t.Fatalf("Encrypt(%X) = %X, reference %X", b, got, want)
	}
	refDecrypt(want, b)
	Decrypt(got, b)
	if !bytes.Equal(got, want) {
		t.Fatalf("Decrypt(%X) = %X, reference %X", b, got, want)
	}
	// DecryptBatch, with b among shorter, equal, longer and empty
	// datagrams, in every position.
	others := [][]byte{b[:len(b)/2], reversed(b), append(reversed(b), 0x5A, 0xA5), nil, b[:min(1, len(b))]}
	for pos := range len(others) + 1 {
		src := slices.Insert(slices.Clone(others), pos, b)
		dst := make([][]byte, len(src))
		for i := range src {
			dst[i] = make([]byte, len(src[i]))
		}
		DecryptBatch(dst, src)
		for i := range src {
			want := make([]byte, len(src[i]))
			refDecrypt(want, src[i])
			if !bytes.Equal(dst[i], want) {
				t.Fatalf("DecryptBatch datagram %d of %d (%X) = %X, reference %X", i, len(src), src[i], dst[i], want)
			}
		}
	}
}

func reversed(b []byte) []byte {
	r := bytes.Clone(b)
	slices.Reverse(r)
	return r
}

func TestCipherMatchesReference(t *testing.T) {
	for _, v := range loadCipherVectors(t) {
		for _, s := range []string{v.Plain, v.Cipher} {
			b, err := hex.DecodeString(s)
			if err != nil {
				t.Fatal(err)
			}
			checkAgainstRef(t, b)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]byte, rng.IntN(600))
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		checkAgainstRef(t, b)
	}
	// Every running-XOR value must be reached: walk all 256 bytes after a
	// prefix, and long runs of one byte (the fold toggles between 0 and it).
	for c := range 256 {
		b := make([]byte, 300)
		for i := range b {
			b[i] = byte(c)
		}
		b[5] = byte(c + 1)
		checkAgainstRef(t, b)
	}
}

func FuzzCipherMatchesReference(f *testing.F) {
	for _, v := range builtinCipherVectors {
		b, _ := hex.DecodeString(v.Plain)
		f.Add(b)
		b, _ = hex.DecodeString(v.Cipher)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkAgainstRef(t, b) })
}

func BenchmarkCipherReferenceDecrypt(b *testing.B) {
	buf := make([]byte, 128)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		refDecrypt(buf, buf)
	}
}
