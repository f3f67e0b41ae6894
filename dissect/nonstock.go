package dissect

// The registry of known non-stock forms. A capture holds three kinds of
// bytes: stock; non-stock (intact bytes, but a message or field that does
// not have stock's form); and damage (the capture itself is broken). A
// replacement server in progress, and its test clients, send non-stock
// messages on purpose or by mistake; a parity tool names them instead of
// calling them damage. Each known form is listed here once, with how it is
// recognised and the stock evidence that shows stock does otherwise (an
// entry of ../shared/vectors/stock-payloads*.json, quoted by its label, or
// a line of ../shared/PROTOCOL.md); the layers that see it (transport
// here, game messages in package game, datagram context in package flow)
// recognise it and point at its entry, and every command reads the entry.

import (
	"encoding/hex"
	"strconv"

	"github.com/bcwire/bcwire/internal/jsonenc"
)

// FormID numbers the known forms; it indexes Forms. FormUnknown is a
// message the registry does not know that does not fit stock's layout.
type FormID uint8

// The known forms.
const (
	FormUnknown FormID = iota
	FormDisconnect06
	FormLegacyConnect
	FormEventLength
	FormStateUpdateShort
	FormShieldByte
	FormShortBitGroup
	FormChecksumDirHash
	FormScoreInChecksumAnswer
	FormDeletePlayerAtShip
	FormExplosionFromClient
	FormPeerInfoSlot0
	NumForms
)

// Form is one entry of the registry.
type Form struct {
	ID   FormID
	Name string // short key, as commands print and count it
	What string // what the peer does
	// Recognised says how the dissector tells it from damage and stock.
	Recognised string
	// Evidence is what shows that stock does otherwise: an entry of the
	// stock-payloads vectors or a line of PROTOCOL.md.
	Evidence string
	// By lists the implementations known to do it.
	By string
}

const byOpenBC = "OpenBC (SandboxServers/OpenBC) server and test client"

