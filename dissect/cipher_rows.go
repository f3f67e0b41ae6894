package dissect

import (
	"slices"
	"sync"
)

// The row form of DecryptBatch decrypts rowLanes byte streams at once with
// SIMD instructions (decryptRowsAVX512), one instruction doing the same
// step for every stream. Each stream (lane) is a run of whole datagrams
// laid end to end in a lanes buffer, lane k at lanes[k*stride:]. The kernel
// interleaves the lanes into rows (row t holds byte t of every lane),
// decrypts a row per step and puts the plaintext back into the lanes. A
// lane restarts from the zero state wherever a datagram's encrypted bytes
// begin (starts[t] has the lane's bit set there), and leaves the byte
// before, the datagram's clear byte 0, as it is: each datagram is whole in
// the lanes afterwards, one copy away from its destination. Past the end of
// its last datagram a lane computes garbage that is never copied out.
//
// Datagrams are dealt to lanes longest first (by length classes of 8
// bytes), filling each lane up to a common limit, so that the lanes end
// close together and little of the kernel's work is wasted on lanes
// already done.

// rowLanes is how many streams the kernel runs side by side.
const rowLanes = 32

// rowMaxLen is the longest datagram (with byte 0) the row form takes:
// a longer one would keep one lane busy long after the others are done,
// so it is decrypted on its own.
const rowMaxLen = 2049

// rowChunk is how many datagrams go through the kernel at once, so that
// the lanes of a large batch still fit in the CPU cache (and an index in
// the chunk fits in a uint16).
const rowChunk = 256

// rowClasses is how many length classes (of 8 bytes) the datagrams are
// sorted into before they are dealt; longer ones share the last class.
const rowClasses = 64

// rowScratch is the reusable memory of one decryptBatchRows call.
type rowScratch struct {
	lanes  []byte   // lane k is lanes[k*stride:][:stride]
	rows   []byte   // the kernel's interleaved copy of lanes
	starts []uint32 // starts[t]: the lanes whose next datagram's byte 1 is at byte t
	// order lists the datagrams to deal, longest class first; place[r] is
	// where order[r] went: its start<<5 | lane, then (from fillLanes on)
	// the offset of its byte 0 in lanes.
	order []uint16
	place []uint32
	// useful and computed count the bytes decrypted and the bytes the
	// kernel ran (rowLanes*steps), for the benchmarks.
	useful, computed int
}

var rowScratchPool = sync.Pool{New: func() any { return new(rowScratch) }}

// lanesKernel decrypts the first steps bytes of each lane of a lanes
// buffer in place, all but those before a start (the datagrams' byte 0);
// rows is scratch of the same size. stride is a multiple
// of 16, steps at most stride, and starts has steps+1 entries (the
// assembly reads starts[t+1] after row t).
type lanesKernel func(lanes []byte, stride, steps int, starts []uint32, rows []byte)

// decryptBatchRows is DecryptBatch through a lanes kernel.
func decryptBatchRows(dst, src [][]byte, kernel lanesKernel) {
	s := rowScratchPool.Get().(*rowScratch)
	s.decryptBatch(dst, src, kernel)
	rowScratchPool.Put(s)
}

func (s *rowScratch) decryptBatch(dst, src [][]byte, kernel lanesKernel) {
	for start := 0; start < len(src); start += rowChunk {
		end := min(start+rowChunk, len(src))
		s.decrypt(dst[start:end], src[start:end], kernel, nil)
	}
}

// leastLoaded returns the lane with the least load.
func leastLoaded(load *[rowLanes]int) int {
	best := 0
	for l, n := range load {
		if n < load[best] {
			best = l
		}
	}
	return best
}

// rowClass is the length class of a datagram of n bytes.
func rowClass(n int) int { return min(n>>3, rowClasses-1) }

// decrypt runs at most rowChunk datagrams through the kernel. With own
// nil, it decrypts src[k] into dst[k]; otherwise it sets dst[k] to the
// plaintext where it is, in s.lanes (or own's arena for the datagrams that
// do not go through the lanes).
func (s *rowScratch) decrypt(dst, src [][]byte, kernel lanesKernel, own *BatchDecrypter) {
	order, sum, longest := s.sortByLength(dst, src, own)
	if len(order) == 0 {
		return
	}
	s.place = slices.Grow(s.place[:0], len(order))[:len(order)]
	place := s.place
	var load [rowLanes]int
	deal(&load, place, order, src, max((sum+rowLanes-1)/rowLanes, longest))
	steps := slices.Max(load[:])
	stride := (steps + 15) &^ 15 // the transposes work in blocks of 16
	s.useful += sum
	s.computed += steps * rowLanes

	if len(s.lanes) < stride*rowLanes {
		s.lanes = make([]byte, stride*rowLanes)
		s.rows = make([]byte, stride*rowLanes)
		s.starts = make([]uint32, stride+1)
	}
	lanes, starts := s.lanes[:stride*rowLanes], s.starts[:steps+1]
	if own != nil {
		fillLanesOwn(lanes, stride, starts, src, order, place, dst)
		kernel(lanes, stride, steps, starts, s.rows[:stride*rowLanes])
		return
	}
	fillLanes(lanes, stride, starts, src, order, place)
	kernel(lanes, stride, steps, starts, s.rows[:stride*rowLanes])
	emptyLanes(dst, src, lanes, order, place)
}

