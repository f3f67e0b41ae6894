package game

import "github.com/bcwire/bcwire/dissect"

// HostMsg (0x13) is a client's self-destruct request (Ctrl+D): the opcode
// byte alone. The host finds the sender's ship from the connection and
// destroys its reactor; the message itself names nothing. Any byte after
// the opcode is left undecoded (the Decoder reports it).
type HostMsg struct{}

func init() { register(OpHostMsg, func() Message { return new(HostMsg) }) }

func (m *HostMsg) Opcode() Opcode { return OpHostMsg }

func (m *HostMsg) decode(*dissect.Reader, *Context) {}

func (m *HostMsg) Append(b []byte) []byte { return append(b, byte(OpHostMsg)) }

func (m *HostMsg) String() string { return "" }
