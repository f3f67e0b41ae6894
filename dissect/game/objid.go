package game

import (
	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/internal/jsonenc"
)

// ObjectID is a network object id. Each player slot owns a block of 0x40000
// ids starting at 0x3FFFFFFF + slot*0x40000 (player 0's ship is 0x3FFFFFFF);
// ids below that belong to no player (the host's environment objects).
type ObjectID uint32

const (
	firstPlayerID  = 0x3FFFFFFF
	idsPerPlayer   = 0x40000
	maxPlayerSlots = 16
)

// PlayerObjectID is the first object id of player slot (its ship).
func PlayerObjectID(slot int) ObjectID { return ObjectID(firstPlayerID + slot*idsPerPlayer) }

// Slot returns the owning player slot, or -1 for ids outside player ranges.
func (id ObjectID) Slot() int {
	if id < firstPlayerID {
		return -1
	}
	s := int((uint32(id) - firstPlayerID) / idsPerPlayer)
	if s >= maxPlayerSlots {
		return -1
	}
	return s
}

// String shows the id in hex with its owner: 0x3FFFFFFF(slot 0).
func (id ObjectID) String() string { return string(id.AppendString(nil)) }

// AppendString appends the String form: 0x%08X, and the owning slot if any.
func (id ObjectID) AppendString(b []byte) []byte {
	if s := (uint32(id) - firstPlayerID) / idsPerPlayer; s < maxPlayerSlots && id == PlayerObjectID(int(s)) {
		return append(b, playerShipText[s]...) // a player's ship, as in AppendJSON
	}
	return id.appendStringLong(b)
}

// playerShipText (tables_gen.go, made by TestGeneratedTables) is the text
// of each player slot's first object id, its ship.

// appendStringLong is AppendString made from its parts.
func (id ObjectID) appendStringLong(b []byte) []byte {
	b = jsonenc.Hex32(b, uint32(id)) // "0x" and eight digits
	if s := id.Slot(); s >= 0 {
		b = appendInt(append(b, "(slot "...), int64(s))
		b = append(b, ')')
	}
	return b
}

// appendHex appends v in upper-case hex, zero-padded to at least digits.
func appendHex(b []byte, v uint64, digits int) []byte {
	const hexDigits = "0123456789ABCDEF"
	var buf [16]byte
	i := len(buf)
	for v != 0 || len(buf)-i < digits {
		i--
		buf[i] = hexDigits[v&0xF]
		v >>= 4
	}
	return append(b, buf[i:]...)
}

// MarshalJSON is AppendJSON for encoding/json.
func (id ObjectID) MarshalJSON() ([]byte, error) { return id.AppendJSON(nil), nil }

// readID and appendID keep the opcode files short.
func readID(r *dissect.Reader, what string) ObjectID { return ObjectID(r.U32(what)) }
func appendID(w *dissect.Writer, id ObjectID)        { w.U32(uint32(id)) }

// AppendJSON appends {"id":"0x3FFFFFFF","slot":0} (slot left out when the
// id belongs to no player).
func (id ObjectID) AppendJSON(b []byte) []byte {
	if s := (uint32(id) - firstPlayerID) / idsPerPlayer; s < maxPlayerSlots && id == PlayerObjectID(int(s)) {
		return append(b, playerShipJSON[s]...) // a player's ship: nearly every StateUpdate's
	}
	return id.appendJSONLong(b)
}

// playerShipJSON (tables_gen.go, made by TestGeneratedTables) is the JSON
// of each player slot's first object id, its ship.

// appendJSONLong is AppendJSON made from its parts.
func (id ObjectID) appendJSONLong(b []byte) []byte {
	b = jsonenc.Hex32(append(b, `{"id":"`...), uint32(id))
	b = append(b, '"')
	if s := id.Slot(); s >= 0 {
		b = appendInt(append(b, `,"slot":`...), int64(s))
	}
	return append(b, '}')
}
