package session

import (
	"encoding/json"
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
)

// battleRecords are the flow records of testdata/pcaps/battle.pcap, copied
// so that they outlive the tracker (which reuses its records, buffers and
// decoded messages), with what the Builder makes of them.
type battleRecords struct {
	recs     []flow.Record
	bytes    int           // UDP payload bytes of the capture
	span     time.Duration // first to last record
	sessions []byte        // JSON of the sessions and totals a Builder makes
}

func loadBattleRecords(tb testing.TB) *battleRecords {
	tb.Helper()
	return loadRecords(tb, filepath.Join("..", "testdata", "pcaps", "battle.pcap"))
}

// loadRecords is loadBattleRecords for any capture.
func loadRecords(tb testing.TB, path string) *battleRecords {
	tb.Helper()
	rd, err := capture.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer rd.Close()
	br := &battleRecords{}
	var ships game.ShipRegistry
	var sessions []*Session
	ref := NewBuilder(Options{}, func(s *Session) { sessions = append(sessions, s) })
	tr := flow.New(flow.Options{})
	keep := func(r *flow.Record) {
		ref.Add(r)
		br.recs = append(br.recs, copyRecord(r, &ships))
	}
	for {
		p, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			tb.Fatal(err)
		}
		br.bytes += len(p.Payload)
		tr.Datagram(p.Frame, p.Time, p.Src, p.Dst, p.Payload, keep)
	}
	tr.Finish(keep)
	ref.Finish()
	br.sessions = sessionsJSON(tb, sessions, ref.Totals())
	br.span = br.recs[len(br.recs)-1].Time.Sub(br.recs[0].Time)

	// The copies must make the same sessions as the tracker's own records,
	// or the benchmark measures something else.
	sessions = nil
	b := NewBuilder(Options{}, func(s *Session) { sessions = append(sessions, s) })
	for i := range br.recs {
		b.Add(&br.recs[i])
	}
	b.Finish()
	if got := sessionsJSON(tb, sessions, b.Totals()); string(got) != string(br.sessions) {
		tb.Fatalf("replayed records make different sessions:\n%s\nwant\n%s", got, br.sessions)
	}
	return br
}

func sessionsJSON(tb testing.TB, ss []*Session, totals *Counts) []byte {
	out, err := json.Marshal(struct {
		Sessions []*Session
		Totals   *Counts
	}{ss, totals})
	if err != nil {
		tb.Fatal(err)
	}
	return out
}

// copyRecord copies r and everything it points to. The decoder reuses one
// message value per type, so the game message is decoded again, by a
// decoder of its own that knows the ships decoded so far.
func copyRecord(r *flow.Record, ships *game.ShipRegistry) flow.Record {
	cp := *r
	cp.Raw = slices.Clone(r.Raw)
	if r.Msg != nil {
		m := *r.Msg
		m.Raw, m.Payload = slices.Clone(m.Raw), slices.Clone(m.Payload)
		cp.Msg = &m
	}
	if r.Control != nil {
		c := *r.Control
		c.Reserved, c.Extra = slices.Clone(c.Reserved), slices.Clone(c.Extra)
		cp.Control = &c
	}
	if r.NonStock != nil {
		ns := *r.NonStock
		ns.Rest = slices.Clone(ns.Rest)
		cp.NonStock = &ns
	}
	if r.GameSpy != nil {
		g := *r.GameSpy
		g.Fields = slices.Clone(g.Fields)
		cp.GameSpy = &g
	}
	if r.Game != nil {
		p := slices.Clone(r.Payload)
		d := &game.Decoder{Ships: *ships}
		res := d.Decode(p, r.Dir)
		*ships = d.Ships
		cp.Game, cp.Payload = &res, p
	}
	return cp
}

// BenchmarkBuilderBattle feeds the records of battle.pcap through one
// Builder, each op a copy of the battle shifted to start 5 s after the
// previous one ends (as bench/repeat builds /tmp/cur10.pcap): four players
// join, fight and leave, and their sessions are replaced by the next copy's.
// SetBytes is the capture's UDP payload size.
func BenchmarkBuilderBattle(b *testing.B) {
	benchmarkBuilder(b, loadBattleRecords(b))
}

// BenchmarkBuilderOpenBC is BenchmarkBuilderBattle on OpenBC's networked
// battle (testdata/openbc): a real peer's traffic, whose clients reconnect
// (a session ends at each reconnect: many short sessions) and whose
// non-stock messages each session counts.
func BenchmarkBuilderOpenBC(b *testing.B) {
	benchmarkBuilder(b, loadRecords(b, filepath.Join("..", "testdata", "openbc", "networked-battle.pcap")))
}

func benchmarkBuilder(b *testing.B, br *battleRecords) {
	orig := make([]time.Time, len(br.recs))
	for i := range br.recs {
		orig[i] = br.recs[i].Time
	}
	period := br.span + 5*time.Second
	emitted := 0
	var bl *Builder
	bl = NewBuilder(Options{}, func(s *Session) { emitted++; bl.Reuse(s) }) // as stats does
	b.SetBytes(int64(br.bytes))
	b.ReportAllocs()
	pass := 0
	for b.Loop() {
		b.StopTimer()
		shift := time.Duration(pass) * period
		for i := range br.recs {
			br.recs[i].Time = orig[i].Add(shift)
		}
		pass++
		b.StartTimer()
		for i := range br.recs {
			bl.Add(&br.recs[i])
		}
	}
	b.StopTimer()
	bl.Finish()
	b.ReportMetric(float64(len(br.recs)), "records/op")
	if emitted < pass {
		b.Fatalf("%d sessions from %d passes", emitted, pass)
	}
}
