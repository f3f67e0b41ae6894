package diff

// Traffic in aggregate: keepalive cadence, rates per session-minute,
// StateUpdate flags, relaying and retransmissions.

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/session"
	"github.com/bcwire/bcwire/session/measure"
)

// compareKeepaliveCadence compares the server's keepalive spacing.
func (x *context) compareKeepaliveCadence(c *collector) {
	mean := func(cp *Capture) (time.Duration, int) {
		var sum time.Duration
		n := 0
		for _, s := range cp.Sessions {
			if s.Info != nil && s.Info.Keepalive.Server.Count >= 3 {
				sum += s.Info.Keepalive.Server.Mean
				n++
			}
		}
		if n == 0 {
			return 0, 0
		}
		return sum / time.Duration(n), n
	}
	mo, no := mean(x.ours)
	ms, ns := mean(x.stock)
	if no == 0 || ns == 0 {
		return
	}
	ratio := float64(mo) / float64(ms)
	if ratio > x.r.KeepaliveRatio || ratio < 1/x.r.KeepaliveRatio {
		c.add(Difference{Phase: PhaseGameplay, Severity: Minor, Kind: "keepalive-cadence", Key: "keepalive cadence",
			Summary: fmt.Sprintf("the server sends a keepalive every %s, stock every %s", mo.Round(time.Millisecond), ms.Round(time.Millisecond)),
			Ours:    []string{fmt.Sprintf("every %s (mean of %d sessions)", mo.Round(time.Millisecond), no)},
			Stock:   []string{fmt.Sprintf("every %s (mean of %d sessions)", ms.Round(time.Millisecond), ns)}}, 0)
	}
}

// compareRates compares per-opcode rates in the game. Client messages are
// counted per session-minute. The server's own messages are counted per
// client game message on the server (StateUpdates aside): most of them
// answer what players do, so their rate per minute grows with the players
// and what they do, and this measure does not.
func (x *context) compareRates(c *collector) {
	ta, tb := minutes(x.ours), minutes(x.stock)
	aa, ab := activity(x.ours), activity(x.stock)
	for d := 0; d < 2; d++ {
		dir := session.Dirs[d]
		ea, eb, unit, scale := ta, tb, "per session-minute", 1.0
		if dir == game.ServerToClient {
			ea, eb, unit, scale = float64(aa), float64(ab), "per 100 client game messages", 100
		}
		if ea <= 0 || eb <= 0 {
			continue
		}
		for op := 0; op < 256; op++ {
			if game.Opcode(op) == game.OpStateUpdate || (dir == game.ServerToClient && x.missing[game.Opcode(op)]) {
				continue
			}
			a, b := 0, 0
			for _, s := range x.ours.Sessions {
				a += s.Opcodes[d][op]
			}
			for _, s := range x.stock.Sessions {
				b += s.Opcodes[d][op]
			}
			x.rate(c, fmt.Sprintf("%s %s", dir, game.Opcode(op)), a, b, ea, eb, unit, scale, dir == game.ServerToClient)
		}
	}
}

func activity(c *Capture) int {
	n := 0
	for _, s := range c.Sessions {
		n += s.Activity
	}
	return n
}

// rate adds a difference when two counts over two exposures differ by more
// than the ratio allows and by more than chance explains.
func (x *context) rate(c *collector, what string, a, b int, ea, eb float64, unit string, scale float64, server bool) {
	if a == 0 && b == 0 {
		return
	}
	ra, rb := float64(a)/ea, float64(b)/eb
	ratio := math.Inf(1)
	if rb > 0 {
		ratio = ra / rb
	}
	if ratio <= x.r.RateRatio && ratio >= 1/x.r.RateRatio {
		return
	}
	if binomialP(a, a+b, ea/(ea+eb)) >= x.r.Alpha {
		return
	}
	sev := Minor
	if server && (ratio >= x.r.RateRatio*x.r.RateRatio || ratio <= 1/(x.r.RateRatio*x.r.RateRatio)) {
		sev = Major
	}
	c.add(Difference{Phase: PhaseGameplay, Severity: sev, Kind: "rate", Key: "rate " + what,
		Summary: fmt.Sprintf("%s: %.2f %s, stock %.2f (ratio %s)", what, scale*ra, unit, scale*rb, ratioText(ratio)),
		Ours:    []string{fmt.Sprintf("%d messages, %.2f %s", a, scale*ra, unit)},
		Stock:   []string{fmt.Sprintf("%d messages, %.2f %s", b, scale*rb, unit)}}, 0)
}

func ratioText(r float64) string {
	if math.IsInf(r, 1) {
		return "stock none"
	}
	return fmt.Sprintf("%.2f", r)
}

