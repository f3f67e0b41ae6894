package report

import (
	"io"
	"path/filepath"
	"testing"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/session"
)

// openBCSessions are the sessions of OpenBC's networked battle
// (testdata/openbc): many short ones, as its clients reconnect, each with
// non-stock rows.
func openBCSessions(tb testing.TB) []*session.Session {
	tb.Helper()
	rd, err := capture.Open(filepath.Join("..", "testdata", "openbc", "networked-battle.pcap"))
	if err != nil {
		tb.Fatal(err)
	}
	defer rd.Close()
	var ss []*session.Session
	if _, err := session.Scan(rd, session.ScanOptions{}, func(s *session.Session) error {
		ss = append(ss, s)
		return nil
	}); err != nil {
		tb.Fatal(err)
	}
	if len(ss) == 0 {
		tb.Fatal("no sessions")
	}
	return ss
}

// BenchmarkStatsSessionJSON writes every session of OpenBC's battle as
// `stats --json` does (rows built and appended); an op is one session.
func BenchmarkStatsSessionJSON(b *testing.B) {
	ss := openBCSessions(b)
	p := NewStatsPrinter(io.Discard, true, false, false)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if err := p.Session("networked-battle.pcap", ss[i%len(ss)]); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// Once the printer has written a session, the next ones reuse its rows,
// JSON buffer and memo: writing one allocates only the two address strings
// (netip's String).
func TestStatsSessionJSONReusesMemory(t *testing.T) {
	ss := openBCSessions(t)
	p := NewStatsPrinter(io.Discard, true, false, false)
	for _, s := range ss {
		if err := p.Session("networked-battle.pcap", s); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range ss {
		if a := testing.AllocsPerRun(20, func() { _ = p.Session("networked-battle.pcap", s) }); a > 2 {
			t.Errorf("session %s: %v allocations, want at most 2", s.Client, a)
		}
	}
}
