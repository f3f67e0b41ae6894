package session

import "time"

// spare keeps the memory of finished streams for the streams of new
// sessions: a busy stream grows to a thousand remembered messages and a
// reservoir of RTT samples, and a long capture is sessions coming and going.
// A nil *spare keeps nothing.
type spare struct {
	bufs    [][]sentMsg // of any size past the first (see keep)
	buckets [][]int
	samples [][]time.Duration
}

// maxSpare bounds what a spare keeps of each kind.
const maxSpare = 16

func (p *spare) keep(s *stream) {
	if p == nil {
		return
	}
	// An array of the first size is not kept: a stream makes one at
	// little cost, and most streams of a capture of many sessions (the
	// control channels) never need more. When the spare is full, a larger
	// array takes the place of the smallest.
	if c := cap(s.buf); c > 16 {
		switch i := smallestBuf(p.bufs); {
		case len(p.bufs) < maxSpare:
			p.bufs = append(p.bufs, s.buf[:c])
		case c > cap(p.bufs[i]):
			p.bufs[i] = s.buf[:c]
		}
	}
	if s.buckets != nil && len(p.buckets) < maxSpare {
		clear(s.buckets) // chains restart from send number 0
		p.buckets = append(p.buckets, s.buckets)
	}
	if s.rtt.vals != nil && len(p.samples) < maxSpare {
		p.samples = append(p.samples, s.rtt.vals[:0])
	}
}

// takeBuf takes a kept array of at least n messages (the smallest that
// fits, so that the large ones go to the streams that need them), or
// returns nil.
func (p *spare) takeBuf(n int) []sentMsg {
	if p == nil {
		return nil
	}
	best := -1
	for i, b := range p.bufs {
		if cap(b) >= n && (best < 0 || cap(b) < cap(p.bufs[best])) {
			best = i
		}
	}
	if best < 0 {
		return nil
	}
	b := p.bufs[best]
	last := len(p.bufs) - 1
	p.bufs[best], p.bufs[last] = p.bufs[last], nil
	p.bufs = p.bufs[:last]
	return b
}

// smallestBuf is the index of the smallest of bufs (0 when there is none).
func smallestBuf(bufs [][]sentMsg) int {
	i := 0
	for j, b := range bufs {
		if cap(b) < cap(bufs[i]) {
			i = j
		}
	}
	return i
}

func (p *spare) takeBuckets() []int {
	if p == nil {
		return nil
	}
	return takeLast(&p.buckets)
}

func (p *spare) takeSamples() []time.Duration {
	if p == nil {
		return nil
	}
	return takeLast(&p.samples)
}

func takeLast[T any](list *[][]T) []T {
	n := len(*list)
	if n == 0 {
		return nil
	}
	s := (*list)[n-1]
	(*list)[n-1] = nil
	*list = (*list)[:n-1]
	return s
}
