package dissect

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/internal/fixture"
)

// batchPath is one way DecryptBatch can run.
type batchPath struct {
	name string
	run  func(dst, src [][]byte)
}

// batchPaths lists every form of DecryptBatch this machine can run, each
// forced regardless of the batch size: the two-lane Go form, the row form
// with the Go model of the kernel, and the row form with the assembly
// kernel where the CPU has it; and the same for BatchDecrypter, whose
// plaintexts are copied to dst.
func batchPaths() []batchPath {
	paths := []batchPath{
		{"two-lane", decryptBatchTwo},
		{"rows-go", func(dst, src [][]byte) { decryptBatchRows(dst, src, decryptLanesGo) }},
		ownPath("own-two-lane", decryptLanesGo, false),
		ownPath("own-rows-go", decryptLanesGo, true),
	}
	if haveRowKernel {
		paths = append(paths,
			batchPath{"rows-simd", func(dst, src [][]byte) { decryptBatchRows(dst, src, decryptLanesKernel) }},
			ownPath("own-rows-simd", decryptLanesKernel, true))
	}
	return paths
}

// ownPath is a BatchDecrypter form of DecryptBatch: one decrypter, reused
// from call to call as flow.Run does, forced to the row form (rows, even
// for batches smaller than rowMinBatch) or not. It panics if a plaintext
// has capacity past its end, where an append would overwrite another.
func ownPath(name string, kernel lanesKernel, rows bool) batchPath {
	var d BatchDecrypter
	var plain [][]byte
	return batchPath{name, func(dst, src [][]byte) {
		plain = append(plain[:0], make([][]byte, len(src))...)
		if rows {
			d.decryptRows(plain, src, kernel)
		} else {
			d.decrypt(plain, src, kernel, false)
		}
		for k, p := range plain[:len(src)] {
			if len(p) != len(src[k]) || cap(p) != len(p) || p == nil {
				panic(fmt.Sprintf("%s: plaintext %d has length %d, capacity %d (nil %v) for a datagram of %d",
					name, k, len(p), cap(p), p == nil, len(src[k])))
			}
			copy(dst[k], p)
		}
	}}
}

// checkBatch decrypts src (which it leaves unchanged) along every path, into
// fresh buffers and in place, and compares every datagram with the reference.
func checkBatch(t *testing.T, src [][]byte) {
	t.Helper()
	want := make([][]byte, len(src))
	for i, d := range src {
		want[i] = make([]byte, len(d))
		refDecrypt(want[i], d)
	}
	orig := make([][]byte, len(src))
	for i, d := range src {
		orig[i] = bytes.Clone(d)
	}
	for _, p := range batchPaths() {
		for _, inPlace := range []bool{false, true} {
			dst := make([][]byte, len(src))
			in := src
			for i, d := range src {
				// Spare capacity past the end must stay untouched.
				dst[i] = append(bytes.Clone(d), 0xEE)[:len(d)]
			}
			if inPlace {
				in = dst
			}
			p.run(dst, in)
			for i := range src {
				if !bytes.Equal(dst[i], want[i]) {
					t.Fatalf("%s (in place %v): datagram %d of %d (length %d) = %X, reference %X",
						p.name, inPlace, i, len(src), len(src[i]), dst[i], want[i])
				}
				if dst[i][:len(dst[i])+1][len(dst[i])] != 0xEE {
					t.Fatalf("%s: wrote past the end of datagram %d", p.name, i)
				}
				if !inPlace && !bytes.Equal(src[i], orig[i]) {
					t.Fatalf("%s: changed the encrypted datagram %d", p.name, i)
				}
			}
		}
	}
}

func TestDecryptBatchVectors(t *testing.T) {
	var src [][]byte
	for _, v := range loadCipherVectors(t) {
		src = append(src, fixture.Unhex(t, v.Cipher), fixture.Unhex(t, v.Plain))
	}
	// Repeated so the batch is large enough for every path.
	for len(src) < 3*rowMinBatch {
		src = append(src, src...)
	}
	for _, p := range batchPaths() {
		t.Logf("checking %s", p.name)
	}
	checkBatch(t, src)
}

func TestDecryptBatchRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	randomBatch := func(n, maxLen int) [][]byte {
		src := make([][]byte, n)
		for i := range src {
			src[i] = make([]byte, rng.IntN(maxLen+1))
			for j := range src[i] {
				src[i][j] = byte(rng.Uint32())
			}
		}
		return src
	}
	for n := range 40 {
		checkBatch(t, randomBatch(n, 200))
	}
	iters := 150
	if testing.Short() {
		iters = 20
	}
	for range iters {
		checkBatch(t, randomBatch(rng.IntN(301), 2000))
	}
	// Lengths around rowMaxLen, mixed with short ones.
	src := randomBatch(40, 30)
	for _, n := range []int{rowMaxLen, rowMaxLen + 1, rowMaxLen + 2, 3000} {
		src = append(src, randomBatch(1, 0)[0])
		src[len(src)-1] = make([]byte, n)
		for j := range src[len(src)-1] {
			src[len(src)-1][j] = byte(j * 13)
		}
	}
	checkBatch(t, src)
	// More datagrams than one kernel run takes.
	checkBatch(t, randomBatch(3*rowChunk+5, 60))
}

// captureDatagrams returns every encrypted datagram of the bundled
// captures whose paths under testdata match pattern.
func captureDatagrams(tb testing.TB, pattern string) [][]byte {
	tb.Helper()
	files, err := filepath.Glob(filepath.Join("..", "testdata", pattern))
	if err != nil {
		tb.Fatal(err)
	}
	var all [][]byte
	for _, f := range files {
		if filepath.Ext(f) != ".pcap" && filepath.Ext(f) != ".pcapng" {
			continue
		}
		r, err := capture.Open(f)
		if err != nil {
			tb.Fatal(err)
		}
		for {
			p, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				continue // damaged record
			}
			if !IsGameSpy(p.Payload) {
				all = append(all, bytes.Clone(p.Payload))
			}
		}
	}
	return all
}

// TestDecryptBatchDispatch checks DecryptBatch and BatchDecrypter.Decrypt
// themselves, with the row kernel allowed and not, on batch sizes around
// rowMinBatch.
func TestDecryptBatchDispatch(t *testing.T) {
	defer func(use bool) { useRowKernel = use }(useRowKernel)
	rng := rand.New(rand.NewPCG(7, 8))
	var d BatchDecrypter
	for _, use := range []bool{false, true} {
		useRowKernel = use && haveRowKernel
		for n := rowMinBatch - 2; n <= 3*rowMinBatch; n++ {
			src := make([][]byte, n)
			want := make([][]byte, n)
			for i := range src {
				src[i] = make([]byte, rng.IntN(150))
				for j := range src[i] {
					src[i][j] = byte(rng.Uint32())
				}
				want[i] = make([]byte, len(src[i]))
				refDecrypt(want[i], src[i])
			}
			plain := make([][]byte, n)
			d.Decrypt(plain, src)
			for i := range src {
				if !bytes.Equal(plain[i], want[i]) {
					t.Fatalf("BatchDecrypter, row kernel %v, batch of %d: datagram %d differs", useRowKernel, n, i)
				}
			}
			DecryptBatch(src, src)
			for i := range src {
				if !bytes.Equal(src[i], want[i]) {
					t.Fatalf("row kernel %v, batch of %d: datagram %d differs", useRowKernel, n, i)
				}
			}
		}
	}
}

// TestDecryptBatchCaptures decrypts every encrypted datagram of every
// bundled capture, in batches of several sizes.
func TestDecryptBatchCaptures(t *testing.T) {
	all := captureDatagrams(t, "pcaps/*")
	if len(all) < 1000 {
		t.Fatalf("only %d datagrams in the captures", len(all))
	}
	for _, size := range []int{rowMinBatch, 64, 128, 300} {
		t.Run(fmt.Sprint(size), func(t *testing.T) {
			for i := 0; i < len(all); i += size {
				checkBatch(t, all[i:min(i+size, len(all))])
			}
		})
	}
}

// FuzzDecryptBatch cuts the input into datagrams (each length byte followed
// by that many bytes, repeated) and checks every form of DecryptBatch
// against the reference.
func FuzzDecryptBatch(f *testing.F) {
	f.Add([]byte{3, 1, 2, 3, 0, 5, 9, 9, 9, 9, 9, 1, 7})
	f.Add(bytes.Repeat([]byte{40, 0xA5}, 100))
	f.Fuzz(func(t *testing.T, in []byte) {
		var src [][]byte
		for len(in) > 0 {
			n := min(int(in[0]), len(in)-1)
			src = append(src, in[1:1+n])
			in = in[1+n:]
		}
		checkBatch(t, src)
	})
}

