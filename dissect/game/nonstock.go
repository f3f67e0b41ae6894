package game

// Recognising the registry's game-message forms (dissect.Forms): a game
// message that is intact but not in stock's form is marked with its entry,
// and one that fits no stock layout and no entry is marked unknown. The
// mark lives in the Decoder (Result.NonStock points at it), so marking
// allocates nothing.

import (
	"errors"

	"github.com/bcwire/bcwire/dissect"
)

// StockEvent is an event-forward opcode's stock message length (opcode
// included) and the fields of its stock event class.
type StockEvent struct {
	Len    int
	Fields string
}

// stockEvents holds the event-forward opcodes whose stock event class has
// a fixed size: the base event is 17 bytes (opcode, class, code, source,
// related object); SubsystemControlEvent 0x0104 and CharEvent 0x0105 carry
// one value byte more, ObjPtrEvent 0x010C an object id more,
// StartFiringEvent 0x8128 eight bytes more. The evidence is the registry's
// FormEventLength entry.
var stockEvents = [256]StockEvent{
	OpStartFiring:        {25, "StartFiringEvent 0x8128: class, code, source, related object, 8 more bytes"},
	OpStopFiring:         {17, "SubsystemEvent 0x0101: class, code, source, related object"},
	OpSubsystemStatus:    {18, "SubsystemControlEvent 0x0104: class, code, source, related object, value"},
	OpAddToRepairList:    {17, "SubsystemEvent 0x0101: class, code, source, related object"},
	OpRepairListPriority: {21, "ObjPtrEvent 0x010C: class, code, source, related object, object id"},
	OpSetPhaserLevel:     {18, "CharEvent 0x0105: class, code, source, related object, level"},
	OpTorpTypeChange:     {18, "CharEvent 0x0105: class, code, source, related object, torpedo type"},
}

// StockEventOf reports op's stock event length and class, when it has a
// fixed one.
func StockEventOf(op Opcode) (StockEvent, bool) {
	e := stockEvents[op]
	return e, e.Len != 0
}

// The hashes a round-0 ChecksumResponse carries: stock's reference hash is
// the hash of the version string "60"; OpenBC's test client sends the hash
// of the directory "scripts/" in its place.
const (
	VersionHash60   Hash32 = 0x7E0CE243
	ScriptsDirHash  Hash32 = 0x4DAFCB2F
	versionHashText        = `0x7E0CE243, the hash of the version string "60"`
)

// classifiedOps marks the opcodes with a recogniser for messages that
// decode: classify runs for them, and for any message that fails.
var classifiedOps = func() (t [256]bool) {
	for op := range stockEvents {
		t[op] = stockEvents[op].Len != 0
	}
	t[OpChecksumResponse] = true
	t[OpDeletePlayerUI] = true
	t[OpExplosion] = true
	return t
}()

// baseEventLen is the length of an event-forward message carrying the base
// event (opcode, class, code, source, related object).
const baseEventLen = 17

// shortEvent reports whether p is an event-forward message of a fixed
// stock class too short for any event (the four-byte bare body decodes,
// as an object id): it is marked without decoding, which would only fail.
func shortEvent(p []byte) bool {
	return stockEvents[p[0]].Len != 0 && len(p) < baseEventLen && len(p) != 5
}

// classify marks res when p is non-stock. res.Err set means no stock
// layout fitted: the mark is then a known form or unknown.
func (d *Decoder) classify(p []byte, dir Direction, res *Result) {
	op := Opcode(p[0])
	ns := &d.ns
	*ns = dissect.NonStock{Len: len(p)}
	if e := stockEvents[op]; e.Len != 0 && len(p) != e.Len {
		ns.Form, ns.StockLen, ns.Stock = dissect.FormEventLength, e.Len, e.Fields
		ns.Offset = min(len(p), e.Len)
		ns.Rest = p[ns.Offset:]
		if len(p) < e.Len {
			ns.Offset, ns.Rest = len(p), nil
		}
		res.NonStock = ns
		return
	}
	if res.Err != nil {
		ns.Form = dissect.FormUnknown
		if op == OpStateUpdate && errors.Is(res.Err, dissect.ErrShort) {
			ns.Form = dissect.FormStateUpdateShort
		}
		var de *dissect.Error
		if errors.As(res.Err, &de) {
			ns.Offset, ns.Stock = de.Offset, de.What
		}
		if ns.Offset > len(p) {
			ns.Offset = len(p)
		}
		ns.Rest = p[ns.Offset:]
		res.NonStock = ns
		return
	}
	switch m := res.Msg.(type) {
	case *StateUpdate:
		d.openbcForm(ns, m.openbc, res)
	case *ChecksumResponse:
		if m.Round == 0 && m.RefHash != VersionHash60 && m.RefHash == m.DirHash {
			ns.Form, ns.Offset, ns.Stock = dissect.FormChecksumDirHash, 2, versionHashText
			ns.Rest = p[2:6]
			res.NonStock = ns
		}
	case *DeletePlayerUI:
		if m.Target.Slot() >= 0 {
			ns.Form, ns.Offset, ns.Stock = dissect.FormDeletePlayerAtShip, 13, "the player-list object id (0x64F in stock's traces)"
			ns.Rest = p[13:17]
			res.NonStock = ns
		}
	case *Explosion:
		if dir == ClientToServer {
			ns.Form, ns.Stock = dissect.FormExplosionFromClient, "explosions sent by the host only"
			res.NonStock = ns
		}
	}
}

// openbcForm marks the OpenBC subsystem-state forms (openbcShield,
// openbcGroups bits); the warning that describes them stays.
func (d *Decoder) openbcForm(ns *dissect.NonStock, bits uint8, res *Result) {
	if bits == 0 {
		return
	}
	ns.Form = dissect.FormShieldByte
	switch bits {
	case openbcGroups:
		ns.Form = dissect.FormShortBitGroup
	case openbcShield | openbcGroups:
		ns.Stock = "and a short bit group (short-bit-group)"
	}
	res.NonStock = ns
}
