package measure

// The Builder as it was before it was made cheaper (commit 86c84ef), kept
// as the reference FuzzBuilderMatchesReference holds the Builder to: the
// same records must give the same measures.

import (
	"fmt"
	"hash/maphash"
	"net/netip"
	"slices"
	"sort"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
)

// refLane is a Lane with the reference's interval state.
type refLane struct {
	*Lane
	iv   refHistogram
	last time.Time
}

// refShipKey is one ship's StateUpdates one way on one client's flow (the
// flow's refClientState holds its laneSets); a refLaneSet holds a lane per
// family (0-15, familyAll, familySubsystems).
type refShipKey struct {
	obj game.ObjectID
	dir int
}

type refLaneSet [18]*refLane

type refClientState struct {
	inGame, gone bool
	client       netip.AddrPort
	ships        map[refShipKey]*refLaneSet
}

type refPending struct {
	key    uint64 // the payload's hash: its key in refBuilder.recent
	from   clientKey
	at     time.Time
	row    *RelayRow
	sentTo []netip.AddrPort // the clients a copy went to
}

// refBuilder computes Measures from flow records. Feed every record to Add,
// then call Finish.
type refBuilder struct {
	lanes        []*refLane
	lastShip     refShipKey
	lastSet      *refLaneSet
	lastShipCS   *refClientState
	lanesDropped int
	full         refLaneSet // stands in for new ships once maxLanes are kept
	lastCK       clientKey
	lastCS       *refClientState
	families     [2][16]int
	bytes        [2]ByteHistogram
	bundling     [2]struct {
		counts        map[int]int
		n, sum        int
		max, maxFrame int
	}
	clients map[clientKey]*refClientState
	inGame  map[netip.AddrPort]int // per server, clients in the game and not gone
	relay   [256]*RelayRow
	recent  map[uint64][]*refPending // by payload hash (maphash: collisions are negligible)
	seed    maphash.Seed
	free    []*refPending
	queue   []*refPending
	ids     map[int]*IDRange
	deaths  []*Death
	open    map[netip.AddrPort]*Death
}

// newRefBuilder returns an empty refBuilder.
func newRefBuilder() *refBuilder {
	b := &refBuilder{clients: map[clientKey]*refClientState{}, inGame: map[netip.AddrPort]int{},
		recent: map[uint64][]*refPending{}, seed: maphash.MakeSeed(), ids: map[int]*IDRange{}, open: map[netip.AddrPort]*Death{}}
	for d := range b.bundling {
		b.bundling[d].counts = map[int]int{}
	}
	return b
}

