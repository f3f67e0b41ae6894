package session

import (
	"fmt"
	"net/netip"
	"sort"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
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
	view  Counts // Totals' result
	first stamp  // of total.First; total.Last is at clock

	clock     stamp // latest capture time seen
	lastSweep stamp
	nextSweep stamp // no sweep is due before (lastSweep + 1 s, or less)
	scratch   []byte
	closing   []*live
	// cache remembers the live session of recently seen (server, client)
	// pairs, so that steady traffic skips two map lookups per record. A
	// session has two entries: by portSlot, cheap to find, and by
	// addrSlot, for clients that share a port. close clears them.
	cache [sessionCacheSize]*live
	last  *live // of the previous record, checked before cache
	spare spare // of finished streams, for new ones

	opened []*live // open order, for eviction; may hold closed sessions (and nil)
	head   int

	live, peak, emitted, evicted int
}

// NewBuilder returns a Builder that hands each finished Session to emit
// (which may be nil).
func NewBuilder(opts Options, emit func(*Session)) *Builder {
	if emit == nil {
		emit = func(*Session) {}
	}
	return &Builder{opts: opts.withDefaults(), emit: emit, servers: map[netip.AddrPort]*server{}}
}

// Totals are the traffic counts of every record added, sessions or not
// (GameSpy, damaged capture records). Valid until the next Add.
func (b *Builder) Totals() *Counts {
	if b.live == 0 {
		return &b.total
	}
	b.view = b.total
	for _, l := range b.opened[b.head:] {
		if l != nil && !l.closed {
			b.view.mergeCounts(&l.s.Traffic)
			l.common.addTo(&b.view)
		}
	}
	return &b.view
}

// Live is the number of sessions open now; Peak the most open at once;
// Emitted the number handed to emit so far.
func (b *Builder) Live() int    { return b.live }
func (b *Builder) Peak() int    { return b.peak }
func (b *Builder) Emitted() int { return b.emitted }

// Evicted is the number of sessions ended early to honour MaxSessions.
func (b *Builder) Evicted() int { return b.evicted }

const sessionCacheSize = 64 // a power of two

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
func (l *live) of(r *flow.Record) bool {
	return l != nil && l.client.Port() == r.Client.Port() && l.client.Addr() == r.Client.Addr() &&
		l.server == r.Server
}

