package game

import (
	"fmt"

	"github.com/bcwire/bcwire/dissect"
)

// ChecksumFail is the host's refusal after a checksum round: VersionMismatch
// (0x22, a file differs) or SystemChecksumFail (0x23, the round-0 version
// hash differs). Both carry the name of the failing file, which the client
// shows in its error dialog. Op says which of the two it is.
type ChecksumFail struct {
	Op   Opcode `json:"-"` // OpVersionMismatch or OpSystemChecksumFail
	File string `json:"file"`
}

func init() {
	register(OpVersionMismatch, func() Message { return &ChecksumFail{Op: OpVersionMismatch} })
	register(OpSystemChecksumFail, func() Message { return &ChecksumFail{Op: OpSystemChecksumFail} })
}

func (m *ChecksumFail) Opcode() Opcode { return m.Op }

func (m *ChecksumFail) decode(r *dissect.Reader, ctx *Context) {
	m.File = ctx.str(r.String16("file name"))
}

// Append encodes m with its Op (0x22 when Op is neither 0x22 nor 0x23, so a
// zero value still encodes as a checksum failure). A name longer than 65535
// bytes is cut to fit.
func (m *ChecksumFail) Append(b []byte) []byte {
	op := m.Op
	if op != OpVersionMismatch && op != OpSystemChecksumFail {
		op = OpVersionMismatch
	}
	w := dissect.NewWriter(append(b, byte(op)))
	w.String16([]byte(m.File))
	return w.Bytes()
}

func (m *ChecksumFail) String() string { return fmt.Sprintf("file=%q", m.File) }
