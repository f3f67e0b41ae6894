package game

import "github.com/bcwire/bcwire/dissect"

// GameInit (0x01) is the bare opcode the host sends right after Settings:
// the client sets up the multiplayer game with those settings and shows ship
// selection. It has no fields.
type GameInit struct{}

func init() { register(OpGameInit, func() Message { return new(GameInit) }) }

func (m *GameInit) Opcode() Opcode                   { return OpGameInit }
func (m *GameInit) decode(*dissect.Reader, *Context) {}
func (m *GameInit) Append(b []byte) []byte           { return append(b, byte(OpGameInit)) }
func (m *GameInit) String() string                   { return "" }
