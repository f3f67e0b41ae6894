package dissect

import (
	"slices"
	"sync"
)

// BatchDecrypter decrypts batches of datagrams as DecryptBatch does, but
// into memory of its own, where the caller reads the plaintexts: the row
// form's kernel leaves each datagram's plaintext whole in its lanes (see
// cipher_rows.go), and handing out those places saves DecryptBatch's last
// copy, into the caller's buffers. The zero value is ready to use.
type BatchDecrypter struct {
	// chunks[c] holds the lanes of the batch's chunk c (rowChunk
	// datagrams): they all stay valid until the next Decrypt.
	chunks []*rowScratch
	// arena holds the plaintexts that do not come from the lanes (a
	// batch too small for the kernel, empty and overlong datagrams),
	// used bytes of it so far.
	arena []byte
	used  int
	// plain is DecryptBatch's scratch, the plaintexts it copies out.
	plain [][]byte
}

// batchPool keeps DecryptBatch's decrypters.
var batchPool = sync.Pool{New: func() any { return new(BatchDecrypter) }}

// decryptBatchRows is DecryptBatch through a lanes kernel.
func decryptBatchRows(dst, src [][]byte, kernel lanesKernel) {
	d := batchPool.Get().(*BatchDecrypter)
	d.copyOut(dst, src, kernel)
	batchPool.Put(d)
}

// copyOut decrypts src[k] into dst[k] through the lanes.
func (d *BatchDecrypter) copyOut(dst, src [][]byte, kernel lanesKernel) {
	d.plain = slices.Grow(d.plain[:0], len(src))[:len(src)]
	d.decryptRows(d.plain, src, kernel)
	copyEach(dst, d.plain)
}

// Decrypt sets plain[k] to the plaintext of src[k] for every k of src
// (plain must be at least as long), exactly as Decrypt would produce it.
// The plaintexts lie in memory of d that stays as it is until the next
// call to Decrypt, which reuses it; each has no capacity past its length.
// src is not modified.
func (d *BatchDecrypter) Decrypt(plain, src [][]byte) {
	d.decrypt(plain, src, decryptLanesKernel, useRowKernel)
}

// decrypt is Decrypt with the lanes kernel given, and whether to use it
// (rows) on a batch large enough.
func (d *BatchDecrypter) decrypt(plain, src [][]byte, kernel lanesKernel, rows bool) {
	if !rows || len(src) < rowMinBatch {
		// The plaintexts one after another in the arena, sized first so
		// that the loop placing them has nothing else to check.
		plain = plain[:len(src)]
		total := 0
		for _, s := range src {
			total += len(s)
		}
		d.used = 0
		arena := d.alloc(total)
		off := 0
		for k, s := range src {
			n := len(s)
			plain[k] = arena[off : off+n : off+n]
			off += n
		}
		decryptBatchTwo(plain, src)
		return
	}
	d.decryptRows(plain, src, kernel)
}

// decryptRows is decrypt through the lanes, whatever the batch's size.
func (d *BatchDecrypter) decryptRows(plain, src [][]byte, kernel lanesKernel) {
	plain = plain[:len(src)]
	d.used = 0
	for c, start := 0, 0; start < len(src); c, start = c+1, start+rowChunk {
		if c == len(d.chunks) {
			d.chunks = append(d.chunks, new(rowScratch))
		}
		end := min(start+rowChunk, len(src))
		d.chunks[c].decrypt(plain[start:end], src[start:end], kernel, d)
	}
}

// decryptLong decrypts in place the datagrams of plain too long for the
// lanes (copied to the arena encrypted), if any (long).
func (d *BatchDecrypter) decryptLong(plain [][]byte, long bool) {
	if !long {
		return
	}
	for _, p := range plain {
		if len(p) > rowMaxLen {
			Decrypt(p, p)
		}
	}
}

// alloc returns n bytes of the arena (never nil, even for n == 0). The
// plaintexts already placed keep the old arena when it is replaced.
func (d *BatchDecrypter) alloc(n int) []byte {
	if d.arena == nil || len(d.arena)-d.used < n {
		d.arena, d.used = make([]byte, max(2*len(d.arena), n, 4096)), 0
	}
	b := d.arena[d.used : d.used+n : d.used+n]
	d.used += n
	return b
}
