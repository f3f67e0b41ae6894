package diff

// The measures OpenBC's developers compute by hand (session/measure), as
// parts of the stateupdate-rate, stateupdate-flags and relay rules, and
// the datagram-size rule: each difference cites the published stock figure
// and shows both sides' numbers.

import (
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/bcwire/bcwire/session/measure"
)

// cadenceStreams are the StateUpdate streams whose cadence is compared,
// with the published stock figure each is held against.
// The p50 decides and the p90 is shown: a p90 is the sending machine's
// jitter as much as the server's policy (a busy host's timers run late),
// while OpenBC's gap (0.142 s against 0.100 s) moves the median.
var cadenceStreams = []struct {
	dir, family, figure string
	sev                 Severity
}{
	{"S->C", measure.FamilySubsystems, measure.StockDownstreamCadence, Major},
	{"S->C", measure.FamilyAll, measure.StockDownstreamCadence, Major},
	{"C->S", measure.FamilyAll, measure.StockUpstreamCadence, Minor},
}

// cadence compares the spacing of one direction's StateUpdates per ship
// lane: the p50 and p90 of the intervals pooled over every lane of the
// stream. It returns nothing when they agree within CadenceRatio; the
// stateupdate-rate rule reports it with the per-ship rate.
func (x *context) cadence(dir string) (summary []string, ours, stock []string, sev Severity, ok bool) {
	mo, ms := x.ours.Measures, x.stock.Measures
	if mo == nil || ms == nil {
		return
	}
	show := func(family string, v *measure.Cadence) string {
		if v == nil {
			return family + " lanes: none"
		}
		return fmt.Sprintf("%s lanes: p50 %.3f s, p90 %.3f s, mean %.3f s (%d intervals in %d lanes)",
			family, v.P50MS/1000, v.P90MS/1000, v.MeanMS/1000, v.Intervals, v.Lanes)
	}
	figure := ""
	for _, st := range cadenceStreams {
		if st.dir != dir {
			continue
		}
		o, s := mo.CadenceOf(st.dir, st.family), ms.CadenceOf(st.dir, st.family)
		if s == nil || s.Intervals < 4*x.r.MinCount || s.P50MS <= 0 {
			continue
		}
		switch {
		case o == nil || o.Intervals == 0:
			summary = append(summary, fmt.Sprintf("no %s StateUpdates, stock one every %.3f s per ship lane (p90 %.3f s)", st.family, s.P50MS/1000, s.P90MS/1000))
		case o.Intervals < 4*x.r.MinCount:
			continue
		case beyond(o.P50MS/math.Max(s.P50MS, 1), x.r.CadenceRatio):
			summary = append(summary, fmt.Sprintf("%s StateUpdates come every %.3f s per ship lane (p50; p90 %.3f s), stock every %.3f s (p90 %.3f s)",
				st.family, o.P50MS/1000, o.P90MS/1000, s.P50MS/1000, s.P90MS/1000))
		default:
			continue
		}
		ours, stock = append(ours, show(st.family, o)), append(stock, show(st.family, s))
		sev, ok, figure = max(sev, st.sev), true, st.figure
	}
	if ok {
		summary = append(summary, "published: "+figure)
	}
	return summary, ours, stock, sev, ok
}

func beyond(ratio, limit float64) bool { return ratio > limit || ratio < 1/limit }

// compareFamilies compares, per direction, the share of StateUpdates in
// each flag family (the flags byte's high nibble).
func (x *context) compareFamilies(c *collector) {
	mo, ms := x.ours.Measures, x.stock.Measures
	if mo == nil || ms == nil {
		return
	}
	for _, dir := range measure.Dirs {
		fo, fs := mo.FlagFamilies[dir], ms.FlagFamilies[dir]
		no, ns := total(fo), total(fs)
		if no < x.r.MinCount || ns < x.r.MinCount {
			continue
		}
		var names []string
		for _, f := range unionKeys(fo, fs) {
			so, ss := float64(fo[f])/float64(no), float64(fs[f])/float64(ns)
			if math.Abs(so-ss) > x.r.FlagShare {
				names = append(names, fmt.Sprintf("%s %.0f%%, stock %.0f%%", f, 100*so, 100*ss))
			}
		}
		if len(names) == 0 {
			continue
		}
		c.add(Difference{Phase: PhaseGameplay, Severity: Major, Kind: "stateupdate-flags",
			Key:     "stateupdate families " + dir,
			Summary: fmt.Sprintf("%s StateUpdates fall in other flag families than stock's: %s; published: %s", dir, strings.Join(names, "; "), measure.StockFamilies),
			Ours:    []string{familyMix(fo, no)}, Stock: []string{familyMix(fs, ns)}}, 0)
	}
}