// benchBatch returns n datagrams with lengths drawn from the bundled
// battle's mix (a third of 6-byte keepalives, a median of 25 bytes, a tail
// to 160) and their total length.
func benchBatch(n int) ([][]byte, int) {
	rng := rand.New(rand.NewPCG(5, 6))
	lengths := []int{6, 6, 6, 12, 20, 25, 30, 40, 56, 70, 100, 138, 141, 159}
	src := make([][]byte, n)
	total := 0
	for k := range src {
		src[k] = make([]byte, lengths[rng.IntN(len(lengths))])
		for i := range src[k] {
			src[k][i] = byte(rng.Uint32())
		}
		total += len(src[k])
	}
	return src, total
}

// BenchmarkCipherDecryptBatchLarge decrypts 128 datagrams of battle-like
// lengths per op, as flow.Run hands them over from a file.
func BenchmarkCipherDecryptBatchLarge(b *testing.B) {
	src, total := benchBatch(128)
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for b.Loop() {
		DecryptBatch(src, src)
	}
}

// BenchmarkCipherDecryptBatchSizes compares the forms of DecryptBatch over
// batch sizes, to place rowMinBatch.
func BenchmarkCipherDecryptBatchSizes(b *testing.B) {
	for _, n := range []int{4, 8, 12, 16, 24, 32, 64, 128, 256} {
		src, total := benchBatch(n)
		for _, p := range batchPaths() {
			b.Run(fmt.Sprintf("%s/%d", p.name, n), func(b *testing.B) {
				b.SetBytes(int64(total))
				b.ReportAllocs()
				for b.Loop() {
					p.run(src, src)
				}
			})
		}
	}
}

// BenchmarkCipherDecryptBatchCapture decrypts the bundled battle in batches
// of consecutive datagrams (as flow.Run reads a file, up to its readAhead)
// along each path, and reports the share of the row kernel's work that is
// useful (the rest is lanes run past their last datagram).
func BenchmarkCipherDecryptBatchCapture(b *testing.B) {
	all := captureDatagrams(b, "pcaps/battle.pcap")
	total := 0
	dst := make([][]byte, len(all))
	for i, d := range all {
		dst[i] = make([]byte, len(d))
		total += len(d)
	}
	for _, size := range []int{32, 64, 128, 256} {
		var d BatchDecrypter
		for i := 0; i < len(all); i += size {
			j := min(i+size, len(all))
			d.copyOut(dst[i:j], all[i:j], decryptLanesGo)
		}
		u, c := d.work()
		useful := 100 * float64(u) / float64(c)
		for _, p := range batchPaths() {
			b.Run(fmt.Sprintf("%s/%d", p.name, size), func(b *testing.B) {
				b.SetBytes(int64(total))
				b.ReportAllocs()
				for b.Loop() {
					for i := 0; i < len(all); i += size {
						j := min(i+size, len(all))
						p.run(dst[i:j], all[i:j])
					}
				}
				b.ReportMetric(useful, "useful%")
			})
		}
	}
}

// BenchmarkCipherRowsDealing is the Go side of the row form alone (sorting,
// dealing, the copies into and out of the lanes) around a kernel that does
// nothing, on 128 datagrams of battle-like lengths decrypted into other
// buffers, as flow.Run hands them over.
func BenchmarkCipherRowsDealing(b *testing.B) {
	src, total := benchBatch(128)
	dst := make([][]byte, len(src))
	for i, d := range src {
		dst[i] = make([]byte, len(d))
	}
	noKernel := func(lanes []byte, stride, steps int, starts []uint32, rows []byte) {}
	var d BatchDecrypter
	b.SetBytes(int64(total))
	b.ReportAllocs()
	for b.Loop() {
		d.copyOut(dst, src, noKernel)
	}
}

// work returns the bytes d decrypted through the lanes so far and the
// bytes its kernel ran (rowLanes per row).
func (d *BatchDecrypter) work() (useful, computed int) {
	for _, s := range d.chunks {
		useful += s.useful
		computed += s.computed
	}
	return useful, computed
}

