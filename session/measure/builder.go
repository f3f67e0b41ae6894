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
	// ships holds, per direction, lane sets of recently updated ships by
	// shipSlot (a flow's updates go round its ships, one for a client's
	// own): most updates skip Builder.ships. (First: a shipSet is 64
	// bytes, and the struct's size class a multiple of 64, so each entry
	// is one cache line.)
	ships [2][8]shipSet
	key   clientKey
	// id numbers the flows in the order they came: their bit in
	// pending.sentBits, and part of their ships' keys.
	id           int32
	inGame, gone bool
	srv          *serverState
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
	counts        []int // by messages in the datagram, up to max
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
		relay: relays{keepUntil: keepNone, buckets: make([]int64, minBuckets)}, ids: map[int]*IDRange{}, open: map[netip.AddrPort]*Death{}}
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
		// Its lanes. The usual case, inline (a call costs the rest of Add
		// the values it saves around it and loads again): the ship's last
		// update was of this family, and its lanes all counted it, so one
		// interval, counted once, in the ship's cache entry and the
		// family lane's shared window (shipSet).
		recent := &cs.ships[d&1][shipSlot(m.Object)]
		if recent.f != nil && recent.obj == m.Object && recent.fam == FamilyOf(m.Flags) {
			iv, ok := now.SubNear(recent.last)
			if !ok {
				iv = now.Sub(recent.last)
			}
			if i := uint64(iv)/uint64(time.Millisecond) - uint64(recent.lo); i < winSize && recent.win != nil {
				recent.win[i]++
				recent.sum += iv
				recent.n++
				recent.last = now
			} else {
				recent.far(iv, now)
			}
		} else {
			b.stateUpdate(recent, cs, m, d, now)
		}
		if m.Flags&game.StateSubsystems != 0 && r.Reassembled == 0 {
			b.subsystemBytes(&b.bytes[d], m.Flags, tm.Payload)
		}
		if b.anyOpen {
			b.deathStep(r, m)
		}
		if r.Reassembled != 0 || len(tm.Payload) == 0 {
			return
		}
		// Hashed there (no other consumer asked for the record's hash).
		b.relay.take(cs, r.Dir, game.OpStateUpdate, 0, tm, now)
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
	b.relay.take(cs, r.Dir, op, messageHash(r), nil, now)
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

// countDatagram counts a datagram of n (> 0) messages in direction d.
// (Finish sums the counts to the datagrams and messages.)
func (b *Builder) countDatagram(d, n, frame int) {
	bu := &b.bundling[d&1]
	if n > bu.max {
		bu.newMax(n, frame)
	}
	bu.counts[n]++
}

// newMax makes room to count datagrams of n messages, more than any
// before, and notes the frame.
func (bu *bundling) newMax(n, frame int) {
	bu.counts = append(bu.counts, make([]int, n+1-len(bu.counts))...)
	bu.max, bu.maxFrame = n, frame
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
