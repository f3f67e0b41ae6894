//go:build !purego

package dissect

import "golang.org/x/sys/cpu"

// haveRowKernel reports whether the assembly kernels can run here: they use
// AVX-512 instructions on 256-bit registers (BW for 16-bit lanes, VL for
// the 256-bit forms and registers Y16..Y31, F for the mask registers). cpu
// checks that the OS saves the registers too.
var haveRowKernel = cpu.X86.HasAVX512F && cpu.X86.HasAVX512BW && cpu.X86.HasAVX512VL

// decryptRowsAVX512 decrypts steps rows of 32 lanes in place.
//
//go:noescape
func decryptRowsAVX512(rows *byte, starts *uint32, steps int)

// lanesToRows interleaves blocks*16 bytes of 32 lanes, stride apart, into
// rows of 32 bytes.
//
//go:noescape
func lanesToRows(rows, lanes *byte, stride, blocks int)

// rowsToLanes is the inverse of lanesToRows.
//
//go:noescape
func rowsToLanes(lanes, rows *byte, stride, blocks int)

// decryptLanesKernel is decryptLanes with the assembly kernels: the lanes
// go into rows, are decrypted a row (one byte of every lane) at a time,
// and go back.
func decryptLanesKernel(lanes []byte, stride, steps int, starts []uint32, rows []byte) {
	// The assembly has no bounds checks: these are all it needs. The
	// transposes take the lanes in blocks of 16 bytes, as many as the
	// steps need.
	blocks := (steps + 15) / 16
	if stride <= 0 || stride%16 != 0 || steps < 0 || steps > stride ||
		len(lanes) < rowLanes*stride || len(starts) < steps+1 || len(rows) < rowLanes*16*blocks {
		panic("dissect: bad decryptLanes buffers")
	}
	if blocks == 0 {
		return
	}
	lanesToRows(&rows[0], &lanes[0], stride, blocks)
	decryptRowsAVX512(&rows[0], &starts[0], steps)
	rowsToLanes(&lanes[0], &rows[0], stride, blocks)
}

// copyEach does copy(dst[k], src[k]) for every k of the shorter of dst
// and src, without a call to runtime.memmove per copy; dst[k] and src[k]
// must not overlap unless they are the same bytes.
func copyEach(dst, src [][]byte) {
	if haveMaskedCopy {
		copyEachAVX512(dst, src)
		return
	}
	copyEachSSE(dst, src)
}

// haveMaskedCopy reports whether copyEachAVX512 can run here (BZHI is
// BMI2).
var haveMaskedCopy = haveRowKernel && cpu.X86.HasBMI2

//go:noescape
func copyEachSSE(dst, src [][]byte)

//go:noescape
func copyEachAVX512(dst, src [][]byte)
