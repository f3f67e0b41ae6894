package session

import (
	"net/netip"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
)

// Options tune a Builder. Zero fields take the defaults.
type Options struct {
	// Timeout ends a session after this much capture time without traffic
	// (default 45 s).
	Timeout time.Duration
	// Linger keeps a disconnected or booted session open this long to
	// count the stray ACKs and retransmissions that follow the end
	// (default 10 s); a new connect request on the same flow ends it at once.
	Linger time.Duration
	// MaxEvents, MaxChat and MaxShips cap a session's lists (default 200,
	// 200, 64); what does not fit is counted.
	MaxEvents int
	MaxChat   int
	MaxShips  int
	// MaxShipRates caps the objects whose StateUpdate rate a session
	// follows (default 64).
	MaxShipRates int
	// RTTSamples is the reservoir size behind the ACK round-trip median and
	// 95th percentile, per session, direction and channel (default 256).
	RTTSamples int
	// RelayWindow is how long after a client's game message an identical
	// message from the server to another client counts as a relay of it
	// (default 2 s); RelayMemory caps the client messages remembered per
	// server (default 4096).
	RelayWindow time.Duration
	RelayMemory int
	// BurstGap and BurstMin define a retransmission burst: at least BurstMin
	// retransmissions in one session, each within BurstGap of the previous
	// one (defaults 1 s and 3).
	BurstGap time.Duration
	BurstMin int
	// MaxSessions caps the sessions open at once (default 1024); beyond it
	// the oldest open session is ended early (EndEvicted) and counted.
	MaxSessions int
}

// DefaultMaxSessions is the default of Options.MaxSessions.
const DefaultMaxSessions = 1024

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defDur := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	defDur(&o.Timeout, 45*time.Second)
	defDur(&o.Linger, 10*time.Second)
	def(&o.MaxEvents, 200)
	def(&o.MaxChat, 200)
	def(&o.MaxShips, 64)
	def(&o.MaxShipRates, 64)
	def(&o.RTTSamples, 256)
	defDur(&o.RelayWindow, 2*time.Second)
	def(&o.RelayMemory, 4096)
	defDur(&o.BurstGap, time.Second)
	def(&o.BurstMin, 3)
	def(&o.MaxSessions, DefaultMaxSessions)
	return o
}

// Builder groups flow records into sessions. Feed it every record of a
// capture in order with Add, then call Finish. It keeps only the sessions
// still alive; each ended Session goes to the emit function given to
// NewBuilder and is not touched again.
type Builder struct {
	opts    Options
	emit    func(*Session)
	servers map[netip.AddrPort]*server
	// total counts what no open session counts: the records of closed
	// sessions (merged in at the close) and those of no session. A record
	// of an open session is counted once, in the session's Traffic, and
	// Totals adds those up.
	total Counts
	view  *Counts // Totals' result, made on its first use (a Builder is then small)
	first stamp   // of total.First; total.Last is at clock

	clock     stamp // latest capture time seen
	lastSweep stamp
	nextSweep stamp // no sweep is due before (lastSweep + 1 s, or less)
	closing   []*live
	// cache remembers the live session of recently seen (server, client)
	// pairs, so that steady traffic skips two map lookups per record. A
	// session has two entries: by portSlot, cheap to find, and by
	// addrSlot, for clients that share a port. close clears them.
	cache [sessionCacheSize]*live
	// byEpoch holds the session of a flow.Record.Epoch at the epoch's
	// slot (each session's latest epoch): checked first, with the
	// epoch alone. close clears it.
	byEpoch  [epochCacheSize]*live
	last     *live        // of the previous record, checked before cache
	spare    spare        // of finished streams, for new ones
	nonStock nonStockPool // texts and list arrays of the sessions' non-stock kinds

	opened []*live // open order, for eviction; nil where a session closed
	head   int
	// free holds emitted sessions given back by Reuse, for open;
	// freeLive the live state of closed sessions (retire), at most
	// maxFreeLive of them (0 in a test that compares with new ones).
	free        []*Session
	freeLive    []*live
	maxFreeLive int

	live, peak, emitted, evicted int
	retransmissions              int
}

