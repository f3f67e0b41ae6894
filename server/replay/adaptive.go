package replay

import (
	"context"
	"errors"
)

func (v *verifier) runAdaptive(ctx context.Context) error {
	return errors.New("adaptive mode: not written yet")
}
