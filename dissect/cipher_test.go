package dissect

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"github.com/bcwire/bcwire/internal/fixture"
	"os"
	"path/filepath"
	"testing"
)

// sharedVectors is where CI and developers keep the independent test vectors.
var sharedVectors = filepath.Join("..", "..", "shared", "vectors")

type cipherVector struct {
	Plain  string `json:"plain"`
	Cipher string `json:"cipher"`
}

// builtinCipherVectors are copied from shared/vectors/cipher.json so the test
// still means something where ../shared is absent.
var builtinCipherVectors = []cipherVector{
	{"010000000000", "01D6FE17F186"},
	{"0101320F8001002C02000000050068656C6C6F", "01D702DC77BC1E20B7601304FACCB1280E4476"},
	{"01020306C0000002321B80000020000800736372697074732F07004170702E70796320", "01D403E16594E4393C219F641F82C6084F4FED414331D37D0128E47B8FB303B3B8CC21"},
	{"FF010308010000007F00", "FFD733664C5F9667DF00"},
	{"01807F00FF01FE", "01567C4004C434"},
}

func loadCipherVectors(t *testing.T) []cipherVector {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(sharedVectors, "cipher.json"))
	if os.IsNotExist(err) {
		t.Logf("%s not found; using the built-in copy of five vectors", sharedVectors)
		return builtinCipherVectors
	}
	if err != nil {
		t.Fatal(err)
	}
	var vs []cipherVector
	if err := json.Unmarshal(data, &vs); err != nil {
		t.Fatalf("cipher.json: %v", err)
	}
	if len(vs) == 0 {
		t.Fatal("cipher.json holds no vectors")
	}
	return append(vs, builtinCipherVectors...)
}

func TestCipherVectors(t *testing.T) {
	for i, v := range loadCipherVectors(t) {
		plain, ciph := fixture.Unhex(t, v.Plain), fixture.Unhex(t, v.Cipher)
		got := make([]byte, len(plain))
		Encrypt(got, plain)
		if !bytes.Equal(got, ciph) {
			t.Errorf("vector %d: encrypt(%s) = %X, want %s", i, v.Plain, got, v.Cipher)
		}
		Decrypt(got, ciph)
		if !bytes.Equal(got, plain) {
			t.Errorf("vector %d: decrypt(%s) = %X, want %s", i, v.Cipher, got, v.Plain)
		}
	}
}

func TestCipherInPlaceAndEmpty(t *testing.T) {
	Encrypt(nil, nil) // must not panic
	Decrypt(nil, nil)
	b := []byte{0x07}
	Encrypt(b, b)
	if b[0] != 0x07 {
		t.Fatalf("byte 0 changed: %X", b)
	}
	buf := fixture.Unhex(t, "0101320F8001002C02000000050068656C6C6F")
	orig := append([]byte(nil), buf...)
	Encrypt(buf, buf)
	if bytes.Equal(buf, orig) {
		t.Fatal("encryption left the datagram unchanged")
	}
	Decrypt(buf, buf)
	if !bytes.Equal(buf, orig) {
		t.Fatalf("in-place round trip = %X, want %X", buf, orig)
	}
}

func FuzzCipher(f *testing.F) {
	for _, v := range builtinCipherVectors {
		b, _ := hex.DecodeString(v.Plain)
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, plain []byte) {
		c := make([]byte, len(plain))
		Encrypt(c, plain)
		p := make([]byte, len(plain))
		Decrypt(p, c)
		if !bytes.Equal(p, plain) {
			t.Fatalf("round trip of %X gave %X", plain, p)
		}
		if len(plain) > 0 && c[0] != plain[0] {
			t.Fatalf("byte 0 was encrypted")
		}
	})
}

func BenchmarkCipherDecrypt(b *testing.B) {
	buf := make([]byte, 128)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		Decrypt(buf, buf)
	}
}

func hexDecode(s string) ([]byte, error) { return hex.DecodeString(s) }

func BenchmarkCipherEncrypt(b *testing.B) {
	buf := make([]byte, 128)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		Encrypt(buf, buf)
	}
}

// BenchmarkCipherDecryptBatch decrypts eight 128-byte datagrams per op, the
// way flow.Run does when reading a file: compare its MB/s with
// BenchmarkCipherDecrypt's.
func BenchmarkCipherDecryptBatch(b *testing.B) {
	src := make([][]byte, 8)
	for k := range src {
		src[k] = make([]byte, 128)
		for i := range src[k] {
			src[k][i] = byte(i*7 + k)
		}
	}
	b.SetBytes(8 * 128)
	b.ReportAllocs()
	for b.Loop() {
		DecryptBatch(src, src)
	}
}
