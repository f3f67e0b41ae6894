package metrics

import (
	"math/rand/v2"
	"net/netip"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
)

// sentKey names one reliable message (or fragment) of one flow and sender.
type sentKey struct {
	client  netip.AddrPort
	server  netip.AddrPort
	dir     uint8 // sender's direction index
	control bool
	seq     uint16
	frag    int16 // -1 for a whole message
}

// hash mixes the key's fields: a multiply-xorshift over the ports, the
// sequence number and the low address bytes (where flows differ), cheaper
// than hashing the whole struct; the seed keeps collisions unpredictable.
func (k *sentKey) hash(seed uint64) uint64 {
	c, s := k.client.Addr().As16(), k.server.Addr().As16()
	h := seed ^ uint64(k.client.Port())<<48 ^ uint64(k.server.Port())<<32 ^ uint64(k.seq)<<16 ^
		uint64(uint16(k.frag))<<2 ^ uint64(k.dir)<<1
	if k.control {
		h ^= 1
	}
	h ^= uint64(c[12])<<56 | uint64(c[13])<<48 | uint64(c[14])<<40 | uint64(c[15])<<32 |
		uint64(s[12])<<24 | uint64(s[13])<<16 | uint64(s[14])<<8 | uint64(s[15])
	h *= 0x9E3779B97F4A7C15
	return h ^ h>>29
}

// sentSlot remembers when a reliable message was first seen.
type sentSlot struct {
	key    sentKey
	first  int64 // capture time, ns
	used   bool
	resent bool
	acked  bool
}

// tableSize is the number of reliable messages remembered at once: far more
// than stay unacknowledged in any real server's flows (a client holds a
// few dozen), so evictions by collision are rare and only cost one
// retransmission or one RTT sample.
const tableSize = 1 << 14

// reliableTable counts retransmissions and ACK round-trip times from the
// records, in a fixed-size direct-mapped table: no allocation per record,
// flat memory however long the capture runs.
type reliableTable struct {
	seed  uint64
	slots []sentSlot
}

func (t *reliableTable) slot(k sentKey) *sentSlot {
	if t.slots == nil {
		t.seed = rand.Uint64()
		t.slots = make([]sentSlot, tableSize)
	}
	return &t.slots[k.hash(t.seed)&(tableSize-1)]
}

// observe looks at one message record. It reports whether the message is a
// retransmission, and the round-trip time of an ACK that acknowledges a
// message sent once (ok false otherwise).
func (t *reliableTable) observe(r *flow.Record, d int) (retransmission bool, rtt time.Duration, ok bool) {
	m := r.Msg
	switch {
	case m.Type == dissect.TypeAck:
		k := sentKey{client: r.Client, server: r.Server, dir: uint8(1 - d), control: m.AckChannel() == dissect.ChannelControl, seq: m.Seq, frag: -1}
		if m.AckFlags&dissect.AckFragment != 0 {
			k.frag = int16(m.AckFragIndex)
		}
		s := t.slot(k)
		if !s.used || s.key != k || s.acked {
			return false, 0, false
		}
		s.acked = true
		if s.resent {
			return false, 0, false // which copy was ACKed cannot be known
		}
		if now := r.Time.UnixNano(); now >= s.first {
			return false, time.Duration(now - s.first), true
		}
	case m.Reliable:
		k := sentKey{client: r.Client, server: r.Server, dir: uint8(d), control: m.Type.Channel() == dissect.ChannelControl, seq: m.Seq, frag: -1}
		if m.Fragment {
			k.frag = int16(m.FragIndex)
		}
		s := t.slot(k)
		if s.used && s.key == k {
			s.resent = true
			return true, 0, false
		}
		*s = sentSlot{key: k, first: r.Time.UnixNano(), used: true}
	}
	return false, 0, false
}
