package transport

import (
	"time"

	"github.com/bcwire/bcwire/dissect"
)

// What one peer can make a Conn keep is capped, so a hostile or broken peer
// costs a bounded amount of memory:
//
//   - unfinished fragmented messages: MaxFragSets sets and MaxFragBytes per
//     Conn, and, when Options.Budget is shared by many Conns, Budget.MaxBytes
//     over all of them. The caps are enforced on every fragment added: room
//     is made by evicting this Conn's oldest unfinished set first. A fragment
//     that still does not fit (a Budget filled by other Conns) is refused and
//     not acknowledged, so a real peer sends it again later.
//   - reliable messages sent and not yet acknowledged: MaxUnacked messages
//     and MaxUnackedBytes; past either, Retransmit reports the peer dead.
//
// Duplicate detection remembers a fixed 1024 sequence numbers per channel
// and the Reassembler a fixed 256 completed messages.

// fragOverhead is what a held fragment costs beyond its payload (its slice
// header and allocation rounding), so that a flood of one-byte fragments
// is charged for the memory it really takes.
const fragOverhead = 64

// Defaults of the caps (see Options).
const (
	DefaultMaxFragSets     = 16
	DefaultMaxFragBytes    = 256 << 10
	DefaultMaxUnacked      = 4096
	DefaultMaxUnackedBytes = 1 << 20
)

// FragmentBudget caps the fragment memory of all the Conns that share it
// (a server's total). It is not safe for concurrent use: the Conns sharing
// it must be used under one lock, as the native server's are. A Conn that is
// discarded must be Closed to give its share back.
type FragmentBudget struct {
	MaxBytes int // default 4 MiB
	used     int
}

// Used is the fragment memory held, in bytes as charged (payload plus a
// fixed overhead per fragment).
func (b *FragmentBudget) Used() int { return b.used }

func (b *FragmentBudget) max() int {
	if b.MaxBytes <= 0 {
		return 4 << 20
	}
	return b.MaxBytes
}

// FragStats counts what the fragment caps did on one Conn.
type FragStats struct {
	Sets, Bytes int // unfinished sets held and their charged bytes
	Evicted     int // unfinished sets dropped to make room
	Refused     int // fragments refused (not acknowledged) for want of room
}

// fragSet is the Conn's own record of one unfinished set, in creation
// order, for charging and evicting.
type fragSet struct {
	seq   uint16
	bytes int
}

// FragStats reports the fragment caps' work so far.
func (c *Conn) FragStats() FragStats {
	st := c.fragStats
	st.Sets = len(c.fragSets)
	st.Bytes = c.fragBytes
	return st
}

// admitFragment makes room for fragment m under the caps and adds it. It
// reports false when m was refused (it must then not be acknowledged); on
// true, res is the Reassembler's result.
func (c *Conn) admitFragment(m *dissect.Message) (res dissect.FragmentResult, ok bool) {
	cost := len(m.Payload) + fragOverhead
	i := c.fragIndex(m.Seq)
	if i < 0 {
		for len(c.fragSets) >= c.opts.MaxFragSets {
			c.evictOldestFrag()
		}
	}
	for c.fragBytes+cost > c.opts.MaxFragBytes || (c.opts.Budget != nil && c.opts.Budget.used+cost > c.opts.Budget.max()) {
		if len(c.fragSets) == 0 {
			c.fragStats.Refused++
			return res, false
		}
		c.evictOldestFrag()
	}
	res = c.frags.Add(m.Seq, m, 0, time.Time{})
	if i = c.fragIndex(m.Seq); res.Complete != nil || res.Duplicate {
		if i >= 0 && res.Complete != nil {
			c.dropFragSet(i)
		}
		return res, true
	}
	if i < 0 {
		c.fragSets = append(c.fragSets, fragSet{seq: m.Seq})
		i = len(c.fragSets) - 1
	}
	c.fragSets[i].bytes += cost
	c.charge(cost)
	return res, true
}

func (c *Conn) fragIndex(seq uint16) int {
	for i := range c.fragSets {
		if c.fragSets[i].seq == seq {
			return i
		}
	}
	return -1
}

func (c *Conn) evictOldestFrag() {
	c.frags.Evict(c.fragSets[0].seq)
	c.dropFragSet(0)
	c.fragStats.Evicted++
}

func (c *Conn) dropFragSet(i int) {
	c.charge(-c.fragSets[i].bytes)
	c.fragSets = append(c.fragSets[:i], c.fragSets[i+1:]...)
}

func (c *Conn) charge(n int) {
	c.fragBytes += n
	if c.opts.Budget != nil {
		c.opts.Budget.used += n
	}
}

// Close gives the Conn's fragment memory back to its Budget and forgets its
// unfinished sets. The Conn stays usable.
func (c *Conn) Close() {
	for len(c.fragSets) > 0 {
		c.frags.Evict(c.fragSets[0].seq)
		c.dropFragSet(0)
	}
}
