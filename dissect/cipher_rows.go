package dissect

import "slices"

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
// already done. The plaintexts stay in the lanes (BatchDecrypter hands
// out their places there); DecryptBatch copies them out.

// rowLanes is how many streams the kernel runs side by side.
const rowLanes = 32

// rowMaxLen is the longest datagram (with byte 0) the row form takes:
// a longer one would keep one lane busy long after the others are done,
// so it is decrypted on its own.
const rowMaxLen = 2049

// rowChunk is how many datagrams go through the kernel at once, so that
// the lanes of a large batch still fit in the CPU cache (and an index in
// the chunk, plus one, fits in a uint16).
const rowChunk = 256

// rowClasses is how many length classes (of 8 bytes) the datagrams are
// sorted into before they are dealt; longer ones share the last class.
const rowClasses = 64

// rowScratch is the memory one chunk of a batch goes through: the lanes
// hold its plaintexts afterwards.
type rowScratch struct {
	lanes  []byte   // lane k is lanes[k*stride:][:stride]
	rows   []byte   // the kernel's interleaved copy of lanes
	starts []uint32 // starts[t]: the lanes whose next datagram's byte 1 is at byte t; all zero between calls
	// next links the datagrams of each length class: next[i] is the one
	// after datagram i in its class, plus 1 (0 ends the class).
	next []uint16
	// useful and computed count the bytes decrypted and the bytes the
	// kernel ran (rowLanes*steps), for the benchmarks.
	useful, computed int
}

// lanesKernel decrypts the first steps bytes of each lane of a lanes
// buffer in place, all but those before a start (the datagrams' byte 0).
// stride is a multiple of 16 and at least steps; starts has steps+1
// entries (the assembly reads starts[t+1] after row t); rows is scratch of
// rowLanes rows for each of the steps rounded up to a multiple of 16.
type lanesKernel func(lanes []byte, stride, steps int, starts []uint32, rows []byte)

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

// decrypt sets plain[i] to the plaintext of src[i] for the at most
// rowChunk datagrams of src: in s.lanes for those that go through the
// kernel, in own's arena for the others (empty, a lone byte 0, too long).
//
// It sorts the datagrams into length classes (a list per class: comparison
// sorts cost as much as the kernel here), deals them longest class first
// (deal, which sets plain), then copies them all to their places at once
// (copyEach: a call to runtime.memmove per datagram cost the loop around
// it its registers). The stride between lanes is set before the dealing,
// from a bound on the longest lane: twice the limit the dealing starts
// from (see deal). The lanes buffer is larger than the lanes need, but
// only what they hold is touched.
func (s *rowScratch) decrypt(plain, src [][]byte, kernel lanesKernel, own *BatchDecrypter) {
	s.next = slices.Grow(s.next[:0], len(src))[:len(src)]
	next := s.next
	var head [rowClasses]uint16
	sum, longest := 0, 0
	alone := false // a datagram too long for the lanes
	for i := range src {
		n := len(src[i])
		if uint(n-2) > rowMaxLen-2 { // n < 2 || n > rowMaxLen
			// Empty and lone bytes 0 are their own plaintext, copied
			// below with the others; a long one is decrypted there.
			plain[i] = own.alloc(n)
			alone = alone || n > rowMaxLen
			continue
		}
		c := rowClass(n)
		next[i] = head[c]
		head[c] = uint16(i + 1)
		sum += n
		longest = max(longest, n)
	}
	if sum == 0 {
		copyEach(plain, src)
		own.decryptLong(plain, alone)
		return
	}
	limit := max((sum+rowLanes-1)/rowLanes, longest)
	stride := (2*limit + 15) &^ 15
	if len(s.lanes) < stride*rowLanes {
		s.lanes = make([]byte, stride*rowLanes)
		s.rows = make([]byte, stride*rowLanes)
		s.starts = make([]uint32, stride+1)
	}
	var load [rowLanes]int
	deal(&load, &head, next, src, plain, s.lanes[:stride*rowLanes], stride, s.starts[:stride+1], limit)
	copyEach(plain, src)
	own.decryptLong(plain, alone)
	steps := slices.Max(load[:])
	s.useful += sum
	s.computed += steps * rowLanes
	kernel(s.lanes[:stride*rowLanes], stride, steps, s.starts[:steps+1], s.rows[:(steps+15)&^15*rowLanes])
	clear(s.starts[:steps+1])
}

// deal deals the datagrams of src that head and next list to the lanes,
// longest class first: it fills the
// lanes to a common limit (the average, or the longest datagram), moving
// on to the next lane with room when one is full (the shorter datagrams
// dealt last fill the gaps). Should nothing fit, the least loaded lane
// takes the datagram and sets a higher limit: that lane held at most the
// average load, the datagram is at most the first limit long, so no lane
// ever grows past twice the first limit. It marks where each datagram's
// encrypted bytes start (after byte 0) and sets plain[i] to its place in
// lanes, where the kernel leaves its plaintext; load gets the lanes'
// lengths.
//
// It is a function of its own so that its loop's values stay in registers
// as far as they go. Whether a datagram fits in the current lane is a coin
// toss on OpenBC's battle (as often the next lane), and mispredicted; a
// branch-free choice between the two (arithmetic on the sign of limit -
// load - n) measured no better in perf profiles (it chains each
// datagram's lane to the last's), and keeping the current lane's load in
// a register, with or without the branch, measured worse.
//
//go:noinline
func deal(load *[rowLanes]int, head *[rowClasses]uint16, next []uint16, src, plain [][]byte, lanes []byte, stride int, starts []uint32, limit int) {
	lane := 0
	for c := rowClasses - 1; c >= 0; c-- {
		for i := int(head[c]) - 1; i >= 0; i = int(next[i]) - 1 {
			n := len(src[i])
			// The next lane with room, written so that the loop keeps no
			// counter (lane is masked, which spares the bounds checks).
			for from := lane; load[lane]+n > limit; {
				if lane = (lane + 1) & (rowLanes - 1); lane == from {
					lane = leastLoaded(load) & (rowLanes - 1)
					limit = load[lane] + n
				}
			}
			at := load[lane]
			load[lane] = at + n
			starts[at+1] |= 1 << lane
			off := lane*stride + at
			plain[i] = lanes[off : off+n : off+n]
		}
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
