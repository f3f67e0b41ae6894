// This file holds the deferred decoding of StateUpdates: a Tracker that
// leaves them undecoded (DeferStateUpdates) and the LazyDecoder that
// decodes them later, where the consumer formats them.

package flow

import (
	"encoding/binary"

	"github.com/bcwire/bcwire/dissect/game"
)

// DeferStateUpdates makes the Tracker leave the StateUpdates that come in
// a data message of their own undecoded: their records are Lazy. decode
// formats records on other goroutines than the Tracker's, and a
// StateUpdate, most of a game's messages, is cheaper to decode there than
// to decode here and copy for them. The consumer must decode every Lazy
// record it is given with a LazyDecoder, whose counts complete the
// Tracker's Stats (GameErrors, NonStock and Warnings leave the Lazy
// records out). Records the Tracker counts without delivering them (after
// emit stopped the run) are decoded as usual.
func (t *Tracker) DeferStateUpdates(on bool) { t.lazySU = on }

// lazyGame, called when lazySU is set, marks r Lazy when p, a whole game
// message in a data message of its own, is a StateUpdate, and reports
// whether it did.
// What a StateUpdate's decoding depends on beyond its bytes and direction
// is only the ship class of its object (game.ShipRegistry), looked up now.
func (t *Tracker) lazyGame(fs *flowState, r *Record, p []byte, out *sink) bool {
	if len(p) < 5 || game.Opcode(p[0]) != game.OpStateUpdate || out.stopped {
		return false
	}
	t.stats.GameMessages++
	r.Payload, r.Lazy, r.hashState = p, true, hashPending
	r.LazyShip = fs.dec.Ships.Lookup(game.ObjectID(binary.LittleEndian.Uint32(p[1:])))
	return true
}

// LazyDecoder decodes Lazy records as their Tracker would have, and
// counts what the Tracker left out of its Stats for them. It may run on
// any goroutine; one LazyDecoder serves one goroutine. The zero value is
// ready.
type LazyDecoder struct {
	dec     *game.Decoder
	scratch game.Result
	// Counts holds GameErrors, NonStock and Warnings of the records
	// decoded since the last AddTo.
	counts Stats
}

// Decode decodes r's StateUpdate into res and completes r as the Tracker
// would have: Game, NonStock and Warning set, Lazy cleared. r must be a
// copy the caller owns (not the record emit was given), and res, like
// what it points to, stays valid until the next Decode.
func (z *LazyDecoder) Decode(r *Record, res *game.Result) {
	if z.dec == nil {
		z.dec = game.NewDecoder()
	}
	p := r.Payload
	// The decoder's registry is made to hold the class the Tracker's held
	// for the object, which is all the decoding looks up in it.
	id := game.ObjectID(binary.LittleEndian.Uint32(p[1:]))
	if z.dec.Ships.Lookup(id) != r.LazyShip {
		z.dec.Ships.Add(id, r.LazyShip)
	}
	z.dec.DecodeTo(res, p, r.Dir)
	r.Game, r.Lazy, r.LazyShip = res, false, nil
	// As decodeGame and decrypted: a Lazy record had no NonStock and no
	// Warning before (it came in a stock data message of its own).
	if res.Err != nil {
		z.counts.GameErrors++
	}
	if res.NonStock != nil {
		r.NonStock = res.NonStock
		z.counts.NonStock++
	}
	if res.Warning != "" {
		r.Warning = joinWarn(r.Warning, res.Warning)
		z.counts.Warnings++
	}
}

// Count decodes r's StateUpdate for its counts only, leaving r as it is:
// for a Lazy record the consumer does not show.
func (z *LazyDecoder) Count(r *Record) {
	c := *r
	z.Decode(&c, &z.scratch)
}

// AddTo adds the counts of the records decoded since the last AddTo to s.
func (z *LazyDecoder) AddTo(s *Stats) {
	s.GameErrors += z.counts.GameErrors
	s.NonStock += z.counts.NonStock
	s.Warnings += z.counts.Warnings
	z.counts = Stats{}
}
