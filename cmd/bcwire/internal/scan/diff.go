package scan

import (
	"net/netip"
	"path/filepath"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/session"
	"github.com/bcwire/bcwire/session/diff"
)

// LoadDiff reads one capture file into the diff engine's model: the one
// way `bcwire diff` and `bcwire verify` (its verdict) read a capture, so
// that both judge the same traffic alike.
func LoadDiff(io *iostreams.IOStreams, path string, servers []netip.AddrPort, rules *diff.Rules, quiet bool, copts capture.Options) (*diff.Capture, error) {
	b := diff.NewBuilder(filepath.Base(path), rules)
	_, err := Run(&Options{IO: io, Files: []string{path}, Servers: servers,
		Quiet: quiet, Record: b, Session: session.Options{}, Capture: copts},
		func(_ string, s *session.Session) error { b.AddSession(s); return nil })
	if err != nil {
		return nil, err
	}
	return b.Finish(), nil
}
