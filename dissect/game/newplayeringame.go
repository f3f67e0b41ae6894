package game

import (
	"fmt"

	"github.com/bcwire/bcwire/dissect"
)

// NewPlayerInGame (0x2A) is sent by a client once it has processed Settings
// and GameInit; the host answers with MISSION_INIT (0x35), DeletePlayerUI
// (0x17), the score roster and the existing objects. Stock traces show it
// only client to server, but the layout is the same either way.
//
// Its one field is a single packed bit: the byte after the opcode in the
// stock `2A 20` is a bit group holding one bit (count 1 in the top three
// bits) whose value is false. What the bit means is not documented; stock
// clients always send false.
type NewPlayerInGame struct {
	Flag bool `json:"flag"`
}

func init() { register(OpNewPlayerInGame, func() Message { return new(NewPlayerInGame) }) }

func (m *NewPlayerInGame) Opcode() Opcode { return OpNewPlayerInGame }

func (m *NewPlayerInGame) decode(r *dissect.Reader, _ *Context) {
	group := connPeekByte(r)
	m.Flag = r.Bit("flag")
	verifyStockBitGroup(r, group, "flag bit group", m.Flag)
}

func (m *NewPlayerInGame) Append(b []byte) []byte {
	w := dissect.NewWriter(append(b, byte(OpNewPlayerInGame)))
	w.Bit(m.Flag)
	return w.Bytes()
}

func (m *NewPlayerInGame) String() string { return fmt.Sprintf("flag=%t", m.Flag) }

func (m *NewPlayerInGame) warning() string {
	if m.Flag {
		return "NewPlayerInGame flag is set; stock clients always send it clear"
	}
	return ""
}
