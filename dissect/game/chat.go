package game

import (
	"fmt"

	"github.com/bcwire/bcwire/dissect"
)

// Chat is a chat line, CHAT_MESSAGE (0x2C) or TEAM_CHAT_MESSAGE (0x2D); Op
// says which. Both are script messages with the same layout: the sender's
// network id (i32, what GetLocalID returns: the host is 1, clients 2 and up)
// and the text (u16 length + bytes, no terminator). A client sends it to the
// host, which relays it unchanged (to everyone for chat, to the sender's team
// for team chat).
//
// Some older notes read the id as a slot byte plus three zero bytes of
// padding; the bytes are the same for any id below 256, and the script
// writes a 4-byte integer.
type Chat struct {
	Op       Opcode `json:"-"` // OpChat or OpTeamChat
	SenderID int32  `json:"sender_id"`
	Text     string `json:"text"`
}

func init() {
	register(OpChat, func() Message { return &Chat{Op: OpChat} })
	register(OpTeamChat, func() Message { return &Chat{Op: OpTeamChat} })
}

func (m *Chat) Opcode() Opcode { return m.Op }

func (m *Chat) decode(r *dissect.Reader, ctx *Context) {
	m.SenderID = r.I32("sender id")
	m.Text = ctx.str(r.String16("text"))
}

// Append encodes m with its Op (CHAT_MESSAGE when Op is neither chat
// opcode). Text longer than 65535 bytes is cut to fit.
func (m *Chat) Append(b []byte) []byte {
	op := m.Op
	if op != OpChat && op != OpTeamChat {
		op = OpChat
	}
	w := dissect.NewWriter(append(b, byte(op)))
	w.I32(m.SenderID)
	w.String16([]byte(m.Text))
	return w.Bytes()
}

func (m *Chat) String() string { return fmt.Sprintf("sender=%d text=%q", m.SenderID, m.Text) }
