package flow

import (
	"errors"
	"fmt"
	"testing"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
)

// A game decode error reads as the opcode and the decoder's error, as
// fmt.Errorf("%v: %w") made it; the same shared truncation error under the
// same opcode is wrapped once; anything else gets a new error each time.
func TestGameErrWrapsOncePerOpcodeAndError(t *testing.T) {
	var tr Tracker
	short := &dissect.Error{Offset: 9, What: "source object", Err: dissect.ErrShort}
	e1 := tr.gameErr(game.OpSubsystemStatus, short)
	if want := fmt.Errorf("%v: %w", game.OpSubsystemStatus, short).Error(); e1.Error() != want {
		t.Errorf("Error() = %q, want %q", e1.Error(), want)
	}
	if !errors.Is(e1, dissect.ErrShort) {
		t.Error("the wrapped error is not ErrShort")
	}
	if e2 := tr.gameErr(game.OpSubsystemStatus, short); e2 != e1 {
		t.Error("the same opcode and error were wrapped again")
	}
	other := &dissect.Error{Offset: 9, What: "source object", Err: dissect.ErrShort}
	if e3 := tr.gameErr(game.OpSubsystemStatus, other); e3 == e1 {
		t.Error("another error value got the first one's wrapper")
	}
	plain := errors.New("odd")
	if a, b := tr.gameErr(game.OpSubsystemStatus, plain), tr.gameErr(game.OpSubsystemStatus, plain); a == b {
		t.Error("an error of another type was cached")
	}
}
