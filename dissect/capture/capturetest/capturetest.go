// Package capturetest loads the datagrams of a bundled capture into memory
// for tests and benchmarks of the packages that read captures. Only tests
// import it.
package capturetest

import (
	"io"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/internal/fixture"
)

// Datagram is one UDP datagram of a capture, its payload copied.
type Datagram struct {
	Frame    int
	Time     time.Time
	Src, Dst netip.AddrPort
	Payload  []byte
}

// LoadBattle reads every UDP datagram of the bundled 4-player battle
// (testdata/pcaps/battle.pcap at the repository root).
func LoadBattle(tb testing.TB) []Datagram {
	tb.Helper()
	return LoadCapture(tb, filepath.Join("testdata", "pcaps", "battle.pcap"))
}

// LoadCapture reads every UDP datagram of the capture at rel, a path from
// the repository root, into memory.
func LoadCapture(tb testing.TB, rel string) []Datagram {
	tb.Helper()
	rd, err := capture.Open(filepath.Join(fixture.RepoRoot(tb), rel))
	if err != nil {
		tb.Fatal(err)
	}
	defer rd.Close()
	var out []Datagram
	for {
		p, err := rd.Next()
		if err == io.EOF {
			return out
		}
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, Datagram{p.Frame, p.Time, p.Src, p.Dst, append([]byte(nil), p.Payload...)})
	}
}
