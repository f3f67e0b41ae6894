package flow

import (
	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
)

// gameError is a game message's decode error named with its opcode:
// "SubsystemStatus: offset 9: source object: truncated".
type gameError struct {
	op  game.Opcode
	err error
	msg string
}

func (e *gameError) Error() string { return e.msg }
func (e *gameError) Unwrap() error { return e.err }

// gameErr returns the error of a message with opcode op that failed to
// decode with err. When err is one of the shared truncation errors that
// dissect hands out again for the same field (a peer's form the dissector
// does not know, met in message after message), the wrapped error made
// for it last time is handed out again, so that such damage costs no
// allocation in steady state; errors are never changed once made.
func (t *Tracker) gameErr(op game.Opcode, err error) error {
	_, ok := err.(*dissect.Error)
	slot := &t.errs[uint8(op)%uint8(len(t.errs))]
	if ok && *slot != nil && (*slot).op == op && (*slot).err == err {
		return *slot
	}
	e := &gameError{op: op, err: err, msg: op.String() + ": " + err.Error()}
	if ok {
		*slot = e
	}
	return e
}
