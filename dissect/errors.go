package dissect

import (
	"errors"
	"fmt"
)

// Error is a decoding failure at a byte offset. Offset counts from the start
// of whatever was being decoded: the datagram for transport errors, the game
// message (its opcode byte is offset 0) for game-layer errors.
type Error struct {
	Offset int
	What   string // the field or structure that could not be read
	Err    error  // the reason: ErrShort, ErrBadValue, ...
}

func (e *Error) Error() string {
	return fmt.Sprintf("offset %d: %s: %v", e.Offset, e.What, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Reasons wrapped by Error.
var (
	// ErrShort means the input ended before the field did.
	ErrShort = errors.New("truncated")
	// ErrBadValue means a field holds a value the format does not allow.
	ErrBadValue = errors.New("invalid value")
)
