package game

import (
	"fmt"
	"strconv"

	"github.com/bcwire/bcwire/dissect"
)

// ChecksumRound is the round index of a checksum request and of the response
// that echoes it. Stock hosts run rounds 0, 1, 2 and 3 (scripts/App.pyc,
// scripts/Autoexec.pyc, scripts/ships/*.pyc recursively, scripts/mainmenu/*.pyc)
// and then the final round 0xFF (Scripts/Multiplayer/*.pyc, recursive), one
// at a time, each after the previous response.
type ChecksumRound uint8

// FinalChecksumRound is the last round's index.
const FinalChecksumRound ChecksumRound = 0xFF

func (c ChecksumRound) String() string {
	if c == FinalChecksumRound {
		return "final(0xFF)"
	}
	return strconv.Itoa(int(c))
}

// ChecksumRequest (0x20) asks the client to hash the files matching Filter
// in Dir (and its sub-directories when Recursive). The recursive flag is one
// packed bit: 0x20 false, 0x21 true.
type ChecksumRequest struct {
	Round     ChecksumRound `json:"round"`
	Dir       string        `json:"dir"`    // e.g. "scripts/ships", no trailing slash in stock rounds 2 and 3
	Filter    string        `json:"filter"` // e.g. "*.pyc" or a single file name
	Recursive bool          `json:"recursive"`
}

func init() { register(OpChecksumRequest, func() Message { return new(ChecksumRequest) }) }

func (m *ChecksumRequest) Opcode() Opcode { return OpChecksumRequest }

func (m *ChecksumRequest) decode(r *dissect.Reader, ctx *Context) {
	m.Round = ChecksumRound(r.U8("round"))
	m.Dir = ctx.str(r.String16("directory"))
	m.Filter = ctx.str(r.String16("filter"))
	group := connPeekByte(r)
	m.Recursive = r.Bit("recursive")
	verifyStockBitGroup(r, group, "recursive bit group", m.Recursive)
}

// Append encodes m. Strings longer than 65535 bytes are cut to fit.
func (m *ChecksumRequest) Append(b []byte) []byte {
	w := dissect.NewWriter(append(b, byte(OpChecksumRequest)))
	w.U8(uint8(m.Round))
	w.String16([]byte(m.Dir))
	w.String16([]byte(m.Filter))
	w.Bit(m.Recursive)
	return w.Bytes()
}

func (m *ChecksumRequest) String() string {
	return fmt.Sprintf("round=%s dir=%q filter=%q recursive=%t", m.Round, m.Dir, m.Filter, m.Recursive)
}