// compareStateUpdates compares StateUpdate rates per ship and the flags
// each direction uses.
func (x *context) compareStateUpdates(c *collector) {
	perShip := func(cp *Capture, dir string) (float64, int) {
		sum, n := 0.0, 0
		for _, s := range cp.Sessions {
			if s.Info == nil {
				continue
			}
			for _, r := range s.Info.StateUpdates {
				if r.Dir == dir && r.Count >= 20 {
					sum += r.PerSecond
					n++
				}
			}
		}
		if n == 0 {
			return 0, 0
		}
		return sum / float64(n), n
	}
	for d := 0; d < 2; d++ {
		dir := session.Dirs[d]
		ro, no := perShip(x.ours, dir.String())
		rs, ns := perShip(x.stock, dir.String())
		sev := Major
		if dir == game.ClientToServer {
			sev = Minor
		}
		var summary []string
		var ours, stock []string
		if no > 0 && ns > 0 {
			ratio := ro / rs
			if ratio > x.r.RateRatio || ratio < 1/x.r.RateRatio {
				summary = append(summary, fmt.Sprintf("%.1f per ship per second, stock %.1f (ratio %.2f)", ro, rs, ratio))
				ours = append(ours, fmt.Sprintf("%.2f/s per ship (%d ships)", ro, no))
				stock = append(stock, fmt.Sprintf("%.2f/s per ship (%d ships)", rs, ns))
			}
		}
		// The cadence per ship lane (interval p50/p90), held against the
		// published stock figure.
		if text, o, s, csev, ok := x.cadence(dir.String()); ok {
			summary, ours, stock = append(summary, text...), append(ours, o...), append(stock, s...)
			sev = max(sev, csev)
		}
		if len(summary) > 0 {
			c.add(Difference{Phase: PhaseGameplay, Severity: sev, Kind: "stateupdate-rate", Key: "stateupdate rate " + dir.String(),
				Summary: fmt.Sprintf("StateUpdates %s: %s", dir, strings.Join(summary, "; ")),
				Ours:    ours, Stock: stock}, 0)
		}
	}
	for d := range StateStreams {
		var uo, us int
		var fo, fs [8]int
		var frO, frS [8]int
		for _, s := range x.ours.Sessions {
			uo += s.StateUpdates[d]
			for b := 0; b < 8; b++ {
				if fo[b] == 0 {
					frO[b] = s.FlagFrame[d][b]
				}
				fo[b] += s.StateFlags[d][b]
			}
		}
		for _, s := range x.stock.Sessions {
			us += s.StateUpdates[d]
			for b := 0; b < 8; b++ {
				if fs[b] == 0 {
					frS[b] = s.FlagFrame[d][b]
				}
				fs[b] += s.StateFlags[d][b]
			}
		}
		if uo < x.r.MinCount || us < x.r.MinCount {
			continue
		}
		// One difference per stream, listing every flag whose share
		// differs. The motion flags (0x01-0x10) say what changed in the
		// flight, which a live run or another game never repeats: game
		// state, compared as a shape (minor). Subsystems, cloak and
		// weapons (0x20-0x80) are the protocol's split by direction:
		// major.
		var ours, stock, names []string
		var fro, frs []int
		sev := Minor
		for b := 0; b < 8; b++ {
			so, ss := float64(fo[b])/float64(uo), float64(fs[b])/float64(us)
			if math.Abs(so-ss) <= x.r.FlagShare {
				continue
			}
			flag := game.StateFlags(1 << b)
			if flag >= game.StateSubsystems {
				sev = Major
			}
			names = append(names, fmt.Sprintf("0x%02X (%s) %.0f%%, stock %.0f%%", uint8(flag), flag, 100*so, 100*ss))
			ours = append(ours, fmt.Sprintf("0x%02X %s: %d of %d updates", uint8(flag), flag, fo[b], uo))
			stock = append(stock, fmt.Sprintf("0x%02X %s: %d of %d updates", uint8(flag), flag, fs[b], us))
			fro, frs = addFrame(fro, frO[b]), addFrame(frs, frS[b])
		}
		if len(names) == 0 {
			continue
		}
		c.add(Difference{Phase: PhaseGameplay, Severity: sev, Kind: "stateupdate-flags",
			Key:     "stateupdate flags " + StateStreams[d],
			Summary: fmt.Sprintf("StateUpdates %s carry flags in other shares of updates than stock: %s", StateStreams[d], strings.Join(names, "; ")),
			Ours:    ours, Stock: stock, Frames: Frames{Ours: fro, Stock: frs}}, 0)
	}
	x.compareFamilies(c)
	x.compareSubsystemBytes(c)
}

// addFrame adds frame f to fs unless it is 0 or there already.
func addFrame(fs []int, f int) []int {
	if f == 0 || slices.Contains(fs, f) {
		return fs
	}
	return append(fs, f)
}

func nonZero(f int) []int {
	if f == 0 {
		return nil
	}
	return []int{f}
}

