package game

import (
	"fmt"

	"github.com/bcwire/bcwire/dissect"
)

// FileTransfer (0x25) carries one file from host to client after a checksum
// mismatch the host is willing to fix: the file name (u16 length + bytes)
// and then the file's bytes, which run to the end of the message (there is
// no length field for them). The client writes the file, reloads it if it is
// a script, and answers with FileTransferACK (0x27).
type FileTransfer struct {
	Name string  `json:"name"`
	Data HexData `json:"data"` // the rest of the message
}

func init() { register(OpFileTransfer, func() Message { return new(FileTransfer) }) }

func (m *FileTransfer) Opcode() Opcode { return OpFileTransfer }

func (m *FileTransfer) decode(r *dissect.Reader, ctx *Context) {
	m.Name = ctx.str(r.String16("file name"))
	m.Data = r.Bytes(r.Len(), "file data")
}

// Append encodes m. A name longer than 65535 bytes is cut to fit.
func (m *FileTransfer) Append(b []byte) []byte {
	w := dissect.NewWriter(append(b, byte(OpFileTransfer)))
	w.String16([]byte(m.Name))
	w.Raw(m.Data)
	return w.Bytes()
}

func (m *FileTransfer) String() string {
	return fmt.Sprintf("name=%q data=%d bytes", m.Name, len(m.Data))
}

// FileTransferACK (0x27) is the client's bare acknowledgement of a
// FileTransfer; the host then sends the next file or, when none is left,
// ChecksumComplete (0x28). It has no fields.
type FileTransferACK struct{}

func init() { register(OpFileTransferACK, func() Message { return new(FileTransferACK) }) }

func (m *FileTransferACK) Opcode() Opcode                   { return OpFileTransferACK }
func (m *FileTransferACK) decode(*dissect.Reader, *Context) {}
func (m *FileTransferACK) Append(b []byte) []byte           { return append(b, byte(OpFileTransferACK)) }
func (m *FileTransferACK) String() string                   { return "" }
