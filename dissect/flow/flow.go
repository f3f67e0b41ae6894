// Package flow follows Bridge Commander traffic through a capture: it groups
// UDP datagrams into client/server flows, works out which endpoint is the
// server, decrypts each datagram, splits it into transport messages,
// reassembles fragmented game messages and decodes them. It emits one Record
// per transport message (or per GameSpy datagram, or per datagram that could
// not be split), in capture order, reusing a few Record values (one per
// datagram Run reads ahead) so that steady state allocates nothing.
package flow

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/game"
)

// DefaultPort is the stock server's game and GameSpy port.
const DefaultPort = 22101

// Kind says what a Record describes.
type Kind uint8

const (
	KindMessage Kind = iota // one transport message
	KindGameSpy             // one GameSpy datagram
	KindDamaged             // a datagram that could not be split (or the damaged rest of one)
	KindLost                // a fragmented message that never completed (reported at the end)
)

// Record is one line of dissection output. It and everything it points to
// are reused: copy what you keep.
type Record struct {
	Kind   Kind
	Frame  int // 1-based packet number in the capture
	Time   time.Time
	Src    netip.AddrPort
	Dst    netip.AddrPort
	Server netip.AddrPort // the flow's server endpoint
	Client netip.AddrPort // the flow's client endpoint
	Dir    game.Direction

	Peer     uint8 // datagram byte 0
	MsgIndex int   // index of the message within its datagram
	MsgCount int   // messages in the datagram

	Msg     *dissect.Message // KindMessage
	Control *dissect.Control // decoded payload of control messages (nil otherwise)

	// Game is set on the record that completes a game message: an unfragmented
	// type 0x32 message, or the last fragment of a reassembled one.
	Game        *game.Result
	Reassembled int // number of fragments the game message was rebuilt from (0 = not fragmented)

	// DuplicateFragment marks a fragment that was already held (a
	// retransmission); it adds nothing to reassembly.
	DuplicateFragment bool

	GameSpy *dissect.GameSpy // KindGameSpy
	// Master is set on the KindGameSpy records of the GameSpy master's TCP
	// list protocol (GameSpy then holds its text, empty for the list).
	Master *dissect.MasterMessage
	// TCP is the TCP segment the record's packet was (the GameSpy master's
	// list port); not Valid for UDP.
	TCP capture.TCPSegment

	Raw []byte // KindDamaged: the decrypted datagram
	// Datagram is the whole datagram the record came from, decrypted (as
	// received for GameSpy), for hex dumps (decode -x); like the record,
	// valid only during emit.
	Datagram []byte
	Err      error  // damage: framing error, lost fragments, a capture record that cannot be read
	Warning  string // odd but decodable content
	// NonStock is set on a message that is intact but not in stock's
	// form: a form of the registry (dissect.Forms), or unknown. It is
	// not damage. Like the record, valid only during emit.
	NonStock *dissect.NonStock
}

// Options tune a Tracker. The zero value is usable.
type Options struct {
	// Servers forces these endpoints to be treated as servers. Without it,
	// servers are found from the traffic: an endpoint that sends datagrams
	// with peer id 0x01, answers GameSpy queries, or uses port 22101.
	Servers []netip.AddrPort
	// MaxFragmentSets and MaxFragmentBytes cap unfinished reassembly; the
	// oldest set is evicted (and reported) first. Defaults 1024 and 4 MiB.
	MaxFragmentSets  int
	MaxFragmentBytes int
	// MaxFlows caps the client/server flows followed at once (default
	// 16384) and MaxServers the servers known at once, each with its game
	// decoder (default 1024); beyond them the oldest is forgotten and
	// counted. Forced servers are never forgotten.
	MaxFlows   int
	MaxServers int
}

// Default caps.
const (
	DefaultMaxFragmentSets  = 1024
	DefaultMaxFragmentBytes = 4 << 20
	DefaultMaxFlows         = 16384
	DefaultMaxServers       = 1024
)

