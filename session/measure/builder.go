package measure

import (
	"net/netip"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/internal/wallclock"
)

// Window is how long after a client's message an identical message to a
// client counts as a copy of it (the diff's relay window).
const Window = 2 * time.Second

// deathWindow is how long after ObjectExploding a death sequence runs;
// maxDeathSteps the messages kept of it; maxDeaths the sequences kept.
// maxLanes and maxIDs bound what a capture of months can make the
// Builder hold: lanes (ship, direction, family, client) and distinct
// object ids per owner block; past them new ones are counted, not kept.
const (
	maxLanes = 8192
	maxIDs   = 4096
)

const (
	deathWindow   = 5 * time.Second
	maxDeathSteps = 24
	maxDeaths     = 32
)

// A laneSet is one ship's StateUpdates one way on one client's flow
// (Builder.ships holds the laneSets, by shipKey): a lane per family, by
// slotOf: every update's and the 0x20-bearing ones' first, in the cache
// line of the common families' (0x0x-0x5x).
type laneSet [18]*Lane

// Indexes in a laneSet: every update's lane, the 0x20-bearing ones', and
// family f's (slotOf).
const (
	slotAll        = 0
	slotSubsystems = 1
)

func slotOf(f Family) int { return int(f) + 2 }

// Pseudo families: every update of the lane, and the updates carrying
// subsystems (0x20 set: 0x2x, 0x3x, 0x6x, ...), the stream the published
// downstream cadence is of.
const (
	familyAll        = 16
	familySubsystems = 17
)

// Names of the pseudo families.
const (
	FamilyAll        = "all"
	FamilySubsystems = "0x20-bearing"
)

type clientKey struct{ server, client netip.AddrPort }

// serverState is a server's: its id (in the order servers came) and the
// count of its clients in the game and not gone, which setState keeps.
type serverState struct {
	id      int32
	playing int
}

// clientState is one (server, client) flow's: whether the client is in
// the game, its server, the lane sets of its recent ships. A flow's state
// is kept for the whole capture (relay entries name it by id).
type clientState struct {
	key clientKey
	// id numbers the flows in the order they came: their bit in
	// pending.sentBits, and part of their ships' keys.
	id           int32
	inGame, gone bool
	srv          *serverState
	// ships holds, per direction, lane sets of recently updated ships by
	// shipSlot (a flow's updates go round its ships, one for a client's
	// own): most updates skip Builder.ships.
	ships [2][8]shipSet
}

// shipSlot is an object's entry in clientState.ships: player ships' ids
// differ in their owner's slot, from bit 18 on.
func shipSlot(obj game.ObjectID) int { return int(obj>>18^obj) & 7 }

// shipSet is a ship's lane set, with the object it is of, and the lanes
// its last update counted in when it was of family fam and each of them
// counted it (f its family's, a every update's, s the 0x20-bearing one
// when fam carries subsystems): an update of the same family next has
// one interval for all of them (f nil: no such lanes). Those updates
// count in f alone at first: n of them are yet to count in a and s,
// whose last time is f's until sync.
type shipSet struct {
	obj     game.ObjectID
	fam     Family
	n       int32
	set     *laneSet
	f, a, s *Lane
}

// sync counts the updates the ship's family lane took alone in its
// every-update and 0x20-bearing lanes, and gives them its last time.
func (r *shipSet) sync() {
	if r.f == nil || r.n == 0 {
		return
	}
	n := int(r.n)
	r.n = 0
	r.a.updates += n
	r.a.last = r.f.last
	if r.s != nil {
		r.s.updates += n
		r.s.last = r.f.last
	}
}

// shipKey is a ship's laneSet's key in Builder.ships: the flow, the object
// and the direction index, mixed (a one-to-one mixing: keys stay
// distinct) so that the table's low bits spread.
func shipKey(cs *clientState, obj game.ObjectID, dir int) uint64 {
	k := (uint64(cs.id)<<32|uint64(obj))<<1 | uint64(dir)
	k *= 0x9E3779B97F4A7C15
	return k ^ k>>32
}

// maxEpochs bounds Builder.byEpoch: connections past it (a capture of
// months) find their flow by the cache.
const maxEpochs = 1 << 14

// clientCacheSize is the number of flows Builder.cache holds (a power of
// two).
const clientCacheSize = 64

