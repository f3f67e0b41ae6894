package game

import (
	"fmt"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/internal/jsonenc"
)

// Dead is one of the opcode slots no stock code sends or reads: 0x04 and
// 0x05 (defaults of the game dispatcher's jump table) and 0x24 and 0x26
// (gaps in the checksum/NetFile range). None was ever seen in a stock trace;
// anything arriving with these opcodes is kept as bytes and flagged.
type Dead struct {
	Op   Opcode  `json:"-"`
	Data HexData `json:"data"` // everything after the opcode byte
}

func init() {
	for _, op := range []Opcode{OpDead04, OpDead05, OpUnused24, OpUnused26} {
		register(op, func() Message { return &Dead{Op: op} })
	}
}

func (m *Dead) Opcode() Opcode { return m.Op }

func (m *Dead) decode(r *dissect.Reader, _ *Context) { m.Data = r.Bytes(r.Len(), "data") }

func (m *Dead) Append(b []byte) []byte { return append(append(b, byte(m.Op)), m.Data...) }

func (m *Dead) String() string { return fmt.Sprintf("% X", []byte(m.Data)) }

func (m *Dead) warning() string {
	switch m.Op {
	case OpDead04:
		// OpenBC's docs list 0x04 as BootPlayer [reason:u8]; seeds/001 (the
		// higher authority) says the stock dispatcher ignores 0x04 and a
		// boot travels as a transport-level message.
		return "opcode 0x04 is a dead slot: the stock game dispatcher ignores it (boot is a transport message, not a game opcode)"
	case OpDead05:
		return "opcode 0x05 is a dead slot: the stock game dispatcher ignores it"
	case OpUnused24:
		return "opcode 0x24 is an unused checksum/NetFile slot: stock code never sends or reads it"
	case OpUnused26:
		return "opcode 0x26 is an unused checksum/NetFile slot: stock code never sends or reads it"
	}
	return ""
}

// HexData is opaque message bytes; JSON shows them as one hex string.
type HexData []byte

// MarshalJSON is AppendJSON for encoding/json.
func (h HexData) MarshalJSON() ([]byte, error) { return h.AppendJSON(nil), nil }

// AppendJSON appends the bytes as one upper-case hex string.
func (h HexData) AppendJSON(b []byte) []byte { return jsonenc.Hex(b, h) }