// Stats counts what a Tracker saw.
type Stats struct {
	Datagrams        int // BC datagrams decoded
	GameSpy          int
	OtherUDP         int // UDP datagrams in flows not recognised as Bridge Commander
	Messages         int
	GameMessages     int
	Damaged          int // datagrams with a framing error
	GameErrors       int // game messages that fit no stock layout (non-stock, not damage)
	NonStock         int // messages marked non-stock (known forms and unknown)
	Warnings         int
	Reassembled      int // fragmented game messages completed
	DuplicateFrags   int
	FragmentsEvicted int // unfinished sets dropped to honour the caps
	FragmentsLost    int // sets never completed (reported by Finish)
	FlowsEvicted     int // flows forgotten to honour MaxFlows
	ServersEvicted   int // servers forgotten to honour MaxServers
	Servers          int
	Flows            int
}

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
// halves of its 16-byte form. lookup uses it only for IPv6 addresses (see
// there why).
func addrBits16(a netip.Addr) uint64 {
	v := a.As16()
	return binary.LittleEndian.Uint64(v[:8]) ^ binary.LittleEndian.Uint64(v[8:])
}

// fragKey names one fragmented message: its flow and connection (epoch),
// direction and sequence number.
type fragKey struct {
	flow  flowKey
	epoch uint32
	dir   game.Direction
	seq   uint16
}

// Tracker is the flow-following decoder. Feed it datagrams in capture order
// with Datagram, then call Finish.
type Tracker struct {
	opts     Options
	servers  map[netip.AddrPort]bool
	forced   map[netip.AddrPort]bool
	flows    map[flowKey]*flowState
	decoders map[netip.AddrPort]*game.Decoder
	frags    *dissect.Reassembler[fragKey]
	stats    Stats
	gen      uint32 // bumped whenever servers or flows change
	epochs   uint32 // flowState.epoch numbers handed out
	cache    [pairCacheSize]pairCache

	flowOrder   fifo[flowKey]        // creation order of flows, for eviction
	serverOrder fifo[netip.AddrPort] // order in which servers were learnt

	buf  []byte
	dg   dissect.Datagram
	rec  Record
	ctl  dissect.Control
	gs   dissect.GameSpy
	game game.Result
	ns   dissect.NonStock // the mark of transport and datagram-context forms

	master masterTracker // the GameSpy master's TCP connections
	names  dissect.Names
}

// New returns a Tracker.
func New(opts Options) *Tracker {
	if opts.MaxFragmentSets <= 0 {
		opts.MaxFragmentSets = DefaultMaxFragmentSets
	}
	if opts.MaxFragmentBytes <= 0 {
		opts.MaxFragmentBytes = DefaultMaxFragmentBytes
	}
	if opts.MaxFlows <= 0 {
		opts.MaxFlows = DefaultMaxFlows
	}
	if opts.MaxServers <= 0 {
		opts.MaxServers = DefaultMaxServers
	}
	t := &Tracker{
		opts:     opts,
		servers:  map[netip.AddrPort]bool{},
		forced:   map[netip.AddrPort]bool{},
		flows:    map[flowKey]*flowState{},
		decoders: map[netip.AddrPort]*game.Decoder{},
	}
	t.frags = dissect.NewReassembler[fragKey](opts.MaxFragmentSets, opts.MaxFragmentBytes)
	for _, s := range opts.Servers {
		t.forced[s] = true
		t.servers[s] = true
	}
	return t
}

// Stats returns the counts so far.
func (t *Tracker) Stats() Stats {
	s := t.stats
	s.Servers = len(t.servers)
	s.Flows = len(t.flows)
	return s
}

// IsServer reports whether ep has been identified as a server.
func (t *Tracker) IsServer(ep netip.AddrPort) bool { return t.servers[ep] }

// Datagram decodes one UDP payload and calls emit for each record. payload is
// not modified or retained.
func (t *Tracker) Datagram(frame int, ts time.Time, src, dst netip.AddrPort, payload []byte, emit func(*Record)) {
	r := &t.rec
	r.Frame, r.Time, r.Src, r.Dst, r.TCP = frame, ts, src, dst, capture.TCPSegment{}
	t.datagram(r, payload, &sink{until: func(r *Record) bool { emit(r); return true }})
}