// cacheSlot is a flow's entry in Builder.cache, by its ports: the clients
// of a server tell apart by port unless they share one.
func cacheSlot(server, client netip.AddrPort) int {
	h := (uint32(client.Port())<<16 | uint32(server.Port())) * 0x9E3779B1
	return int(h >> 26 & (clientCacheSize - 1))
}

// bundling counts the datagrams of one direction by their messages.
type bundling struct {
	counts        []int // by messages in the datagram
	n, sum        int
	max, maxFrame int
}

// Builder computes Measures from flow records. Feed every record to Add,
// then call Finish.
type Builder struct {
	// (What Add reads on every record first, in a few cache lines: the
	// flow's index, the datagram counts, the relay queue's fields. In the
	// order of the struct's other fields they lay some 5 KB apart, and
	// the datagram counts' line took a sixth of Add's CPU samples on
	// obc200.pcap.)
	// byEpoch holds the flows by flow.Record.Epoch, from epoch0 on: a
	// connection's number names one flow for good (an Epoch is never
	// handed out twice in the process), and Epochs are dense, so most
	// records find their flow by an index. cache (below) holds recently seen
	// flows by cacheSlot for the others: they skip clients' map lookup
	// (its key is 64 bytes to hash).
	byEpoch []*clientState
	epoch0  uint32
	// anyOpen is len(open) > 0, which every record asks: a field load
	// where a map's length is a few.
	anyOpen  bool
	bundling [2]bundling
	relay    relays

	lanes        []*Lane
	ships        table[laneSet] // by shipKey
	lanesDropped int
	cache        [clientCacheSize]*clientState
	// famNoLane counts, by direction and family, the StateUpdates no
	// family lane counted (its lane was not kept); Finish adds the family
	// lanes' counts to make the flag-family mix (counting each update
	// there as well cost its stateUpdate a few instructions).
	famNoLane [2][16]int
	bytes     [2]ByteHistogram
	clients   map[clientKey]*clientState
	servers   map[netip.AddrPort]*serverState
	ids       map[int]*IDRange
	deaths    []*Death
	open      map[netip.AddrPort]*Death
}

// NewBuilder returns an empty Builder.
func NewBuilder() *Builder {
	return &Builder{clients: map[clientKey]*clientState{}, servers: map[netip.AddrPort]*serverState{},
		relay: relays{keepAll: true, buckets: make([]int64, minBuckets)}, ids: map[int]*IDRange{}, open: map[netip.AddrPort]*Death{}}
}

// Add takes one record; it is not retained.
func (b *Builder) Add(r *flow.Record) {
	tm := r.Msg
	if r.Kind != flow.KindMessage || tm == nil || !r.Server.IsValid() || !r.Client.IsValid() {
		return
	}
	if r.MsgIndex == 0 && r.MsgCount > 0 {
		b.countDatagram(dirIndex(r.Dir), r.MsgCount, r.Frame)
	}
	now := wallclock.Of(r.Time)
	if b.relay.due(now) {
		b.relay.expire(now)
	}
	g := r.Game
	if g == nil || g.Msg == nil || g.Err != nil {
		// Most are ACKs: only a disconnect needs the flow.
		if tm.Type == dissect.TypeDisconnect || b.anyOpen {
			b.other(r)
		}
		return
	}
	var cs *clientState // flowOf, inline
	if i := r.Epoch - b.epoch0; i < uint32(len(b.byEpoch)) {
		cs = b.byEpoch[i]
	}
	if cs == nil {
		cs = b.flowFar(r)
	}
	if m, ok := g.Msg.(*game.StateUpdate); ok {
		// Most game messages are StateUpdates.
		d := dirIndex(r.Dir)
		if r.Dir == game.ClientToServer && !cs.inGame {
			cs.setState(true, cs.gone)
		}
		b.stateUpdate(cs, m, d, now)
		if m.Flags&game.StateSubsystems != 0 && r.Reassembled == 0 {
			b.subsystemBytes(&b.bytes[d], m.Flags, tm.Payload)
		}
		if b.anyOpen {
			b.deathStep(r, m)
		}
		if r.Reassembled != 0 || len(tm.Payload) == 0 {
			return
		}
		// Hashed here: session's relay rule leaves StateUpdates out, so
		// no other consumer has asked for the record's payload hash.
		if h := flow.MessageHash(tm.Payload); r.Dir != game.ServerToClient {
			b.relay.sent(cs, game.OpStateUpdate, h, now)
		} else {
			b.relay.received(cs, h)
		}
		return
	}
	b.game(r, cs, now)
}

