// This file holds how a Tracker finds servers and flows: which endpoint of a
// datagram is the server (known servers first, then the datagram's peer
// byte, then the stock port), the tables of servers and flows (capped, the
// oldest forgotten first) and the pair cache that lets steady traffic skip
// them.

package flow

import (
	"encoding/binary"
	"net/netip"
	"sync/atomic"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
)

// DefaultPort is the stock server's game and GameSpy port.
const DefaultPort = 22101

type flowKey struct{ server, client netip.AddrPort }

type flowState struct {
	key flowKey
	dec *game.Decoder // the server's decoder (shared by its flows)
	// epoch numbers the flow's current connection: a client's connect
	// request gives it a new one, so that the new connection's sequence
	// numbers, which start again, name fragment sets of their own and are
	// never taken for retransmissions of the old connection's. Epochs are
	// unique in a Tracker (a flow forgotten and seen again gets a new one).
	epoch uint32
}

// pairCache remembers, for recently seen (src, dst) pairs, the flow and the
// direction orient decided, so that steady traffic skips the map lookups.
// An entry is only valid while no server has been added since (gen).
type pairCache struct {
	src, dst netip.AddrPort
	gen      uint32
	fs       *flowState
	dir      game.Direction
}

// hit reports whether the entry holds the pair and is still valid.
func (c *pairCache) hit(src, dst *netip.AddrPort, gen uint32) bool {
	return c.fs != nil && c.gen == gen && c.src == *src && c.dst == *dst
}

const pairCacheSize = 64 // a power of two

// addrBits16 folds an address into 64 bits for hashing: the XOR of the two
// halves of its 16-byte form. pairSlot uses it only for IPv6 addresses (see
// there why).
func addrBits16(a netip.Addr) uint64 {
	v := a.As16()
	return binary.LittleEndian.Uint64(v[:8]) ^ binary.LittleEndian.Uint64(v[8:])
}

// A datagram's flow and direction are found by Tracker.decrypted, from the
// pair cache when it can (its first slot, pairSlot, is tried there, the
// second by lookupOther), and by lookupSlow otherwise.

// pairSlot is the cache slot of the pair: a multiplicative hash of both
// addresses and ports, so that the few pairs of a game (a server and up to
// 16 clients, two directions each) rarely share a slot. The cache is
// two-way set-associative: the slot is even, and a pair may sit in it or
// in the odd one after it.
//
// IPv4 addresses, the usual kind, are taken as their 4 bytes: the 16-byte
// form of an address is built on the stack by two 8-byte stores and copied
// by one 16-byte load, which the CPU cannot forward from the stores and
// stalls on (this lookup was a tenth of Run's time).
func pairSlot(src, dst *netip.AddrPort) int {
	var sa, da uint64
	if s, d := src.Addr(), dst.Addr(); s.Is4() && d.Is4() {
		s4, d4 := s.As4(), d.As4()
		sa, da = uint64(binary.LittleEndian.Uint32(s4[:])), uint64(binary.LittleEndian.Uint32(d4[:]))
	} else {
		sa, da = addrBits16(s), addrBits16(d)
	}
	x := sa*0x9E3779B97F4A7C15 ^ da*0xC2B2AE3D27D4EB4F ^
		(uint64(src.Port())<<16|uint64(dst.Port()))*0x165667B19E3779F9
	return int((x*0x9E3779B97F4A7C15)>>(64-6)) &^ 1
}

// lookupOther finds the flow of a datagram from src to dst and its
// direction past the pair's first cache slot.
func (t *Tracker) lookupOther(slot int, src, dst *netip.AddrPort, plain []byte) (*flowState, game.Direction, bool) {
	if c := &t.cache[slot+1]; c.hit(src, dst, t.gen) {
		return c.fs, c.dir, true
	}
	return t.lookupSlow(slot, *src, *dst, plain)
}

// lookupSlow finds the flow of a pair that is not in the cache.
func (t *Tracker) lookupSlow(slot int, src, dst netip.AddrPort, plain []byte) (*flowState, game.Direction, bool) {
	server, client, stable, ok := t.orient(src, dst, plain)
	if !ok {
		return nil, 0, false
	}
	fs := t.flow(server, client)
	dir := game.ClientToServer
	if src == server {
		dir = game.ServerToClient
	}
	if stable {
		// The pair takes the slot; what was there moves to the other way.
		t.cache[slot+1] = t.cache[slot]
		t.cache[slot] = pairCache{src: src, dst: dst, gen: t.gen, fs: fs, dir: dir}
	}
	return fs, dir, true
}

