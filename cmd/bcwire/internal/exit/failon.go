package exit

// --fail-on: what, besides damage, makes a reading command exit 1. A
// replacement server's own CI runs `bcwire stats --fail-on nonstock` to
// fail when its traffic departs from stock's form, which is otherwise
// reported and exits 0 (non-stock bytes are intact, not damage).

import (
	"fmt"

	"github.com/spf13/pflag"
)

// FailOn is the --fail-on value: "" (damage only) or "nonstock".
type FailOn string

// FailOnNonStock makes non-stock messages exit 1.
const FailOnNonStock FailOn = "nonstock"

// AddFailOnFlag adds --fail-on.
func AddFailOnFlag(f *pflag.FlagSet, v *FailOn) {
	f.StringVar((*string)(v), "fail-on", "", `also exit 1 for "nonstock": intact messages not in stock's form (damage always exits 1)`)
}

// Check reports a --fail-on value that is not known.
func (v FailOn) Check() error {
	switch v {
	case "", FailOnNonStock:
		return nil
	}
	return Usage("--fail-on %q: the only value is %q", string(v), FailOnNonStock)
}

// NonStockErr is the exit status non-stock messages call for: exit 1 with
// --fail-on nonstock when there are some, else nil.
func (v FailOn) NonStockErr(n int) error {
	if v != FailOnNonStock || n == 0 {
		return nil
	}
	return &Error{Code: CodeDamaged,
		Err: fmt.Errorf("%d non-stock messages (intact, not in stock's form) and --fail-on nonstock", n)}
}
