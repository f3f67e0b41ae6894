package measure

import (
	"fmt"
	"sort"

	"github.com/bcwire/bcwire/dissect/game"
)

// Finish computes the figures.
func (b *Builder) Finish() *Measures {
	m := &Measures{FlagFamilies: map[string]map[string]int{}}
	pool := map[[2]string]*struct {
		h     histogram
		lanes int
	}{}
	for _, cs := range b.clients {
		for d := range cs.ships {
			for i := range cs.ships[d] {
				cs.ships[d][i].sync()
			}
		}
	}
	b.shareIntervals()
	for _, l := range b.lanes {
		l.Updates = l.updates
		l.MeanMS, l.P50MS, l.P90MS = round3(l.iv.meanMS()), l.iv.quantile(0.5), l.iv.quantile(0.9)
		m.Lanes = append(m.Lanes, l)
		if l.iv.cnt == 0 {
			continue
		}
		k := [2]string{l.Dir, l.Family}
		p := pool[k]
		if p == nil {
			p = &struct {
				h     histogram
				lanes int
			}{}
			pool[k] = p
		}
		p.h.merge(&l.iv)
		p.lanes++
	}
	sortLanes(m.Lanes)
	for k, p := range pool {
		m.Cadence = append(m.Cadence, Cadence{Dir: k[0], Family: k[1], Lanes: p.lanes, Intervals: p.h.cnt,
			MeanMS: round3(p.h.meanMS()), P50MS: p.h.quantile(0.5), P90MS: p.h.quantile(0.9)})
	}
	sort.Slice(m.Cadence, func(i, j int) bool {
		a, c := m.Cadence[i], m.Cadence[j]
		if a.Dir != c.Dir {
			return a.Dir < c.Dir
		}
		return a.Family < c.Family
	})
	for d := range b.bytes {
		m.SubsystemBytes[d] = b.bytes[d]
		m.SubsystemBytes[d].Dir = Dirs[d]
	}
	families := b.famNoLane
	for _, l := range b.lanes {
		if l.fam < 16 {
			families[l.dir][l.fam] += l.updates
		}
	}
	for d := range families {
		fm := map[string]int{}
		for f, n := range families[d] {
			if n > 0 {
				fm[Family(f).String()] = n
			}
		}
		m.FlagFamilies[Dirs[d]] = fm
	}
	for d := range b.bundling {
		bu := &b.bundling[d]
		out := Bundling{Dir: Dirs[d], Max: bu.max, MaxFrame: bu.maxFrame, Counts: map[int]int{}}
		sum := 0 // messages
		for k, c := range bu.counts {
			if c > 0 {
				out.Counts[k] = c
				out.Datagrams += c
				sum += k * c
			}
		}
		if n := out.Datagrams; n > 0 {
			out.Mean = round3(float64(sum) / float64(n))
			out.P90 = countQuantile(bu.counts, n, 0.9)
		}
		m.Bundling[d] = out
	}
	for _, row := range b.relay.rows {
		if row == nil {
			continue
		}
		t := &b.relay.tallies[row.op]
		row.Messages, row.ToSender, row.ToOthers, row.Expected = t.messages, t.toSender, t.toOthers, t.expected
		row.Shares = fmt.Sprintf("sender %.0f%%, others %.0f%%", pct(row.ToSender, row.Messages), pct(row.ToOthers, row.Expected))
		m.Relay = append(m.Relay, row)
	}
	for _, r := range b.ids {
		m.ObjectIDs = append(m.ObjectIDs, r)
	}
	sort.Slice(m.ObjectIDs, func(i, j int) bool { return m.ObjectIDs[i].Slot < m.ObjectIDs[j].Slot })
	m.Deaths = b.deaths
	m.LanesDropped = b.lanesDropped
	// Empty lists, not null, for programs reading the JSON.
	nonNil(&m.Lanes)
	nonNil(&m.Cadence)
	nonNil(&m.Relay)
	nonNil(&m.ObjectIDs)
	nonNil(&m.Deaths)
	return m
}

// shareIntervals adds each family lane's shared intervals (Lane.sh) to
// its own and to those of its ship's every-update lane and, for a family
// carrying subsystems, its 0x20-bearing lane.
func (b *Builder) shareIntervals() {
	for _, sl := range b.ships.slots {
		set := sl.v
		if set == nil {
			continue
		}
		for fam := range Family(16) {
			f := set[slotOf(fam)]
			if f == nil || f.sh.cnt == 0 {
				continue
			}
			// (The lanes a shared interval counts in are kept: Add takes
			// none without them.)
			f.iv.addWindow(&f.sh)
			if a := set[slotAll]; a != nil {
				a.iv.addWindow(&f.sh)
			}
			if s := set[slotSubsystems]; s != nil && fam<<4&Family(game.StateSubsystems) != 0 {
				s.iv.addWindow(&f.sh)
			}
			f.sh = window{}
		}
	}
}

// countQuantile is the nearest-rank p quantile of n values counted by
// value in counts.
func countQuantile(counts []int, n int, p float64) int {
	rank := max(1, int(p*float64(n)+0.5))
	seen := 0
	for k, c := range counts {
		seen += c
		if seen >= rank {
			return k
		}
	}
	return 0
}

// Share is a percentage, 0 when the whole is 0.
func pct(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return 100 * float64(a) / float64(b)
}

func round3(v float64) float64 { return float64(int64(v*1000+0.5)) / 1000 }

func nonNil[T any](s *[]T) {
	if *s == nil {
		*s = []T{}
	}
}