// other takes a record that carries no game message (Add's caller when it
// is a disconnect or a death sequence is open).
func (b *Builder) other(r *flow.Record) {
	if r.Msg.Type == dissect.TypeDisconnect {
		cs := b.flowOf(r)
		cs.setState(cs.inGame, true)
	}
	if b.anyOpen {
		b.deathStep(r, nil)
	}
}

// game takes a game message other than a StateUpdate on flow cs.
func (b *Builder) game(r *flow.Record, cs *clientState, now wallclock.Time) {
	msg := r.Game.Msg
	switch m := msg.(type) {
	case *game.ObjCreate:
		b.id(m.Object)
	case *game.NewPlayerInGame:
		cs.setState(true, cs.gone)
	case *game.PythonEvent:
		if m.Code == game.ETObjectExploding && r.Dir == game.ServerToClient {
			b.death(r, m.Source)
		}
	}
	if b.anyOpen {
		b.deathStep(r, msg)
	}
	b.relayed(r, cs, msg.Opcode(), now)
}

// relayed takes a game message of opcode op on flow cs into the relay
// matrix: a client's is remembered, a copy to a client matched.
// Reassembled messages (checksum trees, ship creation) are not counted.
func (b *Builder) relayed(r *flow.Record, cs *clientState, op game.Opcode, now wallclock.Time) {
	if r.Reassembled != 0 || len(r.Msg.Payload) == 0 {
		return
	}
	if h := messageHash(r); r.Dir != game.ServerToClient {
		b.relay.sent(cs, op, h, now)
	} else {
		b.relay.received(cs, h)
	}
}

// messageHash is the hash of the message r carries (its payload, opcode
// first): the record's own payload hash, computed once for every
// consumer, which is the message's when it is not reassembled.
func messageHash(r *flow.Record) uint64 {
	if p := r.Msg.Payload; len(r.Payload) != len(p) || len(p) == 0 || &r.Payload[0] != &p[0] {
		return flow.MessageHash(p) // a record built by hand
	}
	return r.PayloadHash()
}

// countDatagram counts a datagram of n messages in direction d.
func (b *Builder) countDatagram(d, n, frame int) {
	bu := &b.bundling[d&1]
	bu.n++
	bu.sum += n
	if n >= len(bu.counts) {
		bu.grow(n)
	}
	bu.counts[n]++
	if n > bu.max {
		bu.max, bu.maxFrame = n, frame
	}
}

// grow makes room to count datagrams of n messages.
func (bu *bundling) grow(n int) {
	bu.counts = append(bu.counts, make([]int, n+1-len(bu.counts))...)
}

// flowOf is the state of r's flow: by its Epoch, or from the cache by
// its ports, or by its addresses.
func (b *Builder) flowOf(r *flow.Record) *clientState {
	if i := r.Epoch - b.epoch0; i < uint32(len(b.byEpoch)) {
		if cs := b.byEpoch[i]; cs != nil {
			return cs
		}
	}
	return b.flowFar(r)
}

// flowFar is flowOf's slower part: the flow by the cache or its
// addresses, noted by its Epoch when that falls in byEpoch's range.
func (b *Builder) flowFar(r *flow.Record) *clientState {
	cs := b.cache[cacheSlot(r.Server, r.Client)]
	if cs == nil || cs.key.client != r.Client || cs.key.server != r.Server {
		cs = b.client(r.Server, r.Client)
	}
	e := r.Epoch
	if e == 0 {
		return cs
	}
	if len(b.byEpoch) == 0 {
		b.epoch0 = e
	}
	if i := e - b.epoch0; i < maxEpochs {
		if int(i) >= len(b.byEpoch) {
			b.byEpoch = append(b.byEpoch, make([]*clientState, int(i)+1-len(b.byEpoch))...)
		}
		b.byEpoch[i] = cs
	}
	return cs
}

// client is the state of a flow, made on its first record, and caches it.
func (b *Builder) client(server, client netip.AddrPort) *clientState {
	ck := clientKey{server, client}
	cs := b.clients[ck]
	if cs == nil {
		srv := b.servers[server]
		if srv == nil {
			srv = &serverState{id: int32(len(b.servers))}
			b.servers[server] = srv
		}
		cs = &clientState{key: ck, id: int32(len(b.clients)), srv: srv}
		b.clients[ck] = cs
	}
	b.cache[cacheSlot(server, client)] = cs
	return cs
}

