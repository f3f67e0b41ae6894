package input

import (
	"errors"
	"fmt"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/server/replay"
)

// ReplayLoadError is the exit status of a replay (serve --replay, verify)
// that could not be loaded: a capture with no session says so, after its
// damage (exit 1 when damaged, else 2); an interrupt while loading exits
// 130.
func ReplayLoadError(io *iostreams.IOStreams, path string, c *replay.Capture, err error) error {
	switch {
	case errors.Is(err, replay.ErrManyServers):
		return exit.Usage("%v with --server", err)
	case errors.Is(err, replay.ErrInterrupted):
		return &exit.Error{Code: exit.CodeInterrupted, Err: fmt.Errorf("%s: %w", path, replay.ErrInterrupted)}
	case errors.Is(err, replay.ErrNoSessions) && c != nil && c.DamageCount > 0:
		fmt.Fprint(io.Err, c.DamageSummary())
		return &exit.Error{Code: exit.CodeDamaged, Err: err}
	}
	return exit.IOError(path, err)
}