// NewBuilder returns a Builder that hands each finished Session to emit
// (which may be nil).
func NewBuilder(opts Options, emit func(*Session)) *Builder {
	if emit == nil {
		emit = func(*Session) {}
	}
	return &Builder{opts: opts.withDefaults(), emit: emit, servers: map[netip.AddrPort]*server{},
		maxFreeLive: defaultFreeLive}
}

// Totals are the traffic counts of every record added, sessions or not
// (GameSpy, damaged capture records). Valid until the next Add.
func (b *Builder) Totals() *Counts {
	if b.live == 0 {
		return &b.total
	}
	if b.view == nil {
		b.view = new(Counts)
	}
	*b.view = b.total
	for _, l := range b.opened[b.head:] {
		if l != nil && !l.closed {
			b.view.mergeCounts(&l.s.Traffic)
			l.common.addTo(b.view)
		}
	}
	return b.view
}

// Live is the number of sessions open now; Peak the most open at once;
// Emitted the number handed to emit so far.
func (b *Builder) Live() int    { return b.live }
func (b *Builder) Peak() int    { return b.peak }
func (b *Builder) Emitted() int { return b.emitted }

// Evicted is the number of sessions ended early to honour MaxSessions.
func (b *Builder) Evicted() int { return b.evicted }

// Retransmissions is the number of reliable messages sent again so far, in
// every session, open or ended: the sum of their Reliability's
// Retransmissions, as each session's streams count them (live shows it
// while sessions are still open).
func (b *Builder) Retransmissions() int { return b.retransmissions }

// Add consumes one record. r and what it points to are not retained.
func (b *Builder) Add(r *flow.Record) {
	now := stampOf(r.Time)
	// The totals' First and Last as Counts.add keeps them: Last is the
	// latest nonzero time, which is the clock's.
	if now.After(b.clock) {
		b.clock, b.total.Last = now, r.Time
		if !b.clock.Before(b.nextSweep) && b.clock.Sub(b.lastSweep) >= time.Second {
			b.sweep()
			b.lastSweep = b.clock
			b.nextSweep = stampOf(b.clock.Time().Add(time.Second))
		}
		// Later than every time so far, and so than the first unless
		// there is none yet (now is not zero: the clock starts there).
		if b.first.IsZero() {
			b.first, b.total.First = now, r.Time
		}
	} else if now != b.clock && (b.first.IsZero() || now.Before(b.first)) && !now.IsZero() {
		// (At the clock, as the other messages of the latest datagram
		// are, now cannot be before first, which is set and not after
		// the clock once the clock is not zero.)
		b.first, b.total.First = now, r.Time
	}
	if r.Kind != flow.KindMessage {
		b.addOther(r, now)
		return
	}
	// The session of the record's epoch (one word names its pair) first;
	// find looks further.
	e := r.Epoch
	l := b.byEpoch[e&(epochCacheSize-1)]
	if l == nil || l.epoch != e || e == 0 {
		var ok bool
		if l, ok = b.find(r); !ok {
			return
		}
	}
	// (replaced is false, without the call, for most records: an open
	// session, no control message, not yet silent.)
	if l != nil && (l.ending || r.Control != nil || now.After(l.quietUntil)) && b.replaced(l, r, now) {
		b.close(l)
		l = nil
	}
	if l == nil {
		l = b.open(r, now)
	}
	// (Here rather than in add, which then spills less.)
	if r.Err != nil {
		l.damaged(r)
	}
	if r.NonStock != nil {
		l.nonStock(r)
	}
	l.add(r, now)
}