// setState changes a client's state, keeping its server's count of
// clients in the game.
func (cs *clientState) setState(inGame, gone bool) {
	was := cs.inGame && !cs.gone
	cs.inGame, cs.gone = inGame, gone
	now := cs.inGame && !cs.gone
	switch {
	case now && !was:
		cs.srv.playing++
	case was && !now:
		cs.srv.playing--
	}
}

// stateUpdate counts a StateUpdate of direction d on flow cs in its
// ship's lanes: its family's, every update's and, when it carries
// subsystems, the 0x20-bearing one.
func (b *Builder) stateUpdate(cs *clientState, m *game.StateUpdate, d int, now wallclock.Time) {
	fam := FamilyOf(m.Flags)
	recent := &cs.ships[d&1][shipSlot(m.Object)]
	f := recent.f
	if f == nil || recent.obj != m.Object || recent.fam != fam {
		b.stateUpdateSlow(recent, cs, m, d, now)
		return
	}
	// The usual case: the ship's last update was of this family, and its
	// lanes all counted it, so one interval, counted once (Lane.sh).
	iv, ok := now.SubNear(f.last)
	if !ok {
		iv = now.Sub(f.last)
	}
	f.updates++
	f.last = now
	recent.n++ // a's and s's count (sync)
	if !f.sh.addNear(iv) {
		sharedFar(f, recent.a, recent.s, iv)
	}
}

// sharedFar counts an interval shared by lanes f, a and s (nil when
// none) that f's shared window does not take: the window starts there
// when it has none, else each lane counts it apart.
func sharedFar(f, a, s *Lane, iv time.Duration) {
	if f.sh.place(iv) {
		f.sh.addNear(iv)
		return
	}
	f.iv.add(iv)
	a.iv.add(iv)
	if s != nil {
		s.iv.add(iv)
	}
}

// stateUpdateSlow is stateUpdate when the ship's last update was of
// another family, or is not at hand in recent: each lane counts the
// update by its own last time, and recent notes the lanes for the next.
func (b *Builder) stateUpdateSlow(recent *shipSet, cs *clientState, m *game.StateUpdate, d int, now wallclock.Time) {
	fam := FamilyOf(m.Flags)
	recent.sync()
	set := recent.set
	if set == nil || recent.obj != m.Object {
		if set = b.laneSet(cs, m, d); set == nil {
			b.famNoLane[d&1][fam&15]++
			return
		}
		*recent = shipSet{obj: m.Object, set: set}
	}
	b.eachLane(set, cs, m, d, now)
	f, a, s := set[slotOf(fam)], set[slotAll], (*Lane)(nil)
	if m.Flags&game.StateSubsystems != 0 {
		if s = set[slotSubsystems]; s == nil {
			f = nil // not kept: the next update's lanes are not all at hand
		}
	}
	if a == nil {
		f = nil
	}
	recent.fam, recent.n, recent.f, recent.a, recent.s = fam, 0, f, a, s
}

// laneSet is the lane set of m's ship on flow cs in direction d, made on
// its first update (noting the object's id); nil, with the update's lanes
// counted as dropped, when maxLanes are kept.
func (b *Builder) laneSet(cs *clientState, m *game.StateUpdate, d int) *laneSet {
	k := shipKey(cs, m.Object, d)
	i := b.ships.find(k)
	set := b.ships.slots[i].v
	if set == nil && len(b.lanes) >= maxLanes {
		b.lanesDropped += 2 + int(m.Flags&game.StateSubsystems>>5)
		return nil
	}
	if set == nil {
		set = &laneSet{}
		b.ships.insert(i, k, set)
		b.id(m.Object)
	}
	return set
}

// eachLane counts an update in the lanes of its ship, each by its own
// last time, making those it has not yet.
func (b *Builder) eachLane(set *laneSet, cs *clientState, m *game.StateUpdate, d int, now wallclock.Time) {
	fam := FamilyOf(m.Flags)
	if l := set[slotOf(fam)]; l != nil {
		l.count(now)
	} else {
		b.newLane(&set[slotOf(fam)], cs, m.Object, d, int(fam), now)
		if set[slotOf(fam)] == nil {
			b.famNoLane[d&1][fam&15]++
		}
	}
	if l := set[slotAll]; l != nil {
		l.count(now)
	} else {
		b.newLane(&set[slotAll], cs, m.Object, d, familyAll, now)
	}
	if m.Flags&game.StateSubsystems == 0 {
		return
	}
	if l := set[slotSubsystems]; l != nil {
		l.count(now)
	} else {
		b.newLane(&set[slotSubsystems], cs, m.Object, d, familySubsystems, now)
	}
}

