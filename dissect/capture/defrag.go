// This file holds IPv4 reassembly: fragment sets keyed by (src, dst, proto,
// id), kept in arrival order so that the oldest can be evicted when the caps
// on sets or bytes are hit, or when they time out.

package capture

import (
	"fmt"
	"net/netip"
	"slices"
	"time"
)

// maxFragmentsPerSet bounds the work per set: every fragment but the last
// carries a multiple of 8 bytes, so a real datagram has at most 65536/8.
const maxFragmentsPerSet = 8192

type fragKey struct {
	src, dst [4]byte
	id       uint16
	proto    uint8
}

// span is a half-open byte range [lo, hi) of the IP payload.
type span struct{ lo, hi int }

type fragSet struct {
	key        fragKey
	firstFrame int
	firstTime  time.Time
	data       []byte // IP payload so far; len is the highest end seen
	have       []span // received ranges, sorted and merged
	total      int    // payload length known from the last fragment, or -1
	frags      int

	older, newer *fragSet // arrival-order list
}

type defrag struct {
	sets           map[fragKey]*fragSet
	oldest, newest *fragSet
	bytes          int        // sum of len(data) over all sets
	spare          []*fragSet // finished sets kept to reuse their buffers
}

func (f *defrag) init() { f.sets = make(map[fragKey]*fragSet) }

// addFragment files one fragment. It returns the whole IP payload once the
// datagram is complete (valid until the next Decode call), nil while it is
// not, or an error for a fragment that contradicts its set.
//
// Overlapping data is resolved "last wins": a later fragment overwrites the
// bytes of an earlier one. Exact duplicates therefore change nothing.
func (d *Decoder) addFragment(key fragKey, off int, b []byte, last bool, frameNo int, ts time.Time) ([]byte, error) {
	end := off + len(b)
	if end > ipv4MaxPayload {
		return nil, fmt.Errorf("%w: fragment ends at byte %d, past the IPv4 maximum", ErrFragment, end)
	}
	s := d.sets[key]
	if s == nil {
		if len(d.sets) >= d.opts.MaxFragmentSets {
			d.evict(d.oldest, false)
		}
		s = d.newSet(key, frameNo, ts)
	}
	switch {
	case last && s.total >= 0 && s.total != end:
		return nil, fmt.Errorf("%w: second last fragment ends at %d, first at %d", ErrFragment, end, s.total)
	case last && len(s.data) > end:
		return nil, fmt.Errorf("%w: last fragment ends at %d but data was seen up to %d", ErrFragment, end, len(s.data))
	case !last && s.total >= 0 && end > s.total:
		return nil, fmt.Errorf("%w: fragment ends at %d, past the datagram end %d", ErrFragment, end, s.total)
	}
	if last {
		s.total = end
	}
	if end > len(s.data) {
		d.bytes += end - len(s.data)
		s.data = slices.Grow(s.data, end-len(s.data))[:end]
	}
	copy(s.data[off:], b)
	if len(b) > 0 {
		s.have = addSpan(s.have, off, end)
	}
	s.frags++

	if s.total >= 0 && len(s.have) == 1 && s.have[0] == (span{0, s.total}) {
		whole := s.data[:s.total]
		d.remove(s)
		return whole, nil
	}
	if s.frags >= maxFragmentsPerSet {
		d.evict(s, false)
		return nil, fmt.Errorf("%w: more than %d fragments for one datagram", ErrFragment, maxFragmentsPerSet)
	}
	// Byte cap: drop the oldest sets (possibly this one) until under it.
	for d.bytes > d.opts.MaxFragmentBytes && d.oldest != nil {
		d.evict(d.oldest, false)
	}
	return nil, nil
}

// addSpan inserts [lo, hi) into the sorted, merged list, merging it with
// every range it overlaps or touches.
func addSpan(have []span, lo, hi int) []span {
	i := 0
	for i < len(have) && have[i].hi < lo {
		i++
	}
	j := i
	for j < len(have) && have[j].lo <= hi {
		lo = min(lo, have[j].lo)
		hi = max(hi, have[j].hi)
		j++
	}
	return slices.Replace(have, i, j, span{lo, hi})
}

// newSet starts a fragment set, reusing a finished one's buffers if possible,
// and appends it to the arrival list.
func (d *Decoder) newSet(key fragKey, frameNo int, ts time.Time) *fragSet {
	var s *fragSet
	if n := len(d.spare); n > 0 {
		s = d.spare[n-1]
		d.spare = d.spare[:n-1]
		*s = fragSet{data: s.data[:0], have: s.have[:0]}
	} else {
		s = &fragSet{}
	}
	s.key, s.firstFrame, s.firstTime, s.total = key, frameNo, ts, -1
	s.older = d.newest
	if d.newest != nil {
		d.newest.newer = s
	} else {
		d.oldest = s
	}
	d.newest = s
	d.sets[key] = s
	return s
}

// remove takes a set out of the map and list. Its buffer stays intact until
// the set is reused, which cannot happen before the next Decode call.
func (d *Decoder) remove(s *fragSet) {
	delete(d.sets, s.key)
	if s.older != nil {
		s.older.newer = s.newer
	} else {
		d.oldest = s.newer
	}
	if s.newer != nil {
		s.newer.older = s.older
	} else {
		d.newest = s.older
	}
	s.older, s.newer = nil, nil
	d.bytes -= len(s.data)
	// Keep a few sets for reuse; buffers beyond 64 KiB came from hostile
	// input and are not worth keeping.
	if len(d.spare) < 16 && cap(s.data) <= 1<<16 {
		d.spare = append(d.spare, s)
	}
}

func (d *Decoder) evict(s *fragSet, expired bool) {
	d.stats.FragmentsEvicted++
	if expired {
		d.stats.FragmentsExpired++
	}
	d.remove(s)
}

// expire drops sets whose first fragment is older than the timeout. Only the
// head of the arrival list is looked at, which keeps this O(1) per frame;
// with capture time running forwards the head is the oldest set.
func (d *Decoder) expire(now time.Time) {
	if d.opts.FragmentTimeout < 0 {
		return
	}
	for d.oldest != nil && now.Sub(d.oldest.firstTime) > d.opts.FragmentTimeout {
		d.evict(d.oldest, true)
	}
}

// Pending describes the fragment sets still being reassembled, oldest first.
func (d *Decoder) Pending() []FragmentSetInfo {
	var out []FragmentSetInfo
	for s := d.oldest; s != nil; s = s.newer {
		got := 0
		for _, h := range s.have {
			got += h.hi - h.lo
		}
		out = append(out, FragmentSetInfo{
			Src:        netip.AddrFrom4(s.key.src),
			Dst:        netip.AddrFrom4(s.key.dst),
			Proto:      s.key.proto,
			ID:         s.key.id,
			FirstFrame: s.firstFrame,
			FirstTime:  s.firstTime,
			Fragments:  s.frags,
			Bytes:      got,
			TotalLen:   s.total,
		})
	}
	return out
}

// Flush gives up on every unfinished fragment set: they are counted in
// Stats.FragmentsIncomplete, described in the result, and forgotten. Call it
// at the end of the input.
func (d *Decoder) Flush() []FragmentSetInfo {
	out := d.Pending()
	d.stats.FragmentsIncomplete += len(out)
	for d.oldest != nil {
		d.remove(d.oldest)
	}
	return out
}
