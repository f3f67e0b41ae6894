package session

import (
	"fmt"
	"net/netip"
	"sort"
	"time"

	"github.com/bcwire/bcwire/dissect/flow"
)

// Lookup and eviction: finding the live session of a record's (server,
// client) pair through the caches and maps, ending the oldest sessions when
// too many are open, and closing the sessions that timed out or finished
// lingering, in a fixed order.

const (
	sessionCacheSize = 64 // a power of two
	epochCacheSize   = 64 // a power of two
)

// portSlot is a pair's cache entry by its ports alone: cheap, and enough
// to tell apart the clients of a server unless they share a port.
func portSlot(server, client netip.AddrPort) int {
	h := (uint32(client.Port())<<16 | uint32(server.Port())) * 0x9E3779B1
	return int(h >> 26 & (sessionCacheSize - 1))
}

// addrSlot is a pair's cache entry by its ports and client address, for
// when portSlot's holds another pair.
func addrSlot(server, client netip.AddrPort) int {
	h := addrLow(client.Addr()) ^ uint32(server.Port()) ^ uint32(client.Port())<<2
	h ^= h >> 7
	return int(h & (sessionCacheSize - 1))
}

// addrLow mixes the address's last two bytes. (As16's result is copied
// with one 16-byte load from its two 8-byte halves just stored, which the
// CPU cannot forward: a stall, which portSlot spares most records.)
func addrLow(a netip.Addr) uint32 {
	if a.Is4() {
		b := a.As4()
		return uint32(b[3]) ^ uint32(b[2])<<4
	}
	b := a.As16()
	return uint32(b[15]) ^ uint32(b[14])<<4
}

// lookup finds the live session of r's pair, nil if none, and makes it the
// last one and caches it.
func (b *Builder) lookup(r *flow.Record) *live {
	l := b.cache[addrSlot(r.Server, r.Client)]
	if !l.of(r) {
		l = nil
		if srv := b.servers[r.Server]; srv != nil {
			l = srv.sessions[r.Client]
		}
	}
	if l != nil {
		b.cacheLive(l)
	}
	return l
}

// cacheLive makes l the last session and caches it.
func (b *Builder) cacheLive(l *live) {
	b.cache[portSlot(l.server, l.client)] = l
	b.cache[addrSlot(l.server, l.client)] = l
	b.last = l
}

// of reports whether r belongs to l's pair (false for a nil l). The
// client port goes first: it tells most sessions apart at once.
//
// A record's non-zero Epoch names its pair (flow.Record.Epoch): once l has
// matched a record by address, records of the same Epoch match by it.
func (l *live) of(r *flow.Record) bool {
	if l == nil {
		return false
	}
	if r.Epoch != 0 && l.epoch == r.Epoch {
		return true
	}
	if l.client.Port() == r.Client.Port() && l.client.Addr() == r.Client.Addr() && l.server == r.Server {
		l.epoch = r.Epoch
		return true
	}
	return false
}

// server is what a Builder knows about one server: its live sessions, the
// client messages it may relay, and the kills already reported.
type server struct {
	sessions map[netip.AddrPort]*live
	relay    Relays[*live]
	kills    [64]killKey
	nextKill int
}

type killKey struct{ killer, victim, deaths int32 }

// seenKill reports whether a ScoreChange was already seen (the server sends
// one copy to every client), remembering it if not.
func (s *server) seenKill(k killKey) bool {
	for _, o := range s.kills {
		if o == k {
			return true
		}
	}
	s.kills[s.nextKill] = k
	s.nextKill = (s.nextKill + 1) % len(s.kills)
	return false
}

// byWireSlot and byGameSlot find the session of a player by its network id
// or its player slot. A session that has ended but still lingers matches
// only when no open one does (the host removes a leaving player's ship
// after the disconnect; a new player may already have the slot).
func (s *server) byWireSlot(slot int32) *live {
	return s.find(func(l *live) bool { return l.s.Slot >= 0 && int32(l.s.Slot) == slot })
}