// datagram is Datagram with the records going to out. r holds the
// datagram's frame, time and addresses, and is the record its records are
// built in.
func (t *Tracker) datagram(r *Record, payload []byte, out *sink) {
	if r.TCP.Valid || dissect.IsGameSpy(payload) {
		t.gamespy(r, payload, out)
		return
	}
	t.buf = grow(t.buf, len(payload))
	dissect.Decrypt(t.buf, payload)
	t.plain(r, t.buf, out)
}

// sink is where the Tracker's steps deliver records: to until, whose false
// stops the run (Run's emit as it is, Datagram's wrapped); records after
// that are still counted, but no longer delivered. put is inlined, so a
// record costs one call where a wrapping closure cost two.
type sink struct {
	until   func(*Record) bool
	stopped bool
	damage  int // records carrying an error, delivered or not
}

func (o *sink) put(r *Record) {
	if r.Err != nil {
		o.damage++
	}
	if !o.stopped && !o.until(r) {
		o.stopped = true
	}
}

// plain is Datagram after decryption: plain is the decrypted datagram, which
// must stay valid until plain returns.
func (t *Tracker) plain(r *Record, plain []byte, out *sink) {
	err := t.dg.Parse(plain)
	t.decrypted(r, plain, &t.dg, err, out)
}

// grow returns b resized to n bytes, reallocating only when it is too small.
func grow(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n, max(n, 2048))
	}
	return b[:n]
}

// decrypted is Datagram after decryption and splitting (which RunParallel
// does on other goroutines): plain is the decrypted datagram, dg its
// messages and perr the splitting error. plain and dg must stay valid until
// decrypted returns.
func (t *Tracker) decrypted(r *Record, plain []byte, dg *dissect.Datagram, perr error, out *sink) {
	fs, dir, ok := t.lookup(&r.Src, &r.Dst, plain)
	if !ok {
		t.stats.OtherUDP++
		return
	}
	t.stats.Datagrams++

	// The datagram's fields are set once, one by one (a composite literal
	// would clear and copy the whole ~250-byte Record); each message then
	// resets its own, so that together every field is written. Consumers
	// must not modify the record they are given.
	r.Server, r.Client = fs.key.server, fs.key.client
	r.Dir, r.Peer, r.MsgCount = dir, dg.Peer, int(dg.Count)
	r.Datagram = plain
	msgs := dg.Messages // a local, so that until cannot make it be read again
	complete := false   // the datagram answered the final checksum round
	for i := range msgs {
		m := &msgs[i]
		r.resetMessage(KindMessage, i)
		r.Msg = m
		// The usual messages, an ACK or a whole game message, are handled
		// here as message would, without the call.
		switch {
		case m.NonStock != dissect.FormUnknown:
			t.message(fs, r, m)
		case m.Type == dissect.TypeAck:
		case m.Type == dissect.TypeData && !m.Fragment:
			t.decodeGame(fs, r, m.Payload)
		default:
			t.message(fs, r, m)
		}
		if r.Game != nil && dir == game.ServerToClient {
			complete = t.scoreInAnswer(r, m.Payload, complete)
		}
		t.stats.Messages++
		if r.Warning != "" {
			t.stats.Warnings++
		}
		if r.NonStock != nil {
			t.stats.NonStock++
		}
		out.put(r)
	}
	if perr != nil {
		t.stats.Damaged++
		r.resetMessage(KindDamaged, len(msgs))
		r.Raw = plain
		r.Err = perr
		out.put(r)
	}
}

// resetMessage clears the fields that describe one message of a datagram,
// keeping the datagram's own.
func (r *Record) resetMessage(kind Kind, index int) {
	r.Kind, r.MsgIndex = kind, index
	r.Msg, r.Control, r.Game, r.GameSpy, r.Master = nil, nil, nil, nil, nil
	r.Reassembled, r.DuplicateFragment = 0, false
	r.Raw, r.Err, r.Warning, r.NonStock = nil, nil, "", nil
}