// fillLanes copies the datagrams order lists to their places in the lanes
// and marks where their encrypted bytes start (after byte 0). It replaces
// each place with the datagram's offset in lanes, which is all emptyLanes
// needs.
//
// fillLanes and emptyLanes are not inlined: in decrypt, their loops' values
// would be spilled and reloaded around each copy's call with the many
// values decrypt holds.
//
//go:noinline
func fillLanes(lanes []byte, stride int, starts []uint32, src [][]byte, order []uint16, place []uint32) {
	clear(starts)
	place = place[:len(order)]
	for r, i := range order {
		at, lane := place[r]>>5, place[r]&(rowLanes-1)
		starts[at+1] |= 1 << lane
		d := src[i]
		off := int(lane)*stride + int(at)
		copy(lanes[off:off+len(d)], d)
		place[r] = uint32(off)
	}
}

// fillLanesOwn is fillLanes for BatchDecrypter: instead of noting each
// datagram's offset, it sets plain[i] to the datagram's place in lanes,
// where the kernel leaves its plaintext.
//
//go:noinline
func fillLanesOwn(lanes []byte, stride int, starts []uint32, src [][]byte, order []uint16, place []uint32, plain [][]byte) {
	clear(starts)
	place = place[:len(order)]
	for r, i := range order {
		at, lane := place[r]>>5, place[r]&(rowLanes-1)
		starts[at+1] |= 1 << lane
		d := src[i]
		off := int(lane)*stride + int(at)
		l := lanes[off : off+len(d) : off+len(d)]
		copy(l, d)
		plain[i] = l
	}
}

// emptyLanes copies the plaintext of the datagrams order lists from their
// offsets in lanes (place, as fillLanes left it) to dst.
//
//go:noinline
func emptyLanes(dst, src [][]byte, lanes []byte, order []uint16, place []uint32) {
	place = place[:len(order)]
	for r, i := range order {
		n := len(src[i])
		off := int(place[r])
		copy(dst[i][:n], lanes[off:off+n])
	}
}

// sortByLength lists in s.order the datagrams of src that go through the
// lanes, longest length class first (a counting sort: comparison sorts
// cost as much as the kernel here), and returns that list with the bytes
// they hold, in all and in the longest one. Datagrams without bytes to
// decrypt and those too long for the lanes it decrypts into dst itself
// (given a place in own's arena first if own is not nil).
func (s *rowScratch) sortByLength(dst, src [][]byte, own *BatchDecrypter) (order []uint16, sum, longest int) {
	var next [rowClasses]int
	for i, d := range src {
		n := len(d)
		switch {
		case n == 0:
			if own != nil {
				dst[i] = own.alloc(0)
			}
		case n > rowMaxLen:
			if own != nil {
				dst[i] = own.alloc(n)
			}
			Decrypt(dst[i], d)
		case n == 1:
			if own != nil {
				dst[i] = own.alloc(1)
			}
			dst[i][0] = d[0]
		default:
			next[rowClass(n)]++
			sum += n
			longest = max(longest, n)
		}
	}
	count := 0
	for c := rowClasses - 1; c >= 0; c-- {
		count, next[c] = count+next[c], count
	}
	s.order = slices.Grow(s.order[:0], count)[:count]
	order = s.order
	for i, d := range src {
		if n := len(d); n > 1 && n <= rowMaxLen {
			c := rowClass(n)
			order[next[c]] = uint16(i)
			next[c]++
		}
	}
	return order, sum, longest
}

// deal places the datagrams of src that order lists, in that order, in the
// lanes: it fills them to a common limit (the average, or the longest
// datagram), moving on to the next lane with room when one is full (the
// shorter datagrams dealt last fill the gaps). Should nothing fit, the
// least loaded lane takes the datagram and sets a higher limit. place[r]
// is where order[r] went (its start<<5 | lane) and load the lanes' lengths.
// It is a function of its own so that its loop's values, few, stay in
// registers.
func deal(load *[rowLanes]int, place []uint32, order []uint16, src [][]byte, limit int) {
	place = place[:len(order)]
	lane := 0
	for r, i := range order {
		n := len(src[i])
		for tries := 0; load[lane]+n > limit; tries++ {
			if tries == rowLanes {
				lane = leastLoaded(load)
				limit = load[lane] + n
				break
			}
			lane = (lane + 1) % rowLanes
		}
		place[r] = uint32(load[lane])<<5 | uint32(lane)
		load[lane] += n
	}
}

// decryptLanesGo is the lanes kernel in Go, one lane at a time: what the
// assembly computes, for other CPUs and for the tests.
func decryptLanesGo(lanes []byte, stride, steps int, starts []uint32, _ []byte) {
	for lane := range rowLanes {
		l := lanes[lane*stride:][:steps]
		var b, f uint32
		for t, c := range l {
			if starts[t]>>lane&1 != 0 {
				b, f = 0, 0
			}
			keep := starts[t+1]>>lane&1 == 0 // not a datagram's byte 0
			r := &cipherRows[f]
			acc := (r.x ^ f ^ uint32(c)) ^ (b + r.t0) ^
				((b*cipherM + r.t1) ^ (b*cipherM2 + r.t2)) ^
				((b*cipherM3 + r.t3) ^ (b*cipherM4 + r.t4))
			next := (acc ^ acc>>8) & 0xFF
			if keep {
				l[t] = byte(next ^ f)
			}
			b = b*cipherM5 + r.v
			f = next
		}
	}
}