// server is what a Builder knows about one server: its live sessions, the
// client messages it may relay, and the kills already reported.
type server struct {
	sessions map[netip.AddrPort]*live
	relay    relayTable
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

// Add consumes one record. r and what it points to are not retained.
func (b *Builder) Add(r *flow.Record) {
	now := stampOf(r.Time)
	// The totals' First and Last as Counts.add keeps them: Last is the
	// latest nonzero time, which is the clock's.
	if now.after(b.clock) {
		b.clock, b.total.Last = now, r.Time
		if !b.clock.before(b.nextSweep) && b.clock.sub(b.lastSweep) >= time.Second {
			b.sweep()
			b.lastSweep = b.clock
			b.nextSweep = stampOf(b.clock.time().Add(time.Second))
		}
		// Later than every time so far, and so than the first unless
		// there is none yet (now is not zero: the clock starts there).
		if b.first.isZero() {
			b.first, b.total.First = now, r.Time
		}
	} else if (b.first.isZero() || now.before(b.first)) && !now.isZero() {
		b.first, b.total.First = now, r.Time
	}
	if r.Kind != flow.KindMessage {
		b.addOther(r, now)
		return
	}
	// The last session first (the messages of one datagram come in a
	// row), then the cache, then the maps. (A session's endpoints are
	// valid: only a record that matches none needs checking.)
	l := b.last
	if !l.of(r) {
		if l = b.cache[portSlot(r.Server, r.Client)]; l.of(r) {
			b.last = l
		} else if !r.Server.IsValid() || !r.Client.IsValid() {
			var t tally
			if t.of(r, gamePayload(r, &b.scratch)) {
				b.total.countTally(&t)
			}
			return
		} else {
			l = b.lookup(r)
		}
	}
	// (replaced is false, without the call, for most records: an open
	// session, no control message, not yet silent.)
	if l != nil && (l.ending || r.Control != nil || now.after(l.quietUntil)) && b.replaced(l, r, now) {
		b.close(l)
		l = nil
	}
	if l == nil {
		l = b.open(r, now)
	}
	if r.Err != nil {
		l.damaged(r) // here rather than in add, which then spills less
	}
	l.add(r, now)
}

// addOther takes a record that is not a message: damage, a lost fragment
// set, GameSpy.
func (b *Builder) addOther(r *flow.Record, now stamp) {
	var payload []byte // none: not a message
	if r.Kind == flow.KindGameSpy || !r.Server.IsValid() || !r.Client.IsValid() {
		b.total.count(r, payload)
		return
	}
	// Damage never opens a session: lost fragment sets are reported at
	// the end, long after their session may have closed.
	l := b.lookup(r)
	if l == nil {
		b.total.count(r, payload)
		return
	}
	last := l.traffic.last
	l.traffic.note(&l.s.Traffic, r.Time, now)
	if l.traffic.last != last {
		l.lastIsSeen = false // Traffic.Last is set, and later than LastSeen
	}
	l.s.Traffic.count(r, payload)
	l.damaged(r)
}

// replaced reports whether r starts a new session on l's flow: l ended and
// r is a new connect request, or l went silent for longer than the timeout,
// or the client connects again after getting past the connect step.
func (b *Builder) replaced(l *live, r *flow.Record, now stamp) bool {
	connect := isConnectRequest(r)
	switch {
	case l.ending:
		return connect || now.after(l.lingerUntil)
	case l.silent(now, b.opts.Timeout):
		l.timeout(b.opts.Timeout)
		return true
	case connect && l.s.reached() >= PhaseChecksum:
		l.end(EndReconnect, r.Time, r.Frame, "", "connected again from the same address")
		return true
	}
	return false
}

func isConnectRequest(r *flow.Record) bool {
	return r.Dir == game.ClientToServer && r.Control != nil && r.Control.Kind == "connect-request"
}

func (b *Builder) open(r *flow.Record, now stamp) *live {
	s := &Session{Server: r.Server, Client: r.Client, Slot: -1, GameSlot: -1, Team: -1,
		Start: r.Time, LastSeen: r.Time}
	// A session seen from its first step has a connect request or a slot
	// assignment first; anything else means it began before the capture.
	s.MidCapture = !(isConnectRequest(r) || (r.Control != nil && r.Control.Kind == "slot-assignment"))
	b.makeRoom(r)
	srv := b.servers[r.Server]
	if srv == nil {
		srv = &server{sessions: map[netip.AddrPort]*live{}}
		b.servers[r.Server] = srv
	}
	l := &live{s: s, srv: srv, server: r.Server, client: r.Client, opts: &b.opts, scratch: &b.scratch,
		lastSeen: now}
	// What live.add's first call would find in traffic.
	if !now.isZero() {
		l.traffic.first, s.Traffic.First = now, r.Time
	}
	if now.after(stamp{}) {
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
	b.opened = append(b.opened, l)
	b.live++
	b.peak = max(b.peak, b.live)
	return l
}

// makeRoom ends the oldest open sessions until one more fits.
func (b *Builder) makeRoom(r *flow.Record) {
	for b.live >= b.opts.MaxSessions && b.head < len(b.opened) {
		l := b.opened[b.head]
		b.opened[b.head] = nil
		b.head++
		if l.closed {
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

// compactOpened drops the closed sessions (and the evicted head) from
// opened once they make up most of it, so that it stays proportional to
// the open sessions.
func (b *Builder) compactOpened() {
	if len(b.opened)-b.head <= 2*b.live+64 && (b.head <= 64 || b.head <= len(b.opened)/2) {
		return
	}
	kept := b.opened[:0]
	for _, l := range b.opened[b.head:] {
		if l != nil && !l.closed {
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
		case l.ending && !b.clock.before(l.lingerUntil):
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
	if srv.sessions[l.s.Client] == l {
		delete(srv.sessions, l.s.Client)
	}
	if len(srv.sessions) == 0 {
		delete(b.servers, l.s.Server)
	}
	l.finish()
	b.total.mergeCounts(&l.s.Traffic)
	l.closed = true
	b.live--
	b.emitted++
	b.emit(l.s)
}

// Finish ends every session still open: those silent for longer than the
// timeout as timed out, the rest as open when the capture ended.
func (b *Builder) Finish() {
	for _, srv := range b.servers {
		for _, l := range srv.sessions {
			if !l.ending {
				if l.silent(b.clock, b.opts.Timeout) {
					l.timeout(b.opts.Timeout)
				} else {
					l.s.EndReason = EndOpen
				}
			}
			b.closing = append(b.closing, l)
		}
	}
	b.flushClosing()
	clear(b.opened)
	b.opened, b.head = b.opened[:0], 0
}

// live is a session being built.
type live struct {
	// What most records touch comes first, in as few cache lines as it
	// fits (a session's lines are out of L1 by its next record): the
	// pair Add matches records against, then what add reads and counts.
	server, client netip.AddrPort // s.Server, s.Client

	s    *Session
	srv  *server
	opts *Options

	lastSeen   stamp // s.LastSeen
	quietUntil stamp // silent is false up to here
	// traffic follows s.Traffic's First and Last, but while lastIsSeen
	// the Last it holds is only written at the end, as LastSeen: the
	// latest traffic, when it was a message, is the last message, so the
	// one time need not be written twice per record.
	traffic    span
	lastIsSeen bool
	ending     bool         // disconnected or booted; lingering
	closed     bool         // handed to emit
	done       bool         // emitted: relay entries pointing here are stale
	common     commonCounts // of s.Traffic, until finish
	scratch    *[]byte      // the Builder's, for reassembled payloads
	// ownShip is the id of the client's last StateUpdate; ownShipDone
	// says stateUpdate has nothing more to note for it than its rate.
	ownShip     game.ObjectID
	ownShipDone bool

	streams [2][2]stream // by direction index and dissect.Channel
	objects map[game.ObjectID]objState
	rates   rateIndex // of s.StateUpdates
	burst   burst
	// known is an id found in objects (they stay there): a client's
	// StateUpdates are for its own ship, hundreds in a row.
	known   game.ObjectID
	isKnown bool

	lingerUntil stamp
	lost        bool // the player has lost a ship (for respawns)
	current     game.ObjectID
	flying      bool // current is alive
}

// commonCounts holds the counts of s.Traffic that nearly every record
// adds to, next to the fields live.add touches anyway. In Counts they lie
// in arrays 4 KB apart, by direction and type or opcode, and the lines
// of the sessions open at once fall out of the L1 cache between one
// record of a session and the next: live.add stalled on them.
type commonCounts struct {
	datagrams    [2]int   // by direction index
	data, ack    [2]Tally // transport types TypeData and TypeAck
	stateUpdates [2]Tally // opcode StateUpdate
}

// addTo adds the counts to c.
func (cc *commonCounts) addTo(c *Counts) {
	for d := range 2 {
		c.Datagrams[d] += cc.datagrams[d]
		c.Transport[d][dissect.TypeData].add(cc.data[d])
		c.Transport[d][dissect.TypeAck].add(cc.ack[d])
		c.Opcodes[d][game.OpStateUpdate].add(cc.stateUpdates[d])
	}
}

// flush moves the counts to c.
func (cc *commonCounts) flush(c *Counts) {
	cc.addTo(c)
	*cc = commonCounts{}
}

type objState struct {
	ship int // index into s.Ships, -1 when not listed
	dead bool
}

type rateKey struct {
	id  game.ObjectID
	dir game.Direction
}

// rateIndex finds a session's ShipRate by object and direction. A session
// sees updates for a handful of ships, in turn: a small table by key hash
// remembers where each key was last found, and only when that misses does
// it scan its keys from the one after the last found; only beyond
// manyRates does a map pay.
type rateIndex struct {
	keys  []rateKey       // of s.StateUpdates, in order
	many  map[rateKey]int // index into keys, when they are many
	last  int             // index of the last key found by scanning
	hints [rateHints]rateHint
}

// rateHint is where a key was last found: its index, and the key packed
// into one word (see pack) so that checking it is one comparison. rate is
// live.stateUpdate's: the ShipRate at that index, while the slice it lies
// in has not grown.
type rateHint struct {
	key  uint64
	i    int
	rate *ShipRate
}

const (
	manyRates = 16
	rateHints = 64 // a power of two
)

// pack makes k one word, never zero (an empty hint).
func (k rateKey) pack() uint64 { return 1<<63 | uint64(k.id)<<8 | uint64(k.dir) }

func (k rateKey) hint() int {
	return int((uint32(k.id)^uint32(k.dir)<<16)*0x9E3779B1>>26) & (rateHints - 1)
}

// find returns the index of k, or -1.
func (x *rateIndex) find(k rateKey) int {
	if i, ok := x.hinted(k); ok {
		return i
	}
	return x.findSlow(k)
}

// hinted is find's usual case, small enough to inline: the index of k if
// its hint has it.
func (x *rateIndex) hinted(k rateKey) (int, bool) {
	h := &x.hints[k.hint()]
	return h.i, h.key == k.pack()
}

// findSlow is find when the hint misses.
func (x *rateIndex) findSlow(k rateKey) int {
	i := x.search(k)
	if i >= 0 {
		x.hints[k.hint()] = rateHint{key: k.pack(), i: i}
	}
	return i
}

// search is find without the hints.
func (x *rateIndex) search(k rateKey) int {
	if x.many != nil {
		i, ok := x.many[k]
		if !ok {
			return -1
		}
		return i
	}
	n := len(x.keys)
	for j := range n {
		i := x.last + 1 + j
		if i >= n {
			i -= n
		}
		if x.keys[i] == k {
			x.last = i
			return i
		}
	}
	return -1
}

// add appends k (not yet in x) and returns its index.
func (x *rateIndex) add(k rateKey) int {
	i := len(x.keys)
	x.keys = append(x.keys, k)
	switch {
	case x.many != nil:
		x.many[k] = i
	case len(x.keys) > manyRates:
		x.many = make(map[rateKey]int, 2*len(x.keys))
		for j, o := range x.keys {
			x.many[o] = j
		}
	}
	x.last = i
	x.hints[k.hint()] = rateHint{key: k.pack(), i: i}
	return i
}

// add takes a message record (Add has counted any damage) and counts it in
// the session's traffic.
func (l *live) add(r *flow.Record, now stamp) {
	s := l.s
	if now.after(l.lastSeen) {
		l.lastSeen, s.LastSeen = now, r.Time
		// The traffic's last time is never before lastSeen (when
		// positive), so it can only move with it.
		if now.after(l.traffic.last) {
			l.traffic.last, l.lastIsSeen = now, true
		}
	}
	if (now.before(l.traffic.first) || l.traffic.first.isZero()) && !now.isZero() {
		l.traffic.first, s.Traffic.First = now, r.Time
	}
	d := int(r.Dir) - 1 // DirIndex, with 0 or 1 known to the compiler
	if uint(d) > 1 {
		return // counted nowhere
	}
	// (s.Traffic only where it is used: taking its address checks s for
	// nil, a load from a line of s the common records need not touch.)
	cc, m := &l.common, r.Msg
	if r.MsgIndex == 0 {
		cc.datagrams[d]++
	}
	var tt *Tally
	switch m.Type {
	case dissect.TypeData:
		tt = &cc.data[d]
	case dissect.TypeAck:
		tt = &cc.ack[d]
	default:
		tt = &s.Traffic.Transport[d][m.Type]
	}
	tt.Count++
	tt.Bytes += len(m.Raw)
	var op game.Opcode
	var payload []byte // gamePayload, inlined
	if g := r.Game; g != nil {
		if payload = m.Payload; r.Reassembled != 0 {
			payload = reencode(r, l.scratch)
		}
		if len(payload) > 0 {
			// Most are StateUpdates: their opcode without the interface
			// call (which made every register spill).
			if _, ok := g.Msg.(*game.StateUpdate); ok {
				op = game.OpStateUpdate
				o := &cc.stateUpdates[d]
				o.Count++
				o.Bytes += len(payload)
			} else {
				op = g.Msg.Opcode()
				o := &s.Traffic.Opcodes[d][op]
				o.Count++
				o.Bytes += len(payload)
			}
		}
	}
	if m.Type == dissect.TypeAck {
		l.streams[1-d][m.AckChannel()&1].ack(m, now)
		return
	}
	if st := &l.streams[d][m.Type.Channel()&1]; !m.Reliable {
		st.st.Unreliable++ // send's first step, without the call
	} else if st.send(m, now) {
		l.burst.note(l, r)
		if r.Reassembled == 0 {
			return // a copy: its content was handled the first time
		}
	}
	if l.ending {
		return
	}
	if r.Dir == game.ClientToServer && s.Slot < 0 && r.Peer >= 2 && r.Peer != 0xFF {
		s.Slot = int(r.Peer)
	}
	switch {
	case r.Control != nil:
		l.control(r)
	case r.Game != nil:
		if len(payload) == 0 {
			op = r.Game.Msg.Opcode()
		}
		if op != game.OpStateUpdate {
			l.game(r, op, payload, now)
		} else if m, ok := r.Game.Msg.(*game.StateUpdate); ok {
			// Most messages are StateUpdates: game's only work for them
			// (they are not relayed).
			l.stateUpdate(r, m.Object)
		}
	}
}

// silent reports whether now is more than timeout after the session's last
// traffic. The last traffic only moves forward, so the answer stays no up
// to the time it gave last, and most records need one comparison.
func (l *live) silent(now stamp, timeout time.Duration) bool {
	if !now.after(l.quietUntil) {
		return false
	}
	if now.sub(l.lastSeen) > timeout {
		return true
	}
	// Add saturates rather than wraps: at worst an earlier bound.
	l.quietUntil = stampOf(l.s.LastSeen.Add(timeout))
	return false
}

func (l *live) damaged(r *flow.Record) {
	l.s.Damaged++
	if r.Err != nil {
		l.event(r, EventDamaged, r.Err.Error())
	}
}

func (l *live) event(r *flow.Record, kind, text string) {
	l.eventAt(r.Time, r.Frame, kind, text)
}

func (l *live) eventAt(t time.Time, frame int, kind, text string) {
	s := l.s
	if len(s.Events) >= l.opts.MaxEvents {
		s.EventsDropped++
		return
	}
	s.Events = append(s.Events, Event{Time: t, Frame: frame, Kind: kind, Text: text})
}

// setOnce sets *p to t unless it is set. (Allocating only here, not by
// taking t's address, keeps the per-packet path allocation-free.)
func setOnce(p **time.Time, t time.Time) bool {
	if *p != nil {
		return false
	}
	v := new(time.Time)
	*v = t
	*p = v
	return true
}

// end marks the session ended; it lingers to absorb what follows.
func (l *live) end(reason EndReason, t time.Time, frame int, by, text string) {
	s := l.s
	s.EndReason = reason
	s.EndBy = by
	setOnce(&s.Phases.End, t)
	l.eventAt(t, frame, string(reason), text)
	l.ending = true
	l.lingerUntil = stampOf(t.Add(l.opts.Linger))
}

func (l *live) timeout(after time.Duration) {
	l.end(EndTimeout, l.s.LastSeen, 0, "", fmt.Sprintf("no traffic for %s", after))
}

func (l *live) control(r *flow.Record) {
	s, c := l.s, r.Control
	switch r.Msg.Type {
	case dissect.TypeConnect, dissect.TypeConnectAck:
		switch {
		case c.Kind == "connect-request" && r.Dir == game.ClientToServer:
			setOnce(&s.Phases.Connect, r.Time)
		case c.Kind == "slot-assignment" && r.Dir == game.ServerToClient:
			setOnce(&s.Phases.ConnectReply, r.Time)
			s.Slot = int(*c.Slot)
		}
	case dissect.TypePeerInfo:
		if r.Dir == game.ClientToServer {
			s.Keepalive.Client.add(r.Time)
		} else {
			s.Keepalive.Server.add(r.Time)
		}
		if c.Slot != nil && c.Name != "" && (s.Slot < 0 || int(*c.Slot) == s.Slot) {
			s.Name = c.Name
			s.Slot = int(*c.Slot)
		}
	case dissect.TypeDisconnect:
		by := "client"
		if r.Dir == game.ServerToClient {
			by = "server"
		}
		l.end(EndDisconnect, r.Time, r.Frame, by, "disconnect from the "+by)
	case dissect.TypeBoot:
		text := "booted by the server"
		if r.Dir == game.ClientToServer {
			text = "boot message from the client"
		}
		l.end(EndBoot, r.Time, r.Frame, "server", text)
	}
}

// game takes a game message other than a StateUpdate (add passes those
// to stateUpdate); op is its opcode.
func (l *live) game(r *flow.Record, op game.Opcode, p []byte, now stamp) {
	s := l.s
	msg := r.Game.Msg
	c2s := r.Dir == game.ClientToServer
	switch op {
	case game.OpChecksumRequest:
		if rd, ok := checksumRound(msg); ok && !c2s {
			setOnce(&l.round(rd).Request, r.Time)
		}
	case game.OpChecksumResponse:
		if rd, ok := checksumRound(msg); ok && c2s {
			setOnce(&l.round(rd).Response, r.Time)
		}
	case game.OpChecksumComplete:
		setOnce(&s.Phases.ChecksumDone, r.Time)
	case game.OpVersionMismatch, game.OpSystemChecksumFail:
		l.event(r, EventChecksumFail, withArgs(op.String(), msg.String()))
	case game.OpSettings:
		setOnce(&s.Phases.Lobby, r.Time)
		if st, ok := msg.(*game.Settings); ok && !c2s {
			s.GameSlot = int(st.PlayerSlot)
		}
	case game.OpGameInit:
		setOnce(&s.Phases.Lobby, r.Time)
	case game.OpNewPlayerInGame:
		setOnce(&s.Phases.NewPlayer, r.Time)
	case game.OpMissionInit:
		setOnce(&s.Phases.MissionInit, r.Time)
	case game.OpObjCreate, game.OpObjCreateTeam:
		if m, ok := msg.(*game.ObjCreate); ok {
			l.objCreate(r, m)
		}
	case game.OpDestroyObject:
		if m, ok := msg.(*game.DestroyObject); ok {
			if o := l.owner(m.Object.Slot()); o != nil {
				o.shipLost(r, m.Object)
			}
		}
	case game.OpChat, game.OpTeamChat:
		l.chat(r)
	case game.OpScoreChange, game.OpScore, game.OpScoreInit, game.OpTeamMessage:
		l.score(r)
	case game.OpEndGame:
		l.event(r, EventEndGame, withArgs("END_GAME", msg.String()))
	case game.OpRestartGame:
		l.event(r, EventRestartGame, "RESTART_GAME")
		l.srv.kills = [len(l.srv.kills)]killKey{} // death counts start again
	}
	l.relay(r, p, now)
}

func withArgs(name, args string) string {
	if args == "" {
		return name
	}
	return name + " " + args
}

// checksumRound reads a checksum message's round: from the decoded message,
// or from the byte after the opcode when it did not decode.
func checksumRound(m game.Message) (game.ChecksumRound, bool) {
	switch m := m.(type) {
	case *game.ChecksumRequest:
		return m.Round, true
	case *game.ChecksumResponse:
		return m.Round, true
	case *game.Raw:
		if len(m.Data) > 0 {
			return game.ChecksumRound(m.Data[0]), true
		}
	}
	return 0, false
}

// maxRounds bounds the checksum rounds a session lists (stock has five).
const maxRounds = 16

func (l *live) round(rd game.ChecksumRound) *ChecksumRound {
	s := l.s
	for i := range s.Checksums {
		if s.Checksums[i].Round == rd {
			return &s.Checksums[i]
		}
	}
	if len(s.Checksums) >= maxRounds {
		return &ChecksumRound{} // counted nowhere: hostile input
	}
	s.Checksums = append(s.Checksums, ChecksumRound{Round: rd})
	return &s.Checksums[len(s.Checksums)-1]
}

// owner finds the live session of the player in player slot slot: l itself
// when it is that player, or another session of the same server.
func (l *live) owner(slot int) *live {
	if l.s.GameSlot == slot {
		return l
	}
	return l.srv.byGameSlot(slot)
}

func (l *live) objCreate(r *flow.Record, m *game.ObjCreate) {
	if m.Class != game.ClassShip {
		return
	}
	owner := int(m.Owner)
	if l.s.GameSlot < 0 && r.Dir == game.ClientToServer {
		l.s.GameSlot = owner // a client creates only its own ship
	}
	if o := l.owner(owner); o != nil {
		o.shipCreated(r, m)
	}
}

// maxObjects bounds the object ids a session remembers, listed or not.
func (l *live) maxObjects() int { return 4 * l.opts.MaxShips }

// remember adds a ship to the object set, within its bound.
func (l *live) remember(id game.ObjectID, st objState) {
	if l.objects == nil {
		l.objects = map[game.ObjectID]objState{}
	}
	if len(l.objects) < l.maxObjects() {
		l.objects[id] = st
	}
}

func (l *live) shipCreated(r *flow.Record, m *game.ObjCreate) {
	s := l.s
	if _, seen := l.objects[m.Object]; seen {
		return // the server's relay of the client's message, or a resend
	}
	class := ShipClass(m.Species)
	s.Ship = class
	st := objState{ship: -1}
	if len(s.Ships) < l.opts.MaxShips {
		st.ship = len(s.Ships)
		s.Ships = append(s.Ships, Ship{ID: m.Object, Class: class, Created: r.Time})
	}
	l.remember(m.Object, st)
	l.current, l.flying = m.Object, true
	s.ShipsCreated++
	text := class + " " + idText(m.Object)
	if m.HasTeam {
		s.Team = int(m.Team)
		text += fmt.Sprintf(" team %d", m.Team)
	}
	if s.Name == "" && m.PlayerName != "" {
		s.Name = m.PlayerName
	}
	setOnce(&s.Phases.InGame, r.Time)
	if l.lost {
		setOnce(&s.Phases.Respawned, r.Time)
		l.event(r, EventRespawn, "new ship "+text)
	} else {
		l.event(r, EventShipCreated, "ship selected: "+text)
	}
}

// ShipClass names a species byte: the stock class's script name
// ("Sovereign"), or the species as the game package shows it.
func ShipClass(sp game.Species) string {
	if spec := game.ShipBySpecies(sp); spec != nil {
		return spec.Name
	}
	return sp.String()
}

func idText(id game.ObjectID) string { return fmt.Sprintf("0x%08X", uint32(id)) }

// shipLost marks one of the player's ships destroyed: by DestroyObject (the
// host removing a leaving player's ship) or as the victim of a SCORE_CHANGE
// (stock deaths send no DestroyObject). Each ship counts once.
func (l *live) shipLost(r *flow.Record, id game.ObjectID) {
	st, ok := l.objects[id]
	if !ok || st.dead {
		return
	}
	st.dead = true
	l.objects[id] = st
	if id == l.current {
		l.flying = false
	}
	s := l.s
	s.ShipsDestroyed++
	if st.ship >= 0 {
		t := r.Time
		s.Ships[st.ship].Destroyed = &t
	}
	l.lost = true
	setOnce(&s.Phases.Destroyed, r.Time)
	l.event(r, EventShipDestroyed, fmt.Sprintf("ship %s destroyed", idText(id)))
}

// seen reports whether id is in l.objects.
func (l *live) seen(id game.ObjectID) bool {
	if l.isKnown && id == l.known {
		return true
	}
	if _, ok := l.objects[id]; !ok {
		return false
	}
	l.known, l.isKnown = id, true
	return true
}

func (l *live) stateUpdate(r *flow.Record, id game.ObjectID) {
	s := l.s
	if r.Dir == game.ClientToServer && !(l.ownShipDone && id == l.ownShip) {
		setOnce(&s.Phases.FirstStateUpdate, r.Time)
		if setOnce(&s.Phases.InGame, r.Time) {
			s.Inferred = append(s.Inferred, "in_game")
		}
		if s.GameSlot < 0 && id.Slot() >= 0 {
			s.GameSlot = id.Slot() // a client updates only its own ship
		}
		if !l.seen(id) && id.Slot() == s.GameSlot {
			// A ship created before the capture: remember it so that its
			// destruction counts.
			l.remember(id, objState{ship: -1})
			l.current, l.flying = id, true
		}
		// The phases stay set, a known game slot stays known (Settings
		// sets only another one) and objects keeps its ids: the next
		// update of a seen id finds nothing to do here, and need not read
		// the Session's lines.
		l.ownShip, l.ownShipDone = id, s.GameSlot >= 0 && l.seen(id)
	}
	k := rateKey{id, r.Dir}
	h := &l.rates.hints[k.hint()]
	u := h.rate
	if u == nil || h.key != k.pack() {
		if u = l.rate(k, r); u == nil {
			return
		}
	}
	u.Count++
	u.Last = r.Time
}

// rate is stateUpdate's ShipRate for k, added if new and there is room
// (nil if not), and left in k's hint.
func (l *live) rate(k rateKey, r *flow.Record) *ShipRate {
	s := l.s
	i := l.rates.find(k)
	if i < 0 {
		if len(s.StateUpdates) >= l.opts.MaxShipRates {
			return nil
		}
		i = l.rates.add(k)
		c := cap(s.StateUpdates)
		s.StateUpdates = append(s.StateUpdates, ShipRate{Object: k.id, Dir: r.Dir.String(), First: r.Time})
		if cap(s.StateUpdates) != c {
			for j := range l.rates.hints {
				l.rates.hints[j].rate = nil // into the old array
			}
		}
	}
	u := &s.StateUpdates[i]
	l.rates.hints[k.hint()].rate = u // find and add left k there
	return u
}

func (l *live) chat(r *flow.Record) {
	ch, ok := r.Game.Msg.(*game.Chat)
	if !ok {
		return
	}
	sender := l.srv.byWireSlot(ch.SenderID)
	switch {
	case r.Dir == game.ClientToServer:
		sender = l
	case sender != nil:
		return // the server relaying a client's line: logged in the sender's session
	}
	name := ""
	switch {
	case sender != nil:
		name = sender.s.Name
	case ch.SenderID == 1:
		name = "host"
	}
	s := l.s
	if len(s.Chat) >= l.opts.MaxChat {
		s.ChatDropped++
		return
	}
	s.Chat = append(s.Chat, ChatLine{Time: r.Time, Frame: r.Frame, SenderID: ch.SenderID, Sender: name,
		Team: ch.Op == game.OpTeamChat, Text: ch.Text})
}

func (l *live) score(r *flow.Record) {
	srv := l.srv
	switch m := r.Game.Msg.(type) {
	case *game.ScoreChange:
		killer, victim := srv.byWireSlot(m.KillerID), srv.byWireSlot(m.VictimID)
		if m.KillerID != 0 && killer != nil {
			killer.s.Score.Kills, killer.s.Score.Score = m.KillerKills, m.KillerScore
		}
		if victim != nil {
			victim.s.Score.Deaths = m.VictimDeaths
		}
		for _, o := range m.Others {
			if p := srv.byWireSlot(o.PlayerID); p != nil {
				p.s.Score.Score = o.Score
			}
		}
		if srv.seenKill(killKey{m.KillerID, m.VictimID, m.VictimDeaths}) {
			return
		}
		if victim != nil && victim.flying {
			defer victim.shipLost(r, victim.current) // listed after the kill
		}
		text := fmt.Sprintf("%s killed %s", playerName(killer, m.KillerID), playerName(victim, m.VictimID))
		if m.KillerID == 0 {
			text = playerName(victim, m.VictimID) + " died"
		}
		switch {
		case killer == nil && victim == nil:
			l.event(r, EventKill, text)
		default:
			if killer != nil {
				killer.event(r, EventKill, text)
			}
			if victim != nil && victim != killer {
				victim.event(r, EventKill, text)
			}
		}
	case *game.Score:
		if p := srv.byWireSlot(m.PlayerID); p != nil {
			p.s.Score = Score{Kills: m.Kills, Deaths: m.Deaths, Score: m.Score}
		}
	case *game.ScoreInit:
		if p := srv.byWireSlot(m.PlayerID); p != nil {
			p.s.Score = Score{Kills: m.Kills, Deaths: m.Deaths, Score: m.Score}
			if m.Team != game.NoTeam {
				p.s.Team = int(m.Team)
			}
		}
	case *game.TeamMessage:
		if p := srv.byWireSlot(m.PlayerID); p != nil && m.Team != game.NoTeam {
			p.s.Team = int(m.Team)
		}
	}
}

func playerName(l *live, id int32) string {
	if l != nil && l.s.Name != "" {
		return fmt.Sprintf("%q", l.s.Name)
	}
	if id == 1 {
		return "host"
	}
	return fmt.Sprintf("player %d", id)
}

func (l *live) relay(r *flow.Record, p []byte, now stamp) {
	if len(p) == 0 {
		return
	}
	h := hash64(p)
	if r.Dir == game.ClientToServer {
		l.srv.relay.put(h, l, now, l.opts)
		return
	}
	src, first := l.srv.relay.match(h, now, l.opts.RelayWindow)
	if src == nil || src == l || src.done {
		return
	}
	if first {
		src.s.Relay.Messages++
	}
	src.s.Relay.Copies++
	l.s.Relay.Received++
}

// finish completes the session's figures before it is emitted.
func (l *live) finish() {
	s := l.s
	for d := range l.streams {
		for ch := range l.streams[d] {
			l.streams[d][ch].finish()
		}
	}
	l.burst.flush(l)
	l.common.flush(&s.Traffic)
	if l.lastIsSeen {
		s.Traffic.Last = s.LastSeen
	}
	s.Reached = s.reached()
	for i := range s.StateUpdates {
		u := &s.StateUpdates[i]
		if dt := u.Last.Sub(u.First).Seconds(); u.Count > 1 && dt > 0 {
			u.PerSecond = round(float64(u.Count-1)/dt, 1e3)
		}
	}
	s.Relay.FanOut = ratio(s.Relay.Copies, s.Relay.Messages)
	sort.SliceStable(s.Events, func(i, j int) bool { return s.Events[i].Time.Before(s.Events[j].Time) })
	// Empty lists, not null, for programs reading the JSON.
	nonNil(&s.Checksums)
	nonNil(&s.Events)
	nonNil(&s.Chat)
	nonNil(&s.Ships)
	nonNil(&s.StateUpdates)
	l.objects, l.rates = nil, rateIndex{}
	l.done = true
}

func nonNil[T any](s *[]T) {
	if *s == nil {
		*s = []T{}
	}
}

// reached derives the furthest phase from the phase times.
func (s *Session) reached() Phase {
	p := &s.Phases
	switch {
	case p.InGame != nil || p.FirstStateUpdate != nil || p.Destroyed != nil || p.Respawned != nil:
		return PhaseInGame
	case p.ChecksumDone != nil || p.Lobby != nil || p.NewPlayer != nil || p.MissionInit != nil:
		return PhaseLobby
	case len(s.Checksums) > 0:
		return PhaseChecksum
	case p.Connect != nil || p.ConnectReply != nil:
		return PhaseConnecting
	}
	return PhaseUnknown
}

// burst groups retransmissions that follow each other closely into one
// event.
type burst struct {
	start, last time.Time
	frame       int
	n           int
	by          [2][2]int // by direction index and channel
}

func (b *burst) note(l *live, r *flow.Record) {
	if b.n > 0 && r.Time.Sub(b.last) > l.opts.BurstGap {
		b.flush(l)
	}
	if b.n == 0 {
		b.start, b.frame = r.Time, r.Frame
	}
	b.n++
	b.last = r.Time
	b.by[DirIndex(r.Dir)][r.Msg.Type.Channel()]++
}

func (b *burst) flush(l *live) {
	if b.n >= l.opts.BurstMin {
		text := fmt.Sprintf("%d retransmissions in %s:", b.n, b.last.Sub(b.start).Round(time.Millisecond))
		for d := range 2 {
			for _, ch := range []dissect.Channel{dissect.ChannelData, dissect.ChannelControl} {
				if n := b.by[d][ch]; n > 0 {
					text += fmt.Sprintf(" %s %s %d", Dirs[d], ch, n)
				}
			}
		}
		l.eventAt(b.start, b.frame, EventRetransmitBurst, text)
	}
	*b = burst{}
}