// compareRelay compares which client messages the server forwards to the
// other clients, per opcode.
func (x *context) compareRelay(c *collector) {
	sum := func(cp *Capture) (t [256]RelayTally) {
		for _, s := range cp.Sessions {
			for op := range s.Relay {
				r := s.Relay[op]
				t[op].Messages += r.Messages
				t[op].Relayed += r.Relayed
				t[op].Copies += r.Copies
				t[op].Expected += r.Expected
			}
		}
		return t
	}
	to, ts := sum(x.ours), sum(x.stock)
	var ours, stock, names []string
	for op := 0; op < 256; op++ {
		a, b := to[op], ts[op]
		if a.Messages < x.r.MinCount || b.Messages < x.r.MinCount {
			continue
		}
		sa, sb := float64(a.Relayed)/float64(a.Messages), float64(b.Relayed)/float64(b.Messages)
		fa, fb := share(a.Copies, a.Expected), share(b.Copies, b.Expected)
		if math.Abs(sa-sb) <= x.r.RelayShare && math.Abs(fa-fb) <= x.r.RelayShare {
			continue
		}
		name := game.Opcode(op).String()
		names = append(names, name)
		ours = append(ours, fmt.Sprintf("%s: %d of %d relayed (%.0f%%), %.0f%% of the copies due", name, a.Relayed, a.Messages, 100*sa, 100*fa))
		stock = append(stock, fmt.Sprintf("%s: %d of %d relayed (%.0f%%), %.0f%% of the copies due", name, b.Relayed, b.Messages, 100*sb, 100*fb))
	}
	n2, o2, s2 := x.relayReceivers()
	names, ours, stock = append(names, n2...), append(ours, o2...), append(stock, s2...)
	if len(names) == 0 {
		return
	}
	c.add(Difference{Phase: PhaseGameplay, Severity: Major, Kind: "relay", Key: "relay",
		Summary: fmt.Sprintf("the server forwards clients' game messages to the other clients differently from stock: %s; published: %s",
			strings.Join(names, ", "), measure.StockRelay),
		Ours: ours, Stock: stock}, 0)
}

func share(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

// compareRetransmissions compares how often reliable messages are sent
// again, per direction.
func (x *context) compareRetransmissions(c *collector) {
	for d := 0; d < 2; d++ {
		var ra, na, rb, nb int
		for _, s := range x.ours.Sessions {
			if s.Info != nil {
				t := channels(s.Info, d).Total()
				ra += t.Retransmissions
				na += t.Reliable
			}
		}
		for _, s := range x.stock.Sessions {
			if s.Info != nil {
				t := channels(s.Info, d).Total()
				rb += t.Retransmissions
				nb += t.Reliable
			}
		}
		if na == 0 || nb == 0 || ra+rb == 0 {
			continue
		}
		pa, pb := float64(ra)/float64(na), float64(rb)/float64(nb)
		ratio := math.Inf(1)
		if pb > 0 {
			ratio = pa / pb
		}
		if ratio <= x.r.RateRatio && ratio >= 1/x.r.RateRatio {
			continue
		}
		// Retransmissions among all copies: same test as the rates, with
		// the reliable message counts as exposure.
		if binomialP(ra, ra+rb, float64(na)/float64(na+nb)) >= x.r.Alpha {
			continue
		}
		dir := session.Dirs[d]
		c.add(Difference{Phase: PhaseGameplay, Severity: Minor, Kind: "retransmissions", Key: "retransmissions " + dir.String(),
			Summary: fmt.Sprintf("%s reliable messages are sent again %.1f%% of the time, stock %.1f%%", dir, 100*pa, 100*pb),
			Ours:    []string{fmt.Sprintf("%d retransmissions of %d reliable messages", ra, na)},
			Stock:   []string{fmt.Sprintf("%d retransmissions of %d reliable messages", rb, nb)}}, 0)
	}
}

func channels(s *session.Session, d int) *session.Channels {
	if d == 0 {
		return &s.Reliability.ClientToServer
	}
	return &s.Reliability.ServerToClient
}

// binomialP is the two-sided probability of a split at least as uneven as
// k of n when each event falls on the first side with probability p: the
// chance that two equal rates give counts this far apart.
func binomialP(k, n int, p float64) float64 {
	if n == 0 || p <= 0 || p >= 1 {
		return 1
	}
	if n > 2000 { // normal approximation, with continuity correction
		mean, sd := float64(n)*p, math.Sqrt(float64(n)*p*(1-p))
		z := (math.Abs(float64(k)-mean) - 0.5) / sd
		if z < 0 {
			return 1
		}
		return math.Erfc(z / math.Sqrt2)
	}
	// Sum the probabilities of every outcome no more likely than k's.
	pk := binomPMF(k, n, p)
	total := 0.0
	for i := 0; i <= n; i++ {
		if q := binomPMF(i, n, p); q <= pk*(1+1e-9) {
			total += q
		}
	}
	return math.Min(total, 1)
}

func binomPMF(k, n int, p float64) float64 {
	lg := func(x int) float64 { v, _ := math.Lgamma(float64(x) + 1); return v }
	return math.Exp(lg(n) - lg(k) - lg(n-k) + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
}