// Forms is the registry, indexed by FormID.
var Forms = [NumForms]Form{
	FormUnknown: {ID: FormUnknown, Name: "unknown",
		What:       "a message that does not fit stock's layout and matches no known form",
		Recognised: "its opcode's stock layout fails to decode inside an intact transport message",
		Evidence:   "the stock layout of its opcode (dissect/game)"},
	FormDisconnect06: {ID: FormDisconnect06, Name: "disconnect-0x06",
		What:       "a disconnect sent as transport type 0x06, framed [0x06][len:u8]",
		Recognised: "transport type byte 0x06 whose length byte fits the datagram",
		Evidence: "stock-payloads.json \"Transport Disconnect (type 0x05) message\" (05 0A C0 02 00 02 0A 00 32 03) and " +
			"\"Decrypted datagram #1764: transport Disconnect (0x05) + 2 stale ACKs\": stock disconnects with type 0x05",
		By: byOpenBC + " (test client)"},
	FormLegacyConnect: {ID: FormLegacyConnect, Name: "legacy-connect",
		What:       "a control message (the connect) in the legacy [type][len:u8][flags:u8] framing",
		Recognised: "a control message whose stock [type][flags_len:u16] header does not fit and whose legacy header does",
		Evidence: "PROTOCOL.md \"Client connect: FF 01 03 0F C0 00 00 0A 0A 0A EF 5F 0A 00 00 00 00\" and " +
			"stock-payloads-2.json \"Packet #1: Connect (transport 0x03), first packet of the Valentine's battle trace\"",
		By: byOpenBC + " (test client: FF 01 03 08 01 …)"},
	FormEventLength: {ID: FormEventLength, Name: "event-length",
		What:       "an event-forward message whose body is not its stock event class's size",
		Recognised: "an event-forward opcode with a fixed stock event class (0x07, 0x08, 0x0A, 0x0B, 0x11, 0x12, 0x1B) and another length",
		Evidence: "stock-payloads-2.json \"StartFiring (0x07) in reliable 0x32 message … (VDAY line 2182)\" (25 bytes), " +
			"stock-payloads.json \"PythonEvent (0x06) TGSubsystemEvent 0x0101 ADD_TO_REPAIR_LIST, stock\" (17 bytes), " +
			"stock-payloads-2.json \"PythonEvent (0x06) factory 0x010C TGObjPtrEvent …\" (21 bytes); PROTOCOL.md " +
			"\"a 10-byte SubsystemStatus where stock sends 18\"",
		By: byOpenBC},
	FormStateUpdateShort: {ID: FormStateUpdateShort, Name: "stateupdate-short",
		What:       "a StateUpdate that ends before the fields its flags promise",
		Recognised: "StateUpdate (0x1C) whose flag byte announces more fields than the message holds",
		Evidence: "stock-payloads-2.json \"StateUpdate (0x1C) flags 0x9D POS+FWD+UP+SPD+WPN, client ship, embedded in packet #56\" " +
			"and stock-payloads.json \"StateUpdate (0x1C) SUB-only, startIdx 0, collision test\": every flagged field present",
		By: byOpenBC},
	FormShieldByte: {ID: FormShieldByte, Name: "shield-generator-byte",
		What:       "the shield generator's state written as its condition byte alone",
		Recognised: "subsystem states that fit the ship's list only with the shield generator as a one-byte base subsystem",
		Evidence: "stock-payloads.json \"ObjCreateTeam (0x03) Sovereign spawn, stock dedi collision test\" with " +
			"\"StateUpdate (0x1C) SUB-only, startIdx 0, collision test\": stock writes the shield generator as a powered subsystem with six facing bytes",
		By: byOpenBC + " (server)"},
	FormShortBitGroup: {ID: FormShortBitGroup, Name: "short-bit-group",
		What:       "a power bit that opens a new bit-group byte after a group of fewer than five bits",
		Recognised: "subsystem states that fit the ship's list only when a new group byte starts while the open group has room",
		Evidence: "stock-payloads-2.json \"Packet #300: StateUpdate (0x1C) SUB-only, startIdx 8, server datagram\": " +
			"stock fills a group to five bits before opening another",
		By: byOpenBC + " (server)"},
	FormChecksumDirHash: {ID: FormChecksumDirHash, Name: "checksum-ref-dirhash",
		What:       "a round-0 ChecksumResponse whose reference hash is the directory hash instead of the version hash",
		Recognised: "ChecksumResponse (0x21) round 0 whose reference hash equals its directory hash (0x4DAFCB2F) and is not 0x7E0CE243",
		Evidence: "PROTOCOL.md \"stock Packet #7 `21 00 43 E2 0C 7E 2F CB AF 4D …`\": the reference hash is 0x7E0CE243, " +
			"the hash of the version string \"60\"; a stock server answers another with 0x23",
		By: byOpenBC + " (test client)"},
	FormScoreInChecksumAnswer: {ID: FormScoreInChecksumAnswer, Name: "score-in-checksum-answer",
		What:       "a SCORE (0x37) in the datagram that answers the final checksum round",
		Recognised: "SCORE sent by the server in a datagram that also carries ChecksumComplete (0x28)",
		Evidence: "stock-payloads-2.json \"Packet #17: ACK + 0x28 + Settings (0x00) + GameInit (0x01), post-checksum bundle, " +
			"Valentine's battle\": no SCORE",
		By: byOpenBC + " (server)"},
	FormDeletePlayerAtShip: {ID: FormDeletePlayerAtShip, Name: "deleteplayer-at-ship",
		What:       "a DeletePlayerUI (0x17) whose target is a player's ship id instead of the player-list object",
		Recognised: "DeletePlayerUI whose target lies at 0x3FFFFFFF + n × 0x40000 (a player's ship id)",
		Evidence: "stock-payloads.json \"DeletePlayerUI (0x17) join-time, stock dedi self-destruct test packet #25\" " +
			"(target 0x64F) and \"DeletePlayerUI (0x17) at join, stock\" (target 0x6A8)",
		By: byOpenBC + " (server)"},
	FormExplosionFromClient: {ID: FormExplosionFromClient, Name: "explosion-from-client",
		What:       "an Explosion (0x29) sent by a client to the server",
		Recognised: "Explosion in the client-to-server direction",
		Evidence: "stock-payloads-2.json \"Packet #2829: Explosion (0x29), server datagram to Peer#2\" and \"Packet #2830\": " +
			"the host announces explosions",
		By: byOpenBC + " (test client)"},
	FormPeerInfoSlot0: {ID: FormPeerInfoSlot0, Name: "peer-info-slot-0",
		What:       "a keepalive (peer-info, type 0x00) whose slot byte is 0",
		Recognised: "peer-info message with slot 0",
		Evidence: "PROTOCOL.md \"Server keepalive: 00 16 C0 01 00 02 0A 0A 0A EF 43 00 …\": the slot byte is the " +
			"player's wire slot (0x02 and up)",
		By: byOpenBC + " (test client)"},
}