func total(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func unionKeys(a, b map[string]int) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range []map[string]int{a, b} {
		for k := range m {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	sort.Strings(out)
	return out
}

// familyMix is "0x2x 30%, 0x3x 70% of 6845", largest families first.
func familyMix(m map[string]int, n int) string {
	keys := unionKeys(m, nil)
	sort.SliceStable(keys, func(i, j int) bool { return m[keys[i]] > m[keys[j]] })
	var parts []string
	for _, k := range keys {
		if p := 100 * float64(m[k]) / float64(n); p >= 0.5 {
			parts = append(parts, fmt.Sprintf("%s %.0f%%", k, p))
		}
	}
	return fmt.Sprintf("%s of %d updates", strings.Join(parts, ", "), n)
}

// compareSubsystemBytes compares the byte distribution of the servers'
// subsystem blocks (S->C 0x20 updates): the total variation distance
// between the two distributions, against FlagShare. Health and power
// values are game state, so it is minor.
func (x *context) compareSubsystemBytes(c *collector) {
	mo, ms := x.ours.Measures, x.stock.Measures
	if mo == nil || ms == nil {
		return
	}
	o, s := &mo.SubsystemBytes[1], &ms.SubsystemBytes[1]
	if o.Blocks < x.r.MinCount || s.Blocks < x.r.MinCount {
		return
	}
	tv := 0.0
	for v := 0; v < 256; v++ {
		tv += math.Abs(o.Share(byte(v)) - s.Share(byte(v)))
	}
	tv /= 2
	if tv <= x.r.FlagShare {
		return
	}
	show := func(h *measure.ByteHistogram) []string {
		idx := make([]int, 256)
		for i := range idx {
			idx[i] = i
		}
		sort.SliceStable(idx, func(a, b int) bool { return h.Counts[idx[a]] > h.Counts[idx[b]] })
		var parts []string
		for _, v := range idx[:4] {
			parts = append(parts, fmt.Sprintf("0x%02X %.0f%%", v, 100*h.Share(byte(v))))
		}
		return []string{fmt.Sprintf("%s of %d bytes in %d blocks", strings.Join(parts, ", "), h.Bytes, h.Blocks)}
	}
	c.add(Difference{Phase: PhaseGameplay, Severity: Minor, Kind: "stateupdate-flags", Key: "stateupdate subsystem bytes S->C",
		Summary: fmt.Sprintf("the bytes of S->C subsystem blocks (0x20) are distributed otherwise than stock's: %.0f%% of them would have to change value (total variation); published: %s",
			100*tv, measure.StockSubsystemBytes),
		Ours: show(o), Stock: show(s)}, 0)
}

// relayReceivers compares, per opcode, how often a client's message comes
// back to its sender (stock echoes chat, not combat events): the relay
// matrix's sender column, the others' column being compareRelay's.
func (x *context) relayReceivers() (names, ours, stock []string) {
	mo, ms := x.ours.Measures, x.stock.Measures
	if mo == nil || ms == nil {
		return nil, nil, nil
	}
	rows := map[string]*measure.RelayRow{}
	for _, r := range ms.Relay {
		rows[r.Opcode] = r
	}
	for _, o := range mo.Relay {
		s := rows[o.Opcode]
		if s == nil || o.Messages < x.r.MinCount || s.Messages < x.r.MinCount {
			continue
		}
		so, ss := share(o.ToSender, o.Messages), share(s.ToSender, s.Messages)
		if math.Abs(so-ss) <= x.r.RelayShare {
			continue
		}
		names = append(names, o.Opcode+" (to its sender)")
		ours = append(ours, fmt.Sprintf("%s: %d of %d back to the sender (%.0f%%)", o.Opcode, o.ToSender, o.Messages, 100*so))
		stock = append(stock, fmt.Sprintf("%s: %d of %d back to the sender (%.0f%%)", s.Opcode, s.ToSender, s.Messages, 100*ss))
	}
	return names, ours, stock
}

// compareBundling compares how many messages the server puts in one
// datagram: the 90th percentile and the maximum.
func (x *context) compareBundling(c *collector) {
	mo, ms := x.ours.Measures, x.stock.Measures
	if mo == nil || ms == nil {
		return
	}
	if len(x.ours.Sessions) != len(x.stock.Sessions) {
		return // more players, more messages to bundle: only like compares with like
	}
	o, s := mo.Bundling[1], ms.Bundling[1]
	if o.Datagrams < x.r.MinCount || s.Datagrams < x.r.MinCount || s.P90 == 0 {
		return
	}
	if !beyond(float64(o.P90)/float64(s.P90), x.r.RateRatio) && !beyond(float64(max(o.Max, 1))/float64(max(s.Max, 1)), 2*x.r.RateRatio) {
		return
	}
	show := func(b measure.Bundling) []string {
		return []string{fmt.Sprintf("%d datagrams: mean %.2f, p90 %d, max %d messages (frame %d)", b.Datagrams, b.Mean, b.P90, b.Max, b.MaxFrame)}
	}
	c.add(Difference{Phase: PhaseGameplay, Severity: Minor, Kind: "datagram-size", Key: "datagram-size S->C",
		Summary: fmt.Sprintf("the server bundles %d messages in a datagram at the 90th percentile (max %d), stock %d (max %d); published: %s",
			o.P90, o.Max, s.P90, s.Max, measure.StockBundling),
		Ours: show(o), Stock: show(s), Frames: Frames{Ours: nonZero(o.MaxFrame), Stock: nonZero(s.MaxFrame)}}, 0)
}