// find is Add's look-up of r's session when the epoch cache has none: the
// last session (the messages of one datagram come in a row), then the
// cache, then the maps; nil if there is none, and then r's epoch will name
// the session open makes. ok is false for a record with an endpoint that
// is not valid (counted in the totals here): a session's endpoints are
// valid, so only a record that matches none needs checking.
func (b *Builder) find(r *flow.Record) (l *live, ok bool) {
	l = b.last
	if !l.of(r) {
		if l = b.cache[portSlot(r.Server, r.Client)]; l.of(r) {
			b.last = l
		} else if !r.Server.IsValid() || !r.Client.IsValid() {
			var t tally
			if t.of(r) {
				b.total.countTally(&t)
			}
			return nil, false
		} else {
			l = b.lookup(r)
		}
	}
	if l != nil {
		b.cacheEpoch(l, r.Epoch)
	}
	return l, true
}

// cacheEpoch notes that epoch e (when not 0) names l's pair.
func (b *Builder) cacheEpoch(l *live, e uint32) {
	if e != 0 {
		l.epoch = e
		b.byEpoch[e&(epochCacheSize-1)] = l
	}
}

// addOther takes a record that is not a message: damage, a lost fragment
// set, GameSpy.
func (b *Builder) addOther(r *flow.Record, now stamp) {
	if r.Kind == flow.KindGameSpy || !r.Server.IsValid() || !r.Client.IsValid() {
		b.total.count(r)
		return
	}
	// Damage never opens a session: lost fragment sets are reported at
	// the end, long after their session may have closed.
	l := b.lookup(r)
	if l == nil {
		b.total.count(r)
		return
	}
	last := l.traffic.last
	l.traffic.note(&l.s.Traffic, r.Time, now)
	if l.traffic.last != last {
		l.lastIsSeen = false // Traffic.Last is set, and later than LastSeen
	}
	l.s.Traffic.count(r)
	l.damaged(r)
}

// replaced reports whether r starts a new session on l's flow: l ended and
// r is a new connect request, or l went silent for longer than the timeout,
// or the client connects again after getting past the connect step.
func (b *Builder) replaced(l *live, r *flow.Record, now stamp) bool {
	connect := isConnectRequest(r)
	switch {
	case l.ending:
		return connect || now.After(l.lingerUntil)
	case l.silent(now, b.opts.Timeout):
		l.timeout(b.opts.Timeout)
		return true
	case connect && l.s.reached() >= PhaseChecksum:
		l.end(EndReconnect, r.Time, r.Frame, "", "connected again from the same address")
		return true
	}
	return false
}

// isConnectRequest is flow's: the record that starts a new connection
// there starts a new session here.
func isConnectRequest(r *flow.Record) bool { return flow.IsConnectRequest(r) }

func (b *Builder) open(r *flow.Record, now stamp) *live {
	s := b.newSession()
	s.Server, s.Client = r.Server, r.Client
	s.Slot, s.GameSlot, s.Team = -1, -1, -1
	s.Start, s.LastSeen = r.Time, r.Time
	// A session seen from its first step has a connect request or a slot
	// assignment first; anything else means it began before the capture.
	s.MidCapture = !(isConnectRequest(r) || (r.Control != nil && r.Control.Kind == "slot-assignment"))
	b.makeRoom(r)
	srv := b.servers[r.Server]
	if srv == nil {
		srv = &server{sessions: map[netip.AddrPort]*live{}}
		srv.relay.Window, srv.relay.Memory = b.opts.RelayWindow, b.opts.RelayMemory
		b.servers[r.Server] = srv
	}
	l := b.newLive()
	l.s, l.srv, l.server, l.client, l.opts = s, srv, r.Server, r.Client, &b.opts
	l.retransmissions, l.lastSeen, l.nonStockPool = &b.retransmissions, now, &b.nonStock
	// What live.add's first call would find in traffic.
	if !now.IsZero() {
		l.traffic.first, s.Traffic.First = now, r.Time
	}
	if now.After(stamp{}) {
		l.traffic.last, l.lastIsSeen = now, true
	}
	for d := range 2 {
		for ch := range 2 {
			l.streams[d][ch].rtt.cap = b.opts.RTTSamples
			l.streams[d][ch].spare = &b.spare
		}
	}
	l.streams[0][dissect.ChannelData].out = &s.Reliability.ClientToServer.Data
	l.streams[0][dissect.ChannelControl].out = &s.Reliability.ClientToServer.Control
	l.streams[1][dissect.ChannelData].out = &s.Reliability.ServerToClient.Data
	l.streams[1][dissect.ChannelControl].out = &s.Reliability.ServerToClient.Control
	srv.sessions[r.Client] = l
	b.cacheLive(l)
	b.cacheEpoch(l, r.Epoch)
	l.at = len(b.opened)
	b.opened = append(b.opened, l)
	b.live++
	b.peak = max(b.peak, b.live)
	return l
}