// Add takes one record; it is not retained.
func (b *refBuilder) Add(r *flow.Record) {
	if r.Kind != flow.KindMessage || r.Msg == nil || !r.Server.IsValid() || !r.Client.IsValid() {
		return
	}
	d := dirIndex(r.Dir)
	if r.MsgIndex == 0 && r.MsgCount > 0 {
		bu := &b.bundling[d]
		bu.n++
		bu.sum += r.MsgCount
		bu.counts[r.MsgCount]++
		if r.MsgCount > bu.max {
			bu.max, bu.maxFrame = r.MsgCount, r.Frame
		}
	}
	ck := clientKey{r.Server, r.Client}
	cs := b.lastCS
	if cs == nil || ck != b.lastCK {
		cs = b.clients[ck]
		b.lastCK = ck
	}
	if cs == nil {
		cs = &refClientState{client: r.Client, ships: map[refShipKey]*refLaneSet{}}
		b.clients[ck] = cs
	}
	b.lastCS = cs
	if r.Msg.Type == dissect.TypeDisconnect {
		b.setState(r.Server, cs, cs.inGame, true)
	}
	b.expire(r.Time)
	if r.Game == nil || r.Game.Msg == nil || r.Game.Err != nil {
		b.deathStep(r, nil)
		return
	}
	msg := r.Game.Msg
	op := msg.Opcode()
	switch m := msg.(type) {
	case *game.StateUpdate:
		if r.Dir == game.ClientToServer && !cs.inGame {
			b.setState(r.Server, cs, true, cs.gone)
		}
		set := b.refLaneSet(cs, refShipKey{m.Object, d})
		b.lane(&set[FamilyOf(m.Flags)], set, int(FamilyOf(m.Flags)), r.Time)
		b.lane(&set[familyAll], set, familyAll, r.Time)
		if m.Flags&game.StateSubsystems != 0 {
			b.lane(&set[familySubsystems], set, familySubsystems, r.Time)
		}
		b.families[d][FamilyOf(m.Flags)]++
		if m.Flags&game.StateSubsystems != 0 && r.Reassembled == 0 {
			b.subsystemBytes(&b.bytes[d], m.Flags, r.Msg.Payload)
		}
	case *game.ObjCreate:
		b.id(m.Object)
	case *game.NewPlayerInGame:
		b.setState(r.Server, cs, true, cs.gone)
	case *game.PythonEvent:
		if m.Code == game.ETObjectExploding && r.Dir == game.ServerToClient {
			b.death(r, m.Source)
		}
	}
	b.deathStep(r, msg)
	payload := r.Msg.Payload
	if r.Reassembled != 0 || len(payload) == 0 {
		return // reassembled messages (checksum trees, ship creation) are not counted
	}
	if r.Dir == game.ClientToServer {
		row := b.relay[op]
		if row == nil {
			row = &RelayRow{Opcode: op.String(), op: op}
			b.relay[op] = row
		}
		row.Messages++
		others := b.inGame[r.Server]
		if cs.inGame && !cs.gone {
			others-- // the sender itself
		}
		row.Expected += others
		key := maphash.Bytes(b.seed, payload)
		p := b.newPending()
		p.key, p.from, p.at, p.row = key, ck, r.Time, row
		b.recent[key] = append(b.recent[key], p)
		b.queue = append(b.queue, p)
		return
	}
	// A message to a client: the copy of the oldest identical client
	// message not yet sent to it.
	for _, p := range b.recent[maphash.Bytes(b.seed, payload)] {
		if p.from.server != r.Server || slices.Contains(p.sentTo, r.Client) {
			continue
		}
		p.sentTo = append(p.sentTo, r.Client)
		if p.from.client == r.Client {
			p.row.ToSender++
		} else {
			p.row.ToOthers++
		}
		break
	}
}

// newPending is a refPending entry, reused when one has expired.
func (b *refBuilder) newPending() *refPending {
	if n := len(b.free); n > 0 {
		p := b.free[n-1]
		b.free = b.free[:n-1]
		return p
	}
	return &refPending{}
}

// setState changes a client's state, keeping its server's count of
// clients in the game.
func (b *refBuilder) setState(server netip.AddrPort, cs *refClientState, inGame, gone bool) {
	was := cs.inGame && !cs.gone
	cs.inGame, cs.gone = inGame, gone
	now := cs.inGame && !cs.gone
	switch {
	case now && !was:
		b.inGame[server]++
	case was && !now:
		b.inGame[server]--
	}
}

func (b *refBuilder) expire(now time.Time) {
	n := 0
	for n < len(b.queue) && now.Sub(b.queue[n].at) > Window {
		n++
	}
	if n == 0 {
		return
	}
	for _, p := range b.queue[:n] {
		// Entries of one key expire oldest first: p is the head of its list.
		if ps := b.recent[p.key]; len(ps) > 0 && ps[0] == p {
			if len(ps) == 1 {
				delete(b.recent, p.key)
			} else {
				b.recent[p.key] = ps[1:]
			}
		}
	}
	for _, p := range b.queue[:n] {
		p.sentTo, p.row = p.sentTo[:0], nil
		b.free = append(b.free, p)
	}
	b.queue = append(b.queue[:0], b.queue[n:]...)
}

// refLaneSet is the lanes of one ship on one flow (the last one asked is kept
// at hand: a flow's updates come in runs). A new set notes the object's id.
func (b *refBuilder) refLaneSet(cs *refClientState, k refShipKey) *refLaneSet {
	if b.lastSet != nil && k == b.lastShip && cs == b.lastShipCS {
		return b.lastSet
	}
	set := cs.ships[k]
	if set == nil && len(b.lanes) >= maxLanes {
		return &b.full // no room: its empty slots count the updates as dropped
	}
	if set == nil {
		set = &refLaneSet{}
		cs.ships[k] = set
		b.id(k.obj)
	}
	b.lastShip, b.lastShipCS, b.lastSet = k, cs, set
	return set
}