// scoreInAnswer marks a SCORE in a server datagram that also carries
// ChecksumComplete (the registry's FormScoreInChecksumAnswer); complete
// says whether the datagram's messages so far held a ChecksumComplete,
// and the result whether they do now.
func (t *Tracker) scoreInAnswer(r *Record, payload []byte, complete bool) bool {
	switch op := r.Game.Msg.Opcode(); {
	case op == game.OpChecksumComplete:
		return true
	case op == game.OpScore && complete && r.NonStock == nil:
		t.ns = dissect.NonStock{Form: dissect.FormScoreInChecksumAnswer, Len: len(payload),
			Stock: "Settings and GameInit after ChecksumComplete, no SCORE"}
		r.NonStock = &t.ns
	}
	return complete
}

// message fills in the decoded content of one transport message.
func (t *Tracker) message(fs *flowState, rec *Record, m *dissect.Message) {
	if m.NonStock != dissect.FormUnknown {
		t.ns = dissect.NonStock{Form: m.NonStock, Len: len(m.Raw)}
		if m.Legacy {
			t.ns.Offset, t.ns.Stock, t.ns.Rest = 1, "a [flags_len:u16] header", m.Raw[1:min(3, len(m.Raw))]
		}
		rec.NonStock = &t.ns
	}
	switch {
	case m.Type == dissect.TypeAck:
		return
	case m.Type == dissect.TypeDisconnect06:
		return
	case m.Type == dissect.TypeData:
		payload := m.Payload
		if m.Fragment {
			res := t.frags.Add(fragKey{fs.key, fs.epoch, rec.Dir, m.Seq}, m, rec.Frame, rec.Time)
			t.stats.FragmentsEvicted += res.Evicted
			if res.Duplicate {
				rec.DuplicateFragment = true
				t.stats.DuplicateFrags++
				return
			}
			if res.Complete == nil {
				return
			}
			payload = res.Complete
			rec.Reassembled = res.Count
			t.stats.Reassembled++
		}
		t.decodeGame(fs, rec, payload)
	default:
		if m.Legacy {
			// The legacy framing's payload has no stock layout either: it
			// is shown raw, without the parse (whose error would allocate).
			t.ctl = dissect.Control{Kind: "raw", Extra: m.Payload}
		} else {
			ctl, err := dissect.ParseControlNames(m, &t.names)
			t.ctl = ctl
			if err != nil {
				rec.Warning = joinWarn(rec.Warning, "control payload shown raw: "+err.Error())
			}
		}
		rec.Control = &t.ctl
		if rec.NonStock == nil && t.ctl.Kind == "peer-info" && t.ctl.Slot != nil && *t.ctl.Slot == 0 {
			t.ns = dissect.NonStock{Form: dissect.FormPeerInfoSlot0, Len: len(m.Raw), Offset: m.HeaderLen(),
				Stock: "the sender's wire slot (0x02 and up)"}
			rec.NonStock = &t.ns
		}
		if IsConnectRequest(rec) {
			t.newConnection(fs)
		}
	}
}

func (t *Tracker) decodeGame(fs *flowState, rec *Record, payload []byte) {
	t.stats.GameMessages++
	if len(payload) == 0 {
		// No opcode byte at all: an intact message that stock never sends.
		t.stats.GameErrors++
		t.ns = dissect.NonStock{Form: dissect.FormUnknown, Offset: 0, Stock: "an opcode byte"}
		rec.NonStock = &t.ns
		return
	}
	t.game = fs.dec.Decode(payload, rec.Dir)
	rec.Game = &t.game
	if t.game.Err != nil {
		t.stats.GameErrors++
	}
	if t.game.NonStock != nil {
		rec.NonStock = t.game.NonStock
	}
	if t.game.Warning != "" {
		rec.Warning = joinWarn(rec.Warning, t.game.Warning)
	}
}

func (t *Tracker) gamespy(r *Record, payload []byte, out *sink) {
	if r.TCP.Valid {
		t.masterSegment(r, payload, out)
		return
	}
	src, dst := r.Src, r.Dst
	g, err := dissect.ParseGameSpy(payload)
	t.gs = g
	server, client := dst, src
	if !g.Query {
		server, client = src, dst
	}
	if !t.servers[server] && t.servers[client] { // a known server wins over guesswork
		server, client = client, server
	}
	t.addServer(server)
	dir := game.ClientToServer
	if src == server {
		dir = game.ServerToClient
	}
	t.stats.GameSpy++
	*r = Record{Kind: KindGameSpy, Frame: r.Frame, Time: r.Time, Src: src, Dst: dst,
		Server: server, Client: client, Dir: dir, GameSpy: &t.gs, Err: err, Datagram: payload}
	out.put(r)
}

