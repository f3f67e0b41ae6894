package game

import "github.com/bcwire/bcwire/dissect"

// ChecksumComplete (0x28) is the bare opcode the host sends once every
// checksum round has passed (and no file transfer is pending), in the same
// datagram as Settings (0x00) and GameInit (0x01). It has no fields.
type ChecksumComplete struct{}

func init() { register(OpChecksumComplete, func() Message { return new(ChecksumComplete) }) }

func (m *ChecksumComplete) Opcode() Opcode                   { return OpChecksumComplete }
func (m *ChecksumComplete) decode(*dissect.Reader, *Context) {}
func (m *ChecksumComplete) Append(b []byte) []byte           { return append(b, byte(OpChecksumComplete)) }
func (m *ChecksumComplete) String() string                   { return "" }