// NonStock says how one intact message departs from stock. Decoders fill
// one they own and point records at it, so that marking a message
// allocates nothing.
type NonStock struct {
	Form FormID
	// Offset is where the bytes depart from stock's form, counted from
	// the message's first byte (its opcode, or its transport type).
	Offset int
	// Len and StockLen are the message's length and stock's, when the
	// departure is one of length (StockLen 0 otherwise).
	Len, StockLen int
	// Stock says what stock has at Offset (its fields from there, or the
	// field the stock layout could not read).
	Stock string
	// Rest is the message's bytes from Offset on (aliasing the input).
	Rest []byte
}

// Entry is n's registry entry.
func (n *NonStock) Entry() *Form { return &Forms[n.Form] }

// Name is the entry's name ("unknown" for an unknown form).
func (n *NonStock) Name() string { return Forms[n.Form].Name }

// String is n's text form, as decode prints it after the message's name:
// "non-stock: 10 bytes, stock sends 18: class, code, …" for a known form
// of length, "non-stock: <what it is>" for another known form, and
// "non-stock, unknown: offset 9: stock has source object there; from there: 01 00 B0" for
// an unknown one.
//
// The text is built in a buffer on the stack and copied once into the
// string: grown by append from nil it took five allocations, and session
// builds one for each kind of non-stock message in each session.
func (n *NonStock) String() string {
	var buf [256]byte
	return string(n.AppendText(buf[:0]))
}

// AppendText appends String's text.
func (n *NonStock) AppendText(b []byte) []byte {
	f := &Forms[n.Form]
	if n.Form == FormUnknown {
		b = strconv.AppendInt(append(b, "non-stock, unknown: offset "...), int64(n.Offset), 10)
		b = append(append(append(b, ": stock has "...), n.Stock...), " there"...)
		if len(n.Rest) > 0 {
			b = appendHexBytes(append(b, "; from there: "...), n.Rest)
		}
		return b
	}
	b = append(append(b, "non-stock "...), f.Name...)
	if n.StockLen > 0 {
		b = strconv.AppendInt(append(b, ": "...), int64(n.Len), 10)
		b = strconv.AppendInt(append(b, " bytes, stock sends "...), int64(n.StockLen), 10)
		if n.Stock != "" {
			b = append(append(b, ": "...), n.Stock...)
		}
		return b
	}
	b = append(append(b, ": "...), f.What...)
	if n.Stock != "" {
		b = append(append(append(b, " ("...), n.Stock...), ')')
	}
	return b
}

// AppendJSON appends n as decode --json's "nonstock" member's value:
// {"name","what","evidence","by","offset", "len","stock_len","stock","rest"}.
func (n *NonStock) AppendJSON(b []byte) []byte {
	f := &Forms[n.Form]
	b = jsonenc.String(append(b, `{"name":`...), f.Name)
	b = jsonenc.String(append(b, `,"what":`...), f.What)
	b = jsonenc.String(append(b, `,"evidence":`...), f.Evidence)
	if f.By != "" {
		b = jsonenc.String(append(b, `,"by":`...), f.By)
	}
	b = strconv.AppendInt(append(b, `,"offset":`...), int64(n.Offset), 10)
	if n.StockLen > 0 {
		b = strconv.AppendInt(append(b, `,"len":`...), int64(n.Len), 10)
		b = strconv.AppendInt(append(b, `,"stock_len":`...), int64(n.StockLen), 10)
	}
	if n.Stock != "" {
		b = jsonenc.String(append(b, `,"stock":`...), n.Stock)
	}
	if len(n.Rest) > 0 {
		b = append(hex.AppendEncode(append(b, `,"rest":"`...), n.Rest), '"')
	}
	return append(b, '}')
}

// MarshalJSON is AppendJSON for encoding/json.
func (n *NonStock) MarshalJSON() ([]byte, error) { return n.AppendJSON(nil), nil }

// appendHexBytes appends b as space-separated upper-case hex.
func appendHexBytes(dst, b []byte) []byte {
	const digits = "0123456789ABCDEF"
	for i, c := range b {
		if i > 0 {
			dst = append(dst, ' ')
		}
		dst = append(dst, digits[c>>4], digits[c&15])
	}
	return dst
}