// count counts an update at t in the lane (not its first).
func (l *Lane) count(t wallclock.Time) {
	iv, ok := t.SubNear(l.last)
	if !ok {
		iv = t.Sub(l.last)
	}
	l.updates++
	l.last = t
	l.iv.count(iv)
}

// newLane makes the lane of *slot on its first update, or counts the
// update as dropped when maxLanes are kept.
func (b *Builder) newLane(slot **Lane, cs *clientState, obj game.ObjectID, d, fam int, t wallclock.Time) {
	if len(b.lanes) >= maxLanes {
		b.lanesDropped++
		return
	}
	name := Family(fam).String()
	switch fam {
	case familyAll:
		name = FamilyAll
	case familySubsystems:
		name = FamilySubsystems
	}
	l := &Lane{Object: obj, Dir: Dirs[d], Family: name, To: cs.key.client.String(), updates: 1, last: t, fam: uint8(fam), dir: uint8(d & 1)}
	*slot = l
	b.lanes = append(b.lanes, l)
}

func (b *Builder) id(id game.ObjectID) {
	slot := id.Slot()
	r := b.ids[slot]
	if r == nil {
		r = &IDRange{Slot: slot, MinOffset: 1 << 40, MaxOffset: -1 << 40, seen: map[game.ObjectID]bool{}}
		if slot >= 0 {
			r.Base = game.PlayerObjectID(slot)
		}
		b.ids[slot] = r
	}
	if r.seen[id] {
		return
	}
	if len(r.seen) >= maxIDs {
		r.Dropped++
		return
	}
	r.seen[id] = true
	r.Objects++
	off := int64(id) - int64(r.Base)
	r.MinOffset, r.MaxOffset = min(r.MinOffset, off), max(r.MaxOffset, off)
}

// death opens a death sequence on the first client told of the object's
// explosion.
func (b *Builder) death(r *flow.Record, obj game.ObjectID) {
	for _, d := range b.deaths {
		if d.Object == obj && r.Time.Sub(d.at) < deathWindow {
			return // the same explosion told to another client
		}
	}
	if len(b.deaths) >= maxDeaths {
		return
	}
	d := &Death{Object: obj, Client: r.Client.String(), Frame: r.Frame, at: r.Time, until: r.Time.Add(deathWindow)}
	b.deaths = append(b.deaths, d)
	b.open[r.Client] = d
	b.anyOpen = true
}

// deathStep adds a record to the open death sequence of its client.
func (b *Builder) deathStep(r *flow.Record, msg game.Message) {
	d := b.open[r.Client]
	if d == nil {
		return
	}
	if r.Time.After(d.until) || len(d.Steps) >= maxDeathSteps {
		delete(b.open, r.Client)
		b.anyOpen = len(b.open) > 0
		return
	}
	var name string
	switch {
	case msg == nil && r.Msg.Type == dissect.TypeAck:
		return
	case msg == nil:
		name = r.Msg.Type.String()
	case msg.Opcode() == game.OpStateUpdate:
		return // the stream goes on; not part of the sequence
	default:
		name = msg.Opcode().String()
		if pe, ok := msg.(*game.PythonEvent); ok {
			name += " " + pe.Code.String()
		}
	}
	d.Steps = append(d.Steps, DeathStep{OffsetMS: float64(r.Time.Sub(d.at).Microseconds()) / 1000, Dir: r.Dir.String(), Message: name})
}

// subsystemBytes counts the bytes of a StateUpdate's subsystem block:
// what follows the fixed fields and the start index (payload holds the
// opcode byte first).
func (b *Builder) subsystemBytes(h *ByteHistogram, f game.StateFlags, payload []byte) {
	if f&(game.StatePosition|game.StateCloak) != 0 {
		h.Unaligned++ // a packed bit comes first: the block is not byte-aligned
		return
	}
	// Opcode, object, game time, flags; the start index; then the fields
	// the flags carry: delta 5 bytes, forward 3, up 3, speed 2.
	off := 1 + 9 + 1 + 5*b2i(f&game.StateDelta != 0) + 3*b2i(f&game.StateForward != 0) +
		3*b2i(f&game.StateUp != 0) + 2*b2i(f&game.StateSpeed != 0)
	if off > len(payload) {
		return
	}
	h.Blocks++
	for _, c := range payload[off:] {
		h.Counts[c]++
	}
	h.Bytes += len(payload) - off
}
