// Package metrics exports what the pipeline counts to Prometheus
// (dissector.go), and what a native server counts (server.go), on the
// `--metrics` HTTP endpoint, whose bounds (http.go, Limits) keep what a
// client can make it hold small. dashboard/bcwire.json is a Grafana
// dashboard of these metrics; a test holds it to the names exported here.
//
// The decode path pays (almost) nothing: the collectors read counters the
// pipeline already keeps (session.Counts, flow.Stats, capture.Stats) from a
// snapshot that the pipeline's own goroutine takes now and then (Update,
// once a second in `live`), and a scrape reads the snapshot under a lock.
// The one thing counted per record is what no stage keeps while a session
// is open: retransmissions and ACK round-trip times (Observe, a lookup in a
// fixed table).
//
// Label sets stay bounded: directions (2), opcodes and transport types
// (at most 256 each), GameSpy query kinds, damage kinds, and server
// endpoints (bounded by the flow tracker's MaxServers); never a client.
package metrics

import (
	"net/netip"
	"strconv"
	"sync"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/session"
	"github.com/prometheus/client_golang/prometheus"
)

// RTTBuckets are the upper bounds, in seconds, of the ACK round-trip
// histogram: loopback to a slow transatlantic link, then the game's
// retransmission timeouts.
var RTTBuckets = []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5}

var dirNames = [2]string{"c2s", "s2c"}

// Dissector collects the dissector's metrics. Observe and Update are
// called from the goroutine that runs the pipeline; Collect (a scrape)
// from any goroutine.
type Dissector struct {
	// Touched by the pipeline goroutine only.
	table   reliableTable
	live    pipelineCounts
	scratch session.Counts

	mu   sync.Mutex
	snap snapshot
}

// pipelineCounts are counted per record by Observe.
type pipelineCounts struct {
	bytes           [2]uint64 // datagram bytes by direction
	retransmissions [2]uint64
	rttBuckets      [12]uint64 // len(RTTBuckets)+1, the last one +Inf
	rttCount        uint64
	rttSum          float64
}

type snapshot struct {
	pipelineCounts
	counts       session.Counts
	flow         flow.Stats
	capture      capture.Stats
	open, ended  int
	players      map[netip.AddrPort]int
	sessionsOpen map[netip.AddrPort]int
}

// NewDissector returns an empty Dissector.
func NewDissector() *Dissector { return &Dissector{} }

// Observe counts one record: datagram bytes, retransmissions and ACK
// round-trip times. It does not allocate.
func (d *Dissector) Observe(r *flow.Record) {
	di := session.DirIndex(r.Dir)
	if di < 0 {
		return
	}
	if r.MsgIndex == 0 && (r.Kind == flow.KindMessage || r.Kind == flow.KindDamaged) {
		d.live.bytes[di] += uint64(len(r.Datagram))
	}
	if r.Kind != flow.KindMessage || r.Msg == nil {
		return
	}
	if r.Msg.Type != dissect.TypeAck && !r.Msg.Reliable {
		return
	}
	retx, rtt, ok := d.table.observe(r, di)
	if retx {
		d.live.retransmissions[di]++
	}
	if ok {
		s := rtt.Seconds()
		i := 0
		for i < len(RTTBuckets) && s > RTTBuckets[i] {
			i++
		}
		d.live.rttBuckets[i]++
		d.live.rttCount++
		d.live.rttSum += s
	}
}

// Update takes a snapshot of the pipeline's counters for the next scrape:
// the session builder's totals and open sessions, the flow tracker's and
// the capture decoder's statistics. It copies a few kilobytes; call it
// every second or so, not per record.
func (d *Dissector) Update(b *session.Builder, fs flow.Stats, cs capture.Stats) {
	// Copy outside the lock, then swap in: a scrape never waits for the
	// builder.
	c := &d.scratch
	*c = *b.Totals()
	gs := make(map[string]int, len(c.GameSpy))
	for k, v := range c.GameSpy {
		gs[k] = v
	}
	c.GameSpy = gs
	players, open := map[netip.AddrPort]int{}, map[netip.AddrPort]int{}
	for s := range b.Open() {
		open[s.Server]++
		if s.Reached >= session.PhaseLobby {
			players[s.Server]++
		}
	}
	d.mu.Lock()
	d.snap.pipelineCounts = d.live
	d.snap.counts, d.scratch = *c, session.Counts{}
	d.snap.flow, d.snap.capture = fs, cs
	d.snap.open, d.snap.ended = b.Live(), b.Emitted()
	d.snap.players, d.snap.sessionsOpen = players, open
	d.mu.Unlock()
}

