package dissect

import (
	"bytes"
	"syscall"
	"testing"
	"unsafe"
)

// guarded returns a slice of n bytes that ends exactly where an inaccessible
// page begins, so that reading or writing one byte past it faults.
func guarded(t *testing.T, n int) []byte {
	t.Helper()
	page := syscall.Getpagesize()
	size := (n+page-1)/page*page + page
	mem, err := syscall.Mmap(-1, 0, size, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	t.Cleanup(func() { syscall.Munmap(mem) })
	if err := syscall.Mprotect(mem[size-page:], syscall.PROT_NONE); err != nil {
		t.Skipf("mprotect: %v", err)
	}
	return mem[size-page-n : size-page]
}

// TestDecryptLanesKernelBounds runs the kernel on buffers that end at an
// inaccessible page: a read or write past any of them crashes the test.
func TestDecryptLanesKernelBounds(t *testing.T) {
	for _, stride := range []int{16, 32, 128, 2048} {
		for _, steps := range []int{1, stride - 1, stride} {
			lanes := guarded(t, rowLanes*stride)
			rows := guarded(t, rowLanes*((steps+15)&^15)) // as much as the steps need
			startBytes := guarded(t, 4*(steps+1))
			starts := make([]uint32, steps+1)
			for i := range lanes {
				lanes[i] = byte(i * 7)
			}
			for i := range starts {
				starts[i] = uint32(i % 5) // some lanes restart here and there
			}
			want := bytes.Clone(lanes)
			decryptLanesGo(want, stride, steps, starts, nil)
			// The kernel takes starts from guarded memory too.
			gk := unsafe.Slice((*uint32)(unsafe.Pointer(&startBytes[0])), steps+1)
			copy(gk, starts)
			decryptLanesKernel(lanes, stride, steps, gk, rows)
			if !bytes.Equal(lanes, want) {
				t.Fatalf("stride %d steps %d: kernel and Go model differ", stride, steps)
			}
		}
	}
}

// TestDecryptBatchGuarded decrypts datagrams that end at an inaccessible
// page, in place and not.
func TestDecryptBatchGuarded(t *testing.T) {
	var src, dst [][]byte
	for n := range 2 * rowMinBatch {
		d := guarded(t, n*37%300)
		for i := range d {
			d[i] = byte(i*5 + n)
		}
		src = append(src, d)
		dst = append(dst, guarded(t, len(d)))
	}
	want := make([][]byte, len(src))
	for i, d := range src {
		want[i] = make([]byte, len(d))
		refDecrypt(want[i], d)
	}
	for _, p := range batchPaths() {
		p.run(dst, src)
		for i := range src {
			if !bytes.Equal(dst[i], want[i]) {
				t.Fatalf("%s: datagram %d differs", p.name, i)
			}
		}
	}
	DecryptBatch(src, src)
	for i := range src {
		if !bytes.Equal(src[i], want[i]) {
			t.Fatalf("in place: datagram %d differs", i)
		}
	}
}

// TestCopyEachGuarded copies slices of every length up to 70 and a few
// longer, each ending at an inaccessible page, between dst and src of
// equal and of different lengths, with each form of copyEach: it must copy
// exactly what copy does, and a read or write past any slice crashes the
// test (the masked loads of copyEachAVX512 reach past the end, masked off).
func TestCopyEachGuarded(t *testing.T) {
	var lens []int
	for n := range 71 {
		lens = append(lens, n)
	}
	lens = append(lens, 95, 96, 97, 127, 128, 129, 130, 300, 2049)
	for _, form := range copyEachForms() {
		for _, shift := range []int{0, -1, 1, -9, 17} {
			checkCopyGuarded(t, form, lens, shift)
		}
	}
}

// checkCopyGuarded copies slices of the lengths lens into slices shift
// bytes longer or shorter, each ending at an inaccessible page.
func checkCopyGuarded(t *testing.T, form copyForm, lens []int, shift int) {
	var dst, src, want [][]byte
	for _, n := range lens {
		s := guarded(t, n)
		for i := range s {
			s[i] = byte(i*11 + n)
		}
		d := guarded(t, max(n+shift, 0))
		for i := range d {
			d[i] = 0xEE
		}
		w := bytes.Clone(d)
		copy(w, s)
		src, dst, want = append(src, s), append(dst, d), append(want, w)
	}
	form.run(dst, src)
	for k := range dst {
		if !bytes.Equal(dst[k], want[k]) {
			t.Fatalf("%s, shift %d: copy %d (%d bytes into %d) = %X, want %X", form.name, shift, k, len(src[k]), len(dst[k]), dst[k], want[k])
		}
	}
}