// lookup finds the flow of a datagram from src to dst and its direction,
// from the pair cache when it can.
func (t *Tracker) lookup(src, dst *netip.AddrPort, plain []byte) (*flowState, game.Direction, bool) {
	// The cache slot of the pair: a multiplicative hash of both addresses
	// and ports, so that the few pairs of a game (a server and up to 16
	// clients, two directions each) rarely share a slot. The cache is
	// two-way set-associative: the slot is even, and a pair may sit in it
	// or in the odd one after it. (Written out here: as a function it was
	// too big to be inlined, and its call cost a fifth of the lookup.)
	//
	// IPv4 addresses, the usual kind, are taken as their 4 bytes: the
	// 16-byte form of an address is built on the stack by two 8-byte
	// stores and copied by one 16-byte load, which the CPU cannot forward
	// from the stores and stalls on (this lookup was a tenth of Run's time).
	var sa, da uint64
	if s, d := src.Addr(), dst.Addr(); s.Is4() && d.Is4() {
		s4, d4 := s.As4(), d.As4()
		sa, da = uint64(binary.LittleEndian.Uint32(s4[:])), uint64(binary.LittleEndian.Uint32(d4[:]))
	} else {
		sa, da = addrBits16(s), addrBits16(d)
	}
	x := sa*0x9E3779B97F4A7C15 ^ da*0xC2B2AE3D27D4EB4F ^
		(uint64(src.Port())<<16|uint64(dst.Port()))*0x165667B19E3779F9
	slot := int((x*0x9E3779B97F4A7C15)>>(64-6)) &^ 1
	if c := &t.cache[slot]; c.hit(src, dst, t.gen) {
		return c.fs, c.dir, true
	}
	if c := &t.cache[slot+1]; c.hit(src, dst, t.gen) {
		return c.fs, c.dir, true
	}
	return t.lookupSlow(slot, *src, *dst, plain)
}

// lookupSlow is lookup for a pair that is not in the cache.
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
	t.epochs++
	fs.epoch = t.epochs
}

// IsConnectRequest reports whether r is a client's connect request, which
// starts a new connection on its flow whatever came before (a client that
// crashed and restarts connects again without a disconnect): the stock
// form, and the legacy [type][len:u8][flags:u8] framing a third-party
// client sends its connect in, whose payload has no stock layout.
func IsConnectRequest(r *Record) bool {
	if r.Dir != game.ClientToServer || r.Control == nil || r.Msg == nil {
		return false
	}
	switch r.Msg.Type {
	case dissect.TypeConnect, dissect.TypeConnectAck:
		return r.Control.Kind == "connect-request" || r.Msg.Legacy && r.Control.Kind == "raw"
	}
	return false
}

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

// Finish reports every fragmented message that never completed.
func (t *Tracker) Finish(emit func(*Record)) {
	t.finishMaster(emit)
	for _, s := range t.frags.Drain() {
		t.stats.FragmentsLost++
		k := s.Key
		t.rec = Record{Kind: KindLost, Frame: s.FirstFrame, Time: s.FirstTime,
			Server: k.flow.server, Client: k.flow.client, Dir: k.dir,
			Err: fmt.Errorf("fragmented message seq %d never completed: have %d of %s fragments (%d bytes), first seen in frame %d",
				k.seq, s.Have, totalText(s.Total), s.Bytes, s.FirstFrame)}
		if k.dir == game.ServerToClient {
			t.rec.Src, t.rec.Dst = k.flow.server, k.flow.client
		} else {
			t.rec.Src, t.rec.Dst = k.flow.client, k.flow.server
		}
		emit(&t.rec)
	}
}

func totalText(n int) string {
	if n == 0 {
		return "an unknown number of"
	}
	return fmt.Sprint(n)
}

func joinWarn(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}
