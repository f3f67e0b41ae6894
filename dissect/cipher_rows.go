package dissect

import (
	"slices"
	"sync"
)

// The row form of DecryptBatch decrypts rowLanes byte streams at once with
// SIMD instructions (decryptRowsAVX512), one instruction doing the same
// step for every stream. Each stream (lane) is a run of whole datagrams
// (without their clear byte 0) laid end to end in a lanes buffer, lane k at
// lanes[k*stride:]. The kernel interleaves the lanes into rows (row t holds
// byte t of every lane), decrypts a row per step and puts the plaintext
// back into the lanes. A lane restarts from the zero state wherever one of
// its datagrams begins (keep[t] has the lane's bit clear there); past the
// end of its last datagram a lane computes garbage that is never copied
// out.
//
// Datagrams are dealt to lanes longest first, in a snake order (lanes
// 0..31, then 31..0, ...), so that the lanes end close together and little
// of the kernel's work is wasted on lanes already done.

// rowLanes is how many streams the kernel runs side by side.
const rowLanes = 32

// rowMaxLen is the longest datagram (after byte 0) the row form takes:
// a longer one would keep one lane busy long after the others are done,
// so it is decrypted on its own.
const rowMaxLen = 2048

// rowChunk is how many datagrams go through the kernel at once, so that
// the rows of a large batch still fit in the CPU cache.
const rowChunk = 256

// rowScratch is the reusable memory of one decryptBatchRows call.
type rowScratch struct {
	lanes []byte   // lane k is lanes[k*stride:][:stride]
	rows  []byte   // the kernel's interleaved copy of lanes
	keep  []uint32 // keep[t]: lanes that continue (rather than start) at byte t
	// items[i] is length<<32 | index of a datagram in this chunk, sorted
	// by length; place[i] is where it went: start<<5 | lane.
	items []uint64
	place []uint32
}

var rowScratchPool = sync.Pool{New: func() any { return new(rowScratch) }}

// lanesKernel decrypts the lanes of a lanes buffer in place; rows is
// scratch of the same size. stride is a multiple of 16, and keep has
// stride entries.
type lanesKernel func(lanes []byte, stride int, keep []uint32, rows []byte)

// decryptBatchRows is DecryptBatch through a lanes kernel.
func decryptBatchRows(dst, src [][]byte, kernel lanesKernel) {
	s := rowScratchPool.Get().(*rowScratch)
	for start := 0; start < len(src); start += rowChunk {
		end := min(start+rowChunk, len(src))
		s.decrypt(dst[start:end], src[start:end], kernel)
	}
	rowScratchPool.Put(s)
}

func (s *rowScratch) decrypt(dst, src [][]byte, kernel lanesKernel) {
	items := s.items[:0]
	for i, d := range src {
		switch {
		case len(d) == 0:
		case len(d)-1 > rowMaxLen:
			Decrypt(dst[i], d)
		default:
			dst[i][0] = d[0]
			if len(d) > 1 {
				items = append(items, uint64(len(d)-1)<<32|uint64(i))
			}
		}
	}
	s.items = items
	if len(items) == 0 {
		return
	}
	slices.Sort(items)

	// Deal longest first, snaking across the lanes.
	var load [rowLanes]int
	s.place = slices.Grow(s.place[:0], len(items))[:len(items)]
	place := s.place
	for r := range items {
		i := len(items) - 1 - r
		lane := r % (2 * rowLanes)
		if lane >= rowLanes {
			lane = 2*rowLanes - 1 - lane
		}
		place[i] = uint32(load[lane])<<5 | uint32(lane)
		load[lane] += int(items[i] >> 32)
	}
	stride := (slices.Max(load[:]) + 15) &^ 15

	if len(s.lanes) < stride*rowLanes {
		s.lanes = make([]byte, stride*rowLanes)
		s.rows = make([]byte, stride*rowLanes)
		s.keep = make([]uint32, stride)
	}
	lanes, keep := s.lanes[:stride*rowLanes], s.keep[:stride]
	for t := range keep {
		keep[t] = ^uint32(0)
	}
	for i, it := range items {
		at, lane := int(place[i]>>5), int(place[i]&(rowLanes-1))
		keep[at] &^= 1 << lane
		copy(lanes[lane*stride+at:], src[uint32(it)][1:])
	}
	kernel(lanes, stride, keep, s.rows[:stride*rowLanes])
	for i, it := range items {
		at, lane := int(place[i]>>5), int(place[i]&(rowLanes-1))
		k := uint32(it)
		copy(dst[k][1:len(src[k])], lanes[lane*stride+at:])
	}
}

// decryptLanesGo is the lanes kernel in Go, one lane at a time: what the
// assembly computes, for other CPUs and for the tests.
func decryptLanesGo(lanes []byte, stride int, keep []uint32, _ []byte) {
	for lane := range rowLanes {
		l := lanes[lane*stride:][:stride]
		var b, f uint32
		for t, c := range l {
			if keep[t]>>lane&1 == 0 {
				b, f = 0, 0
			}
			r := &cipherRows[f]
			acc := (r.x ^ f ^ uint32(c)) ^ (b + r.t0) ^
				((b*cipherM + r.t1) ^ (b*cipherM2 + r.t2)) ^
				((b*cipherM3 + r.t3) ^ (b*cipherM4 + r.t4))
			next := (acc ^ acc>>8) & 0xFF
			l[t] = byte(next ^ f)
			b = b*cipherM5 + r.v
			f = next
		}
	}
}