func (s *server) byGameSlot(slot int) *live {
	if slot < 0 {
		return nil
	}
	return s.find(func(l *live) bool { return l.s.GameSlot == slot })
}

func (s *server) find(match func(*live) bool) *live {
	var ended *live
	for _, l := range s.sessions {
		if match(l) {
			if !l.ending {
				return l
			}
			ended = l
		}
	}
	return ended
}

// makeRoom ends the oldest open sessions until one more fits.
func (b *Builder) makeRoom(r *flow.Record) {
	for b.live >= b.opts.MaxSessions && b.head < len(b.opened) {
		l := b.opened[b.head]
		b.opened[b.head] = nil
		b.head++
		if l == nil {
			continue
		}
		if !l.ending {
			l.end(EndEvicted, l.s.LastSeen, 0, "", fmt.Sprintf("ended early: more than %d sessions open at once", b.opts.MaxSessions))
		}
		b.evicted++
		b.close(l)
	}
	b.compactOpened()
}

// compactOpened drops the places of closed sessions (nil, see close) and
// the evicted head from opened once they make up most of it, so that it
// stays proportional to the open sessions.
func (b *Builder) compactOpened() {
	if len(b.opened)-b.head <= 2*b.live+8 && (b.head <= 64 || b.head <= len(b.opened)/2) {
		return
	}
	kept := b.opened[:0]
	for _, l := range b.opened[b.head:] {
		if l != nil {
			l.at = len(kept)
			kept = append(kept, l)
		}
	}
	clear(b.opened[len(kept):])
	b.opened = kept
	b.head = 0
}

// sweep closes the sessions that timed out or finished lingering. (It
// walks opened, cheaper than the maps, which hold the same sessions.)
func (b *Builder) sweep() {
	for _, l := range b.opened[b.head:] {
		switch {
		case l == nil || l.closed:
			continue
		case l.ending && !b.clock.Before(l.lingerUntil):
		case !l.ending && l.silent(b.clock, b.opts.Timeout):
			l.timeout(b.opts.Timeout)
		default:
			continue
		}
		b.closing = append(b.closing, l)
	}
	b.flushClosing()
}

// flushClosing emits the sessions in b.closing in a fixed order (map
// iteration order is random; output must not be).
func (b *Builder) flushClosing() {
	if len(b.closing) == 0 {
		return
	}
	sort.Slice(b.closing, func(i, j int) bool { return b.closing[i].s.before(b.closing[j].s) })
	for _, l := range b.closing {
		b.close(l)
	}
	clear(b.closing)
	b.closing = b.closing[:0]
}

func (s *Session) before(o *Session) bool {
	a, c := s.endTime(), o.endTime()
	switch {
	case !a.Equal(c):
		return a.Before(c)
	case !s.Start.Equal(o.Start):
		return s.Start.Before(o.Start)
	case s.Server != o.Server:
		return s.Server.Compare(o.Server) < 0
	}
	return s.Client.Compare(o.Client) < 0
}

func (s *Session) endTime() time.Time {
	if s.Phases.End != nil {
		return *s.Phases.End
	}
	return s.LastSeen
}

func (b *Builder) close(l *live) {
	srv := l.srv
	for _, i := range [2]int{portSlot(l.server, l.client), addrSlot(l.server, l.client)} {
		if b.cache[i] == l {
			b.cache[i] = nil
		}
	}
	if b.last == l {
		b.last = nil
	}
	for i := range b.byEpoch {
		if b.byEpoch[i] == l {
			b.byEpoch[i] = nil // (an earlier epoch of l may still be here)
		}
	}
	if srv.sessions[l.s.Client] == l {
		delete(srv.sessions, l.s.Client)
	}
	if len(srv.sessions) == 0 {
		delete(b.servers, l.s.Server)
	}
	srv.relay.forget(l)
	if l.at < len(b.opened) && b.opened[l.at] == l {
		b.opened[l.at] = nil
	}
	l.finish()
	b.total.mergeCounts(&l.s.Traffic)
	l.closed = true
	b.live--
	b.emitted++
	b.emit(l.s)
	b.retire(l)
}