var (
	descDatagrams       = desc("datagrams_total", "Bridge Commander datagrams seen, by direction.", "dir")
	descBytes           = desc("datagram_bytes_total", "Bytes of Bridge Commander datagrams (UDP payload), by direction.", "dir")
	descTransport       = desc("transport_messages_total", "Transport messages, by direction and transport type.", "dir", "type")
	descMessages        = desc("messages_total", "Game messages, by direction and opcode.", "dir", "opcode", "name")
	descMessageBytes    = desc("message_bytes_total", "Bytes of game messages, by direction and opcode.", "dir", "opcode", "name")
	descSessionsOpen    = desc("sessions_open", "Sessions open now, by server.", "server")
	descSessionsEnded   = desc("sessions_ended_total", "Sessions ended.")
	descPlayers         = desc("players", "Players (open sessions past the checksums) on each server.", "server")
	descRetransmissions = desc("retransmissions_total", "Reliable messages sent again, by direction of the sender.", "dir")
	descReassembled     = desc("fragments_reassembled_total", "Fragmented game messages completed.")
	descLost            = desc("fragments_lost_total", "Fragment sets never completed (evicted or unfinished at the end).")
	descDamage          = desc("damage_total", "Damaged input, by kind.", "kind")
	descRTT             = desc("ack_rtt_seconds", "Time from a reliable message to its ACK, as seen at the capture point (messages sent once).")
	descGameSpy         = desc("gamespy_datagrams_total", "GameSpy datagrams, by query kind (reply for the server's replies).", "kind")
	descNonStock        = desc("nonstock_messages_total", "Intact messages not in stock's form (not damage), by direction and the dissector's registry form (unknown when no form fits).", "dir", "form")
)

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc("bcwire_"+name, help, labels, nil)
}

// Describe sends the metrics' descriptions.
func (d *Dissector) Describe(ch chan<- *prometheus.Desc) {
	for _, x := range []*prometheus.Desc{descDatagrams, descBytes, descTransport, descMessages, descMessageBytes,
		descSessionsOpen, descSessionsEnded, descPlayers, descRetransmissions, descReassembled, descLost,
		descDamage, descRTT, descGameSpy, descNonStock} {
		ch <- x
	}
}

// Collect sends the values of the latest snapshot.
func (d *Dissector) Collect(ch chan<- prometheus.Metric) {
	d.mu.Lock()
	defer d.mu.Unlock()
	s := &d.snap
	counter := func(dsc *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(dsc, prometheus.CounterValue, v, labels...)
	}
	gauge := func(dsc *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(dsc, prometheus.GaugeValue, v, labels...)
	}
	for i, dir := range dirNames {
		counter(descDatagrams, float64(s.counts.Datagrams[i]), dir)
		counter(descBytes, float64(s.bytes[i]), dir)
		counter(descRetransmissions, float64(s.retransmissions[i]), dir)
		for t, tl := range s.counts.Transport[i] {
			if tl.Count > 0 {
				counter(descTransport, float64(tl.Count), dir, dissect.TransportType(t).String())
			}
		}
		for op, tl := range s.counts.Opcodes[i] {
			if tl.Count > 0 {
				code, name := opcodeLabels(game.Opcode(op))
				counter(descMessages, float64(tl.Count), dir, code, name)
				counter(descMessageBytes, float64(tl.Bytes), dir, code, name)
			}
		}
	}
	for srv, n := range s.sessionsOpen {
		gauge(descSessionsOpen, float64(n), srv.String())
		gauge(descPlayers, float64(s.players[srv]), srv.String())
	}
	counter(descSessionsEnded, float64(s.ended))
	counter(descReassembled, float64(s.flow.Reassembled))
	counter(descLost, float64(s.flow.FragmentsEvicted+s.flow.FragmentsLost))
	for _, k := range []struct {
		kind string
		n    int
	}{
		{"framing", s.flow.Damaged},
		{"capture", s.capture.Damaged - s.capture.BadChecksums},
		{"bad_checksum", s.capture.BadChecksums},
		{"ip_fragments_lost", s.capture.FragmentsEvicted},
	} {
		counter(descDamage, float64(k.n), k.kind)
	}
	buckets := make(map[float64]uint64, len(RTTBuckets))
	var cum uint64
	for i, ub := range RTTBuckets {
		cum += s.rttBuckets[i]
		buckets[ub] = cum
	}
	ch <- prometheus.MustNewConstHistogram(descRTT, s.rttCount, s.rttSum, buckets)
	for k, v := range s.counts.GameSpy {
		counter(descGameSpy, float64(v), k)
	}
	for d, dir := range dirNames {
		for f, n := range s.counts.NonStock[d] {
			if n > 0 {
				counter(descNonStock, float64(n), dir, dissect.Forms[f].Name)
			}
		}
	}
}

// opcodeLabels are an opcode's labels: its number in hex, and its name.
func opcodeLabels(op game.Opcode) (code, name string) {
	return "0x" + strconv.FormatUint(uint64(op)|0x100, 16)[1:], op.String()
}

// Interval is how often the pipeline should call Update.
const Interval = time.Second
