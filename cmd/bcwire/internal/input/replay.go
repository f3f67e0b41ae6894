package input

// The capture that serve --replay and verify play: both read --server,
// load it and list its damage alike.

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/server/replay"
)

// ReplayServer reads the --server of serve --replay and verify: the one
// captured server whose sessions to play ("" when the capture has one).
func ReplayServer(server string) (replay.LoadOptions, error) {
	var lo replay.LoadOptions
	if server != "" {
		ap, err := ParseServer(server)
		if err != nil {
			return lo, err
		}
		lo.Server = ap
	}
	return lo, nil
}

// LoadReplay loads path as a replay script (until ctx ends) and lists its
// damage and its non-stock messages on errw. The error is an *exit.Error:
// a path that is missing or a directory, or a capture that cannot be
// replayed (see loadError).
func LoadReplay(ctx context.Context, errw io.Writer, path string, lo replay.LoadOptions) (*replay.Capture, error) {
	if err := CheckCapturePath(path); err != nil {
		return nil, err
	}
	lo.Interrupt = ctx.Done()
	c, err := replay.Load(path, lo)
	if err != nil {
		return nil, loadError(errw, path, c, err)
	}
	fmt.Fprint(errw, c.DamageSummary())
	fmt.Fprint(errw, c.NonStockSummary())
	return c, nil
}

// loadError is the exit status of a replay that could not be loaded: a
// capture with no session says so, after its damage (exit 1 when damaged,
// else 2); an interrupt while loading exits 130.
func loadError(errw io.Writer, path string, c *replay.Capture, err error) error {
	switch {
	case errors.Is(err, replay.ErrManyServers):
		return exit.Usage("%v with --server", err)
	case errors.Is(err, replay.ErrInterrupted):
		return &exit.Error{Code: exit.CodeInterrupted, Err: fmt.Errorf("%s: %w", path, replay.ErrInterrupted)}
	case errors.Is(err, replay.ErrNoSessions) && c != nil && c.DamageCount > 0:
		fmt.Fprint(errw, c.DamageSummary())
		return &exit.Error{Code: exit.CodeDamaged, Err: err}
	}
	return exit.IOError(path, err)
}
