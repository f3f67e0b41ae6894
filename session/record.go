package session

import (
	"net/netip"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
)

// Per-record counting: the live session's state, and live.add, which every
// message record of a session goes through (traffic counts, reliable
// delivery, then the game facts of facts.go).

// live is a session being built.
type live struct {
	// What most records touch comes first, in as few cache lines as it
	// fits (a session's lines are out of L1 by its next record): the
	// pair Add matches records against, then what add reads and counts.
	server, client netip.AddrPort // s.Server, s.Client
	epoch          uint32         // a flow.Record.Epoch of that pair, 0 until of sees one

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
	ending     bool // disconnected or booted; lingering
	closed     bool // handed to emit
	// at is the session's index in Builder.opened, which close clears.
	at     int
	common commonCounts // of s.Traffic, until finish
	// retransmissions is the Builder's running count.
	retransmissions *int
	// ownShip is the id of the client's last StateUpdate; ownShipDone
	// says ownShipUpdate has nothing more to note for it than its rate.
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

	nonStockPool *nonStockPool // the Builder's
	// nonStockKeys[i] is s.NonStock[i]'s form, message and direction as
	// one word (nonStock).
	nonStockKeys [maxNonStockKinds]uint32
	lingerUntil  stamp
	lost         bool // the player has lost a ship (for respawns)
	current      game.ObjectID
	flying       bool // current is alive
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

// add takes a message record (Add has counted any damage) and counts it in
// the session's traffic.
func (l *live) add(r *flow.Record, now stamp) {
	s := l.s
	// The traffic's first time: while lastSeen is not zero, first is set
	// and not after it (both start at open; first only moves back,
	// lastSeen only forward), so a record at lastSeen (the other
	// messages of its datagram) cannot move it, and a zero now never
	// does.
	if now.After(l.lastSeen) {
		l.lastSeen, s.LastSeen = now, r.Time
		// The traffic's last time is never before lastSeen (when
		// positive), so it can only move with it.
		if now.After(l.traffic.last) {
			l.traffic.last, l.lastIsSeen = now, true
		}
		if (now.Before(l.traffic.first) || l.traffic.first.IsZero()) && !now.IsZero() {
			l.traffic.first, s.Traffic.First = now, r.Time
		}
	} else if now != l.lastSeen && (now.Before(l.traffic.first) || l.traffic.first.IsZero()) && !now.IsZero() {
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
	payload := r.Payload
	if g := r.Game; g != nil && len(payload) > 0 {
		// Most are StateUpdates: their opcode without the interface call
		// (which made every register spill).
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
	if m.Type == dissect.TypeAck {
		ackStreams(&l.streams[1-d], m, now)
		return
	}
	if st := &l.streams[d][m.Type.Channel()&1]; !m.Reliable {
		st.st.Unreliable++ // send's first step, without the call
	} else if st.send(m, now, r.Frame) {
		*l.retransmissions++
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
	case m.Type == dissect.TypeDisconnect06:
		// The registry's disconnect-0x06: a third-party client's
		// disconnect, which ends the session as stock's 0x05 does.
		by := "client"
		if r.Dir == game.ServerToClient {
			by = "server"
		}
		l.end(EndDisconnect, r.Time, r.Frame, by, "disconnect from the "+by+" (as transport type 0x06, non-stock)")
	case r.Game != nil:
		// (r.Payload again, not payload: kept across the calls above,
		// it was spilled on every record.)
		if len(r.Payload) == 0 {
			op = r.Game.Msg.Opcode()
		}
		if op != game.OpStateUpdate {
			l.game(r, op, r.Payload, now)
		} else if m, ok := r.Game.Msg.(*game.StateUpdate); ok {
			// Most messages are StateUpdates: game's only work for them
			// (they are not relayed), stateUpdate's, written out here
			// (a call per update was a measurable share).
			id := m.Object
			if r.Dir == game.ClientToServer && !(l.ownShipDone && id == l.ownShip) {
				l.ownShipUpdate(r, id)
			}
			k := rateKey{id, r.Dir}
			h := &l.rates.hints[k.hint()]
			if h.key != k.pack() {
				if h = l.rate(k, r); h == nil {
					return
				}
			}
			h.n++
			h.last = r.Time
		}
	}
}

// silent reports whether now is more than timeout after the session's last
// traffic. The last traffic only moves forward, so the answer stays no up
// to the time it gave last, and most records need one comparison.
func (l *live) silent(now stamp, timeout time.Duration) bool {
	if !now.After(l.quietUntil) {
		return false
	}
	if now.Sub(l.lastSeen) > timeout {
		return true
	}
	// Add saturates rather than wraps: at worst an earlier bound.
	l.quietUntil = stampOf(l.s.LastSeen.Add(timeout))
	return false
}

// nonStock counts a non-stock message in the session's kinds: one entry
// per form, message and direction, made on its first instance; later
// instances move its count and last frame. The first instance's text comes
// from the Builder's pool, where the sessions find the same texts again
// (OpenBC's clients reconnect: each new session lists the same dozen
// kinds), and so does the list's array when sessions are given back
// (Builder.Reuse): a kind then costs no allocation.
//
// Builder.Add calls it before add (which then has no call before its
// common counts, and spills less).
func (l *live) nonStock(r *flow.Record) {
	d := int(r.Dir) - 1
	if uint(d) > 1 {
		return // counted nowhere
	}
	s, ns := l.s, r.NonStock
	s.Traffic.NonStock[d][ns.Form%dissect.NumForms]++
	op := -1
	if r.Game != nil {
		op = int(r.Game.Msg.Opcode())
	}
	// The kinds' keys packed, one word each beside the list: scanning
	// the list itself read a line or more per kind.
	// (op+1 is 0 to 256: nine bits; Dir is 1 or 2 here.)
	key := uint32(ns.Form)<<24 | uint32(op+1)<<15 | uint32(r.Msg.Type)<<7 | uint32(r.Dir)&0x7F
	for i, k := range l.nonStockKeys[:len(s.NonStock)] {
		if k == key {
			k := &s.NonStock[i]
			k.Count++
			k.LastFrame, k.LastTime = r.Frame, r.Time
			return
		}
	}
	if len(s.NonStock) >= maxNonStockKinds {
		s.NonStockDropped++
		return
	}
	what := r.Msg.Type.String()
	if op >= 0 {
		what = game.Opcode(op).String()
	}
	if s.NonStock == nil {
		s.NonStock = l.nonStockPool.list()
	}
	l.nonStockKeys[len(s.NonStock)] = key
	s.NonStock = append(s.NonStock, NonStockKind{form: ns.Form, op: op, typ: r.Msg.Type, dir: r.Dir,
		Name: ns.Name(), Message: what, Dir: r.Dir.String(), Count: 1,
		FirstFrame: r.Frame, FirstTime: r.Time, LastFrame: r.Frame, LastTime: r.Time,
		Text: l.nonStockPool.text(ns), Evidence: ns.Entry().Evidence})
}

// nonStockPool is the Builder's memory for the sessions' non-stock lists:
// the texts of the marks (NonStock.String), the same string for the same
// text while it has room for it, so that the session lists reuse the texts
// of the sessions before them; and the arrays of lists given back with
// their Session (Builder.Reuse).
type nonStockPool struct {
	texts map[string]string
	buf   []byte
	lists [][]NonStockKind // empty, with room
}

// maxTexts bounds the texts remembered; beyond it each is made anew.
const maxTexts = 256

// text is ns.String(). A nil *nonStockPool remembers nothing.
func (p *nonStockPool) text(ns *dissect.NonStock) string {
	if p == nil {
		return ns.String()
	}
	p.buf = ns.AppendText(p.buf[:0])
	if v, ok := p.texts[string(p.buf)]; ok { // (the conversion does not allocate)
		return v
	}
	v := string(p.buf)
	if p.texts == nil {
		p.texts = make(map[string]string)
	}
	if len(p.texts) < maxTexts {
		p.texts[v] = v
	}
	return v
}

// list is an empty list for a session's first non-stock kind.
func (p *nonStockPool) list() []NonStockKind {
	if p != nil {
		if l, ok := popFree(&p.lists); ok {
			return l
		}
	}
	return make([]NonStockKind, 0, 8) // a session with one kind mostly has several
}

// keep takes back the array of a list no one uses any more.
func (p *nonStockPool) keep(l []NonStockKind) {
	if cap(l) > 0 && len(p.lists) < maxFree {
		clear(l[:cap(l)]) // (its strings are shared texts, but need not stay reachable)
		p.lists = append(p.lists, l[:0])
	}
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

// eventsFull reports whether the session's event list is full, counting
// the event that does not fit, so that the caller need not make its text:
// in steady state a session's list is full and events are only counted,
// which must not allocate.
func (l *live) eventsFull() bool {
	if len(l.s.Events) >= l.opts.MaxEvents {
		l.s.EventsDropped++
		return true
	}
	return false
}

func (l *live) eventAt(t time.Time, frame int, kind, text string) {
	s := l.s
	if len(s.Events) >= l.opts.MaxEvents {
		s.EventsDropped++
		return
	}
	s.Events = append(s.Events, Event{Time: t, Frame: frame, Kind: kind, Text: text})
}

// setOnce sets *p, a time of s, to t unless it is set. (Taking memory
// only here, not by taking t's address, keeps the per-packet path
// allocation-free.)
func (s *Session) setOnce(p **time.Time, t time.Time) bool {
	if *p != nil {
		return false
	}
	*p = s.times.at(t)
	return true
}

// timeArena holds the times a Session's pointers point to (Phases, the
// checksum rounds, a ship's destruction): one array for most sessions'
// dozen or two, which a Session given back by Builder.Reuse keeps for
// the next one, instead of an allocation each.
type timeArena struct {
	buf []time.Time
}

// arenaTimes is the size of an arena's array: the phases, five checksum
// rounds' two times and a few more.
const arenaTimes = 32

// at is a pointer to a copy of t in the arena.
func (a *timeArena) at(t time.Time) *time.Time {
	if len(a.buf) == cap(a.buf) {
		// A new array, not a larger copy: the times handed out stay
		// where they are.
		a.buf = make([]time.Time, 0, arenaTimes)
	}
	a.buf = append(a.buf, t)
	return &a.buf[len(a.buf)-1]
}

// reset forgets the times handed out (their pointers are gone with the
// Session's fields) and keeps the array.
func (a *timeArena) reset() { a.buf = a.buf[:0] }