func (t *Tracker) addServer(ep netip.AddrPort) {
	if t.servers[ep] {
		return
	}
	for len(t.servers) >= t.opts.MaxServers+len(t.forced) {
		old, ok := t.serverOrder.pop()
		if !ok {
			break
		}
		if t.servers[old] && !t.forced[old] {
			delete(t.servers, old)
			delete(t.decoders, old) // flows still using it keep their pointer
			t.stats.ServersEvicted++
		}
	}
	t.servers[ep] = true
	t.serverOrder.push(ep)
	t.gen++
}

// decoder is the game decoder of a server (its state, such as the ships it
// created, is per server).
func (t *Tracker) decoder(server netip.AddrPort) *game.Decoder {
	dec := t.decoders[server]
	if dec == nil {
		dec = game.NewDecoder()
		t.decoders[server] = dec
	}
	return dec
}

// orient decides which endpoint is the server. The peer byte is sent in
// clear and says who sent the datagram: 0x01 is the server, 0xFF a client
// still connecting, 0x02 and up a client's wire slot. stable reports that
// the answer depends only on the known servers, not on this datagram's
// content, so that it holds for the pair until a server is added.
func (t *Tracker) orient(src, dst netip.AddrPort, plain []byte) (server, client netip.AddrPort, stable, ok bool) {
	switch {
	case t.servers[src] && !t.servers[dst]:
		return src, dst, true, true
	case t.servers[dst] && !t.servers[src]:
		return dst, src, true, true
	case t.forced[src]:
		return src, dst, true, true
	case t.forced[dst]:
		return dst, src, true, true
	}
	if len(plain) < 2 || !t.looksLikeBC(plain) {
		// An unknown flow whose first datagram does not parse is not
		// Bridge Commander traffic (DNS, games, ...), unless it uses the
		// stock port.
		switch {
		case src.Port() == DefaultPort:
			t.addServer(src)
			return src, dst, false, true
		case dst.Port() == DefaultPort:
			t.addServer(dst)
			return dst, src, false, true
		}
		return netip.AddrPort{}, netip.AddrPort{}, false, false
	}
	switch {
	case plain[0] == 0x01:
		server, client = src, dst
	case plain[0] == 0xFF || plain[0] >= 0x02:
		server, client = dst, src
	default: // peer 0x00 is never sent; fall back on the port
		if src.Port() == DefaultPort {
			server, client = src, dst
		} else {
			server, client = dst, src
		}
	}
	t.addServer(server)
	return server, client, false, true
}

// looksLikeBC reports whether a decrypted datagram from an unknown flow
// splits cleanly with a plausible peer id.
func (t *Tracker) looksLikeBC(plain []byte) bool {
	p := plain[0]
	if p == 0 || (p > 0x11 && p != 0xFF) || plain[1] == 0 {
		return false
	}
	var d dissect.Datagram
	return d.Parse(plain) == nil
}

func (t *Tracker) flow(server, client netip.AddrPort) *flowState {
	k := flowKey{server, client}
	fs := t.flows[k]
	if fs == nil {
		for len(t.flows) >= t.opts.MaxFlows {
			old, ok := t.flowOrder.pop()
			if !ok {
				break
			}
			if t.flows[old] != nil {
				delete(t.flows, old)
				t.stats.FlowsEvicted++
				t.gen++ // the pair cache may point at it
			}
		}
		fs = &flowState{key: k, dec: t.decoder(server)}
		t.newConnection(fs)
		t.flows[k] = fs
		t.flowOrder.push(k)
	}
	return fs
}

// newConnection starts a new connection on fs: fragments from here on
// belong to new fragment sets. The old connection's unfinished sets stay
// until they are evicted or Finish reports them lost; the memory of its
// completed ones no longer matches anything.
func (t *Tracker) newConnection(fs *flowState) {
	fs.epoch = epochs.Add(1) // unique in the process: Record.Epoch
}

// epochs hands out flowState.epoch numbers to every Tracker, so that a
// consumer fed by several (one per file) cannot mistake one's flow for
// another's.
var epochs atomic.Uint32

// fifo is a queue of keys in insertion order; its storage is compacted as
// the head advances, so it stays proportional to what it holds.
type fifo[K any] struct {
	q    []K
	head int
}

func (f *fifo[K]) push(k K) { f.q = append(f.q, k) }

func (f *fifo[K]) pop() (K, bool) {
	var zero K
	if f.head >= len(f.q) {
		return zero, false
	}
	k := f.q[f.head]
	f.q[f.head] = zero
	f.head++
	if f.head > 1024 && f.head > len(f.q)/2 {
		n := copy(f.q, f.q[f.head:])
		clear(f.q[n:])
		f.q = f.q[:n]
		f.head = 0
	}
	return k, true
}
