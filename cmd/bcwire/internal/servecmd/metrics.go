package servecmd

import (
	"net/netip"
	"sync"
	"time"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/report/metrics"
	"github.com/bcwire/bcwire/server/native"
	"github.com/bcwire/bcwire/session"
)

// serveMetrics dissects the server's own traffic (every datagram the Tap
// sees, in and out) with the pipeline `live` uses, for --metrics: the same
// dissector metrics, plus the server's counters.
type serveMetrics struct {
	mu   sync.Mutex
	tr   *flow.Tracker
	b    *session.Builder
	d    *metrics.Dissector
	last time.Time
	emit func(*flow.Record)
}

func newServeMetrics() *serveMetrics {
	m := &serveMetrics{tr: flow.New(flow.Options{}), b: session.NewBuilder(session.Options{}, nil), d: metrics.NewDissector()}
	m.emit = func(r *flow.Record) {
		m.b.Add(r)
		m.d.Observe(r)
	}
	return m
}

// tap feeds one datagram to the dissector; the snapshot for scrapes is
// taken at most once a second.
func (m *serveMetrics) tap(t time.Time, src, dst netip.AddrPort, wire []byte) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.tr.Datagram(0, t, ipv4(src), ipv4(dst), wire, m.emit)
	if t.Sub(m.last) >= metrics.Interval {
		m.last = t
		m.d.Update(m.b, m.tr.Stats(), capture.Stats{})
	}
}

// flush takes a snapshot now (at the end, and before a scrape in tests).
func (m *serveMetrics) flush() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.d.Update(m.b, m.tr.Stats(), capture.Stats{})
}

// serverCollector maps native.Stats to the metrics package's.
func serverCollector(srv *native.Server) *metrics.Server {
	return &metrics.Server{Stats: func() metrics.ServerStats {
		st := srv.Stats()
		drops := make(map[string]int, len(st.Drops))
		for r, n := range st.Drops {
			drops[native.DropReason(r).String()] = n // every reason, zero too: a series from the start
		}
		return metrics.ServerStats{DatagramsIn: st.DatagramsIn, DatagramsOut: st.DatagramsOut, GameSpy: st.GameSpy,
			Joined: st.Joined, Boots: st.Boots, ChecksumFailures: st.ChecksumFailures, Relayed: st.Relayed,
			Refused: st.Refused, Retransmits: st.Retransmits, Dropped: drops}
	}}
}
