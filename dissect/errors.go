package dissect

import (
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"
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

// shortErrors holds recent truncation errors for shortError, in slots
// chosen by a hash of the offset and the field name.
var shortErrors [256]atomic.Pointer[Error]

// shortError returns the error of a read of what that ran short at offset
// off. A peer's message form that the dissector does not know is usually
// cut at the same field of every message (OpenBC's SubsystemStatus in its
// networked battle: once a packet), and an allocation for each of them
// was all that a damaged message added to the steady-state decode: the
// same *Error is handed out again for the same offset and field. An
// Error is never changed once made, so sharing one is safe, across
// goroutines too (the slots are atomic).
//
//go:noinline
func shortError(off int, what string) *Error {
	h := (uint(off)*0x9E3779B1 ^ uint(uintptr(unsafe.Pointer(unsafe.StringData(what))))>>3) % uint(len(shortErrors))
	if e := shortErrors[h].Load(); e != nil && e.Offset == off && e.What == what {
		return e
	}
	e := &Error{Offset: off, What: what, Err: ErrShort}
	shortErrors[h].Store(e)
	return e
}
