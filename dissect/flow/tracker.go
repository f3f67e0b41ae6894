// This file holds the Tracker's pipeline: one datagram decrypted, split into
// transport messages, fragments reassembled, game messages decoded, and each
// record handed to a sink; then Finish, which reports the fragmented messages
// that never completed.

package flow

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/game"
)

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
	lazySU bool // DeferStateUpdates (lazy.go)
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

// decrypted is Datagram after decryption (which RunParallel does on other
// goroutines) and splitting: plain is the decrypted datagram, dg its
// messages and perr the splitting error. plain and dg must stay valid until
// decrypted returns.
func (t *Tracker) decrypted(r *Record, plain []byte, dg *dissect.Datagram, perr error, out *sink) {
	// lookup, written out: its first cache slot is nearly always the
	// pair's, and as a call it cost a frame and the arguments kept.
	var (
		fs  *flowState
		dir game.Direction
		ok  bool
	)
	slot := pairSlot(&r.Src, &r.Dst)
	if c := &t.cache[slot]; c.hit(&r.Src, &r.Dst, t.gen) {
		fs, dir, ok = c.fs, c.dir, true
	} else {
		fs, dir, ok = t.lookupOther(slot, &r.Src, &r.Dst, plain)
	}
	if !ok {
		t.stats.OtherUDP++
		return
	}
	t.stats.Datagrams++

	// The datagram's fields are set once, one by one (a composite literal
	// would clear and copy the whole ~250-byte Record); each message then
	// resets its own, so that together every field is written. Consumers
	// must not modify the record they are given.
	r.Server, r.Client, r.Epoch = fs.key.server, fs.key.client, fs.epoch
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
		case m.Type == dissect.TypeData && !m.Fragment && len(m.Payload) != 0:
			if t.lazySU && t.lazyGame(fs, r, m.Payload, out) {
				break // its consumer decodes it (lazy.go)
			}
			// decodeGame for a message with an opcode, written out:
			// as a call it cost a frame and the loop's values reloaded.
			t.stats.GameMessages++
			g := &t.game
			if !fs.dec.DecodeStateUpdate(g, m.Payload, dir) {
				fs.dec.DecodeTo(g, m.Payload, dir)
			}
			r.Game, r.Payload, r.hashState = g, m.Payload, hashPending
			if g.Err != nil || g.NonStock != nil || g.Warning != "" {
				t.gameNotes(r)
			}
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

// scoreInAnswer marks a SCORE in a server datagram that also carries
// ChecksumComplete (the registry's FormScoreInChecksumAnswer); complete
// says whether the datagram's messages so far held a ChecksumComplete,
// and the result whether they do now.
//
// The opcode is the game message's first byte (r.Payload, set with
// r.Game), which is what its decoded message answers to Opcode: the
// ChecksumComplete and Score types are registered for their own opcodes
// only, and a message decoded raw carries the byte. Reading it saves an
// interface call on every game message a server sends.
func (t *Tracker) scoreInAnswer(r *Record, payload []byte, complete bool) bool {
	switch op := game.Opcode(r.Payload[0]); {
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
	fs.dec.DecodeTo(&t.game, payload, rec.Dir)
	rec.Game, rec.Payload, rec.hashState = &t.game, payload, hashPending
	t.gameNotes(rec)
}

// gameNotes counts a game message's error and carries its non-stock form
// and warning to rec.
func (t *Tracker) gameNotes(rec *Record) {
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
