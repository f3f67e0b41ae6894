//go:build !amd64 || purego

package dissect

// haveRowKernel is false where no assembly kernel exists: DecryptBatch
// falls back to its two-lane Go form.
const haveRowKernel = false

func decryptLanesKernel(lanes []byte, stride, steps int, starts []uint32, rows []byte) {
	decryptLanesGo(lanes, stride, steps, starts, rows)
}

// copyEach does copy(dst[k], src[k]) for every k of the shorter of dst
// and src.
func copyEach(dst, src [][]byte) {
	for k := range min(len(dst), len(src)) {
		copy(dst[k], src[k])
	}
}