// lane counts one update in *slot, the lane of family fam in set.
func (b *refBuilder) lane(slot **refLane, set *refLaneSet, fam int, t time.Time) {
	l := *slot
	if l == nil && len(b.lanes) >= maxLanes {
		b.lanesDropped++
		return
	}
	if l == nil {
		name := Family(fam).String()
		switch fam {
		case familyAll:
			name = FamilyAll
		case familySubsystems:
			name = FamilySubsystems
		}
		k := b.lastShip
		l = &refLane{Lane: &Lane{Object: k.obj, Dir: Dirs[k.dir], Family: name, To: b.lastShipCS.client.String()}}
		*slot = l
		b.lanes = append(b.lanes, l)
	} else {
		l.iv.add(t.Sub(l.last))
	}
	l.Updates++
	l.last = t
}

func (b *refBuilder) id(id game.ObjectID) {
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
func (b *refBuilder) death(r *flow.Record, obj game.ObjectID) {
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
}

// deathStep adds a record to the open death sequence of its client.
func (b *refBuilder) deathStep(r *flow.Record, msg game.Message) {
	d := b.open[r.Client]
	if d == nil {
		return
	}
	if r.Time.After(d.until) || len(d.Steps) >= maxDeathSteps {
		delete(b.open, r.Client)
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
func (b *refBuilder) subsystemBytes(h *ByteHistogram, f game.StateFlags, payload []byte) {
	if f&(game.StatePosition|game.StateCloak) != 0 {
		h.Unaligned++ // a packed bit comes first: the block is not byte-aligned
		return
	}
	off := 1 + 9 + 1 // opcode, object, game time, flags; the start index
	for _, x := range []struct {
		flag game.StateFlags
		size int
	}{{game.StateDelta, 5}, {game.StateForward, 3}, {game.StateUp, 3}, {game.StateSpeed, 2}} {
		if f&x.flag != 0 {
			off += x.size
		}
	}
	if off > len(payload) {
		return
	}
	h.Blocks++
	for _, c := range payload[off:] {
		h.Counts[c]++
	}
	h.Bytes += len(payload) - off
}

// Finish computes the figures.
func (b *refBuilder) Finish() *Measures {
	m := &Measures{FlagFamilies: map[string]map[string]int{}}
	pool := map[[2]string]*struct {
		h     refHistogram
		lanes int
	}{}
	for _, l := range b.lanes {
		l.MeanMS, l.P50MS, l.P90MS = round3(l.iv.meanMS()), l.iv.quantile(0.5), l.iv.quantile(0.9)
		m.Lanes = append(m.Lanes, l.Lane)
		if l.iv.cnt == 0 {
			continue
		}
		k := [2]string{l.Dir, l.Family}
		p := pool[k]
		if p == nil {
			p = &struct {
				h     refHistogram
				lanes int
			}{}
			pool[k] = p
		}
		p.h.merge(&l.iv)
		p.lanes++
	}
	sortLanes(m.Lanes)
	for k, p := range pool {
		m.Cadence = append(m.Cadence, Cadence{Dir: k[0], Family: k[1], Lanes: p.lanes, Intervals: p.h.cnt,
			MeanMS: round3(p.h.meanMS()), P50MS: p.h.quantile(0.5), P90MS: p.h.quantile(0.9)})
	}
	sort.Slice(m.Cadence, func(i, j int) bool {
		a, c := m.Cadence[i], m.Cadence[j]
		if a.Dir != c.Dir {
			return a.Dir < c.Dir
		}
		return a.Family < c.Family
	})
	for d := range b.bytes {
		m.SubsystemBytes[d] = b.bytes[d]
		m.SubsystemBytes[d].Dir = Dirs[d]
	}
	for d := range b.families {
		fm := map[string]int{}
		for f, n := range b.families[d] {
			if n > 0 {
				fm[Family(f).String()] = n
			}
		}
		m.FlagFamilies[Dirs[d]] = fm
	}
	for d := range b.bundling {
		bu := &b.bundling[d]
		out := Bundling{Dir: Dirs[d], Datagrams: bu.n, Max: bu.max, MaxFrame: bu.maxFrame, Counts: bu.counts}
		if bu.n > 0 {
			out.Mean = round3(float64(bu.sum) / float64(bu.n))
			out.P90 = refCountQuantile(bu.counts, bu.n, 0.9)
		}
		m.Bundling[d] = out
	}
	for _, row := range b.relay {
		if row == nil {
			continue
		}
		row.Shares = fmt.Sprintf("sender %.0f%%, others %.0f%%", pct(row.ToSender, row.Messages), pct(row.ToOthers, row.Expected))
		m.Relay = append(m.Relay, row)
	}
	for _, r := range b.ids {
		m.ObjectIDs = append(m.ObjectIDs, r)
	}
	sort.Slice(m.ObjectIDs, func(i, j int) bool { return m.ObjectIDs[i].Slot < m.ObjectIDs[j].Slot })
	m.Deaths = b.deaths
	m.LanesDropped = b.lanesDropped
	// Empty lists, not null, for programs reading the JSON.
	nonNil(&m.Lanes)
	nonNil(&m.Cadence)
	nonNil(&m.Relay)
	nonNil(&m.ObjectIDs)
	nonNil(&m.Deaths)
	return m
}

func refCountQuantile(counts map[int]int, n int, p float64) int {
	keys := make([]int, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Ints(keys)
	rank := max(1, int(p*float64(n)+0.5))
	seen := 0
	for _, k := range keys {
		seen += counts[k]
		if seen >= rank {
			return k
		}
	}
	return 0
}

// refHistogram counts intervals at millisecond resolution, sparsely: a lane's
// intervals cluster around its period, so a few dozen buckets hold them.
type refHistogram struct {
	ms   []uint32 // bucket (whole milliseconds), ascending
	n    []uint32
	last int // the bucket added to last: a lane's intervals repeat
	sum  time.Duration
	cnt  int
}

func (h *refHistogram) add(d time.Duration) {
	if d < 0 {
		return
	}
	h.sum += d
	h.cnt++
	k := uint32(min(d/time.Millisecond, 1<<31))
	if h.last < len(h.ms) && h.ms[h.last] == k {
		h.n[h.last]++
		return
	}
	i := sort.Search(len(h.ms), func(i int) bool { return h.ms[i] >= k })
	h.last = i
	if i < len(h.ms) && h.ms[i] == k {
		h.n[i]++
		return
	}
	h.ms = append(h.ms, 0)
	h.n = append(h.n, 0)
	copy(h.ms[i+1:], h.ms[i:])
	copy(h.n[i+1:], h.n[i:])
	h.ms[i], h.n[i] = k, 1
}

func (h *refHistogram) merge(o *refHistogram) {
	for i, k := range o.ms {
		for j := uint32(0); j < o.n[i]; j++ {
			h.add(time.Duration(k) * time.Millisecond)
		}
	}
	// add counted the bucket floors: keep the exact sum instead
	h.sum += o.sum - refSumFloors(o)
}

func refSumFloors(h *refHistogram) time.Duration {
	var s time.Duration
	for i, k := range h.ms {
		s += time.Duration(k) * time.Millisecond * time.Duration(h.n[i])
	}
	return s
}

// quantile is the nearest-rank p quantile in milliseconds (the bucket's
// floor), 0 when empty.
func (h *refHistogram) quantile(p float64) float64 {
	if h.cnt == 0 {
		return 0
	}
	rank := int(p*float64(h.cnt) + 0.5)
	rank = max(1, min(rank, h.cnt))
	seen := 0
	for i, k := range h.ms {
		seen += int(h.n[i])
		if seen >= rank {
			return float64(k)
		}
	}
	return float64(h.ms[len(h.ms)-1])
}

func (h *refHistogram) meanMS() float64 {
	if h.cnt == 0 {
		return 0
	}
	return float64(h.sum.Microseconds()) / 1000 / float64(h.cnt)
}