// maxFree bounds the sessions Reuse keeps, defaultFreeLive the live
// states retire keeps.
const (
	maxFree         = 4
	defaultFreeLive = 8
)

// Reuse gives back s, a Session b emitted that the caller is done with
// (it keeps no pointer to it or into it): b may hand its memory out again
// as a later session. A Session is 18 KB, most of it its Traffic counts,
// and a capture of short sessions (OpenBC's clients reconnect: 120
// sessions on OpenBC battle x40) made the collector run for them.
func (b *Builder) Reuse(s *Session) {
	if s != nil && len(b.free) < maxFree {
		b.free = append(b.free, s)
	}
}

// newSession is a zero Session: one given back by Reuse, or a new one.
func (b *Builder) newSession() *Session {
	s, ok := popFree(&b.free)
	if !ok {
		return new(Session)
	}
	b.nonStock.keep(s.NonStock)
	s.reset()
	return s
}

// reset makes s a zero Session but for the arrays of its lists and its
// times, kept empty for the new session's: OpenBC's sessions (which
// reconnect) left some 2 KB of them each to the collector.
func (s *Session) reset() {
	checksums, events, chat, ships := s.Checksums, s.Events, s.Chat, s.Ships
	rates, inferred, times := s.StateUpdates, s.Inferred, s.times
	*s = Session{}
	s.Checksums, s.Events, s.Chat, s.Ships = emptied(checksums), emptied(events), emptied(chat), emptied(ships)
	s.StateUpdates, s.Inferred = emptied(rates), emptied(inferred)
	times.reset()
	s.times = times
}

// emptied is x with no elements (nil stays nil) and nothing left in its
// array for the collector to follow.
func emptied[T any](x []T) []T {
	clear(x)
	return x[:0]
}

// retire keeps the live state of l, just closed, for a later session: a
// live is 5.5 KB (its streams, the rate hints), and OpenBC's clients
// reconnect, 120 sessions on OpenBC battle x40, 600 on x200, which made
// the collector run for them. Nothing refers to l any more: close took it
// out of the caches, the maps, opened and the relay memory
// (Relays.forget). Its object set's map and its rate keys' array are
// kept, emptied.
func (b *Builder) retire(l *live) {
	if len(b.freeLive) >= b.maxFreeLive {
		return
	}
	objects, keys := l.objects, l.rates.keys
	clear(objects)
	*l = live{objects: objects, rates: rateIndex{keys: keys[:0]}}
	b.freeLive = append(b.freeLive, l)
}

// newLive is a zero live (but for the memory retire keeps): one retire
// kept, or a new one.
func (b *Builder) newLive() *live {
	if l, ok := popFree(&b.freeLive); ok {
		return l
	}
	return new(live)
}

// popFree takes the last of the kept values off *free, clearing its slot
// so that the list holds no reference to it; ok is false when none is
// kept.
func popFree[T any](free *[]T) (v T, ok bool) {
	n := len(*free)
	if n == 0 {
		return v, false
	}
	v = (*free)[n-1]
	var zero T
	(*free)[n-1] = zero
	*free = (*free)[:n-1]
	return v, true
}