// BenchmarkCipherRowsScaffolding is the Go side of the row form alone
// around a kernel that does nothing, on OpenBC's networked battle in
// batches of readAhead (256) consecutive datagrams, as flow.Run reads it:
// DecryptBatch into other buffers, and BatchDecrypter. It reports the
// kernel's rows per datagram (each costs the same, whatever the lanes
// hold). Run it under cachegrind for instruction counts, which the load
// of a shared machine does not move.
func BenchmarkCipherRowsScaffolding(b *testing.B) {
	all := captureDatagrams(b, "openbc/networked-battle.pcap")
	const size = 256
	dst := make([][]byte, len(all))
	for i, d := range all {
		dst[i] = make([]byte, len(d))
	}
	noKernel := func(lanes []byte, stride, steps int, starts []uint32, rows []byte) {}
	b.Run("DecryptBatch", func(b *testing.B) {
		var d BatchDecrypter
		b.ReportAllocs()
		for b.Loop() {
			for i := 0; i < len(all); i += size {
				j := min(i+size, len(all))
				d.copyOut(dst[i:j], all[i:j], noKernel)
			}
		}
		_, computed := d.work()
		b.ReportMetric(float64(computed)/rowLanes/float64(len(all))/float64(b.N), "rows/datagram")
	})
	b.Run("BatchDecrypter", func(b *testing.B) {
		var d BatchDecrypter
		plain := make([][]byte, size)
		b.ReportAllocs()
		for b.Loop() {
			for i := 0; i < len(all); i += size {
				j := min(i+size, len(all))
				d.decryptRows(plain, all[i:j], noKernel)
			}
		}
		_, computed := d.work()
		b.ReportMetric(float64(computed)/rowLanes/float64(len(all))/float64(b.N), "rows/datagram")
	})
}

// TestCopyEach checks copyEach against copy over random lengths, also with
// fewer destinations than sources and the reverse.
func TestCopyEach(t *testing.T) {
	for _, form := range copyEachForms() {
		checkCopyEach(t, form)
	}
}

// copyForm is one implementation of copyEach.
type copyForm struct {
	name string
	run  func(dst, src [][]byte)
}

func checkCopyEach(t *testing.T, form copyForm) {
	rng := rand.New(rand.NewPCG(9, 10))
	for range 300 {
		n := rng.IntN(40)
		src := make([][]byte, n)
		dst := make([][]byte, n)
		want := make([][]byte, n) // each dst[k] with 2 bytes of capacity past it
		for k := range src {
			src[k] = make([]byte, rng.IntN(200))
			for i := range src[k] {
				src[k][i] = byte(rng.Uint32())
			}
			l := max(len(src[k])+rng.IntN(5)-2, 0)
			buf := bytes.Repeat([]byte{0xEE}, l+2)
			dst[k] = buf[:l]
			want[k] = bytes.Clone(buf)
		}
		m := rng.IntN(n + 1)
		d, s := dst, src
		if rng.IntN(2) == 0 {
			d = d[:m]
		} else {
			s = s[:m]
		}
		for k := range m {
			copy(want[k][:len(dst[k])], src[k])
		}
		form.run(d, s)
		for k := range dst {
			if got := dst[k][:cap(dst[k])]; !bytes.Equal(got, want[k]) {
				t.Fatalf("%s: copy %d (the first %d copied; %d bytes into %d) = %X, want %X", form.name, k, m, len(src[k]), len(dst[k]), got, want[k])
			}
		}
	}
}

// FuzzCopyEach cuts the input into slices (a length byte, that many bytes,
// then a byte giving the destination's length, repeated) and checks every
// form of copyEach against copy.
func FuzzCopyEach(f *testing.F) {
	f.Add([]byte{3, 1, 2, 3, 5, 0, 0, 20, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 19})
	f.Add(bytes.Repeat([]byte{130, 0xA5}, 100))
	f.Fuzz(func(t *testing.T, in []byte) {
		var src [][]byte
		var dstLens []int
		for len(in) > 0 {
			n := min(int(in[0]), len(in)-1)
			src = append(src, in[1:1+n])
			in = in[1+n:]
			l := n
			if len(in) > 0 {
				l, in = int(in[0]), in[1:]
			}
			dstLens = append(dstLens, l)
		}
		for _, form := range copyEachForms() {
			dst := make([][]byte, len(src))
			want := make([][]byte, len(src))
			for k, l := range dstLens {
				buf := bytes.Repeat([]byte{0xEE}, l+1) // one byte of capacity past the end
				dst[k], want[k] = buf[:l], bytes.Clone(buf)
				copy(want[k][:l], src[k])
			}
			form.run(dst, src)
			for k := range dst {
				if got := dst[k][:cap(dst[k])]; !bytes.Equal(got, want[k]) {
					t.Fatalf("%s: copy %d (%d bytes into %d) = %X, want %X", form.name, k, len(src[k]), len(dst[k]), got, want[k])
				}
			}
		}
	})
}
