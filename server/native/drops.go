package native

import (
	"context"
	"log/slog"
	"net/netip"
	"time"
)

// DropReason says why the server ignored a datagram.
type DropReason uint8

// The reasons a datagram is dropped. Their String forms are the keys of
// the stop line's drop counts and of its JSON.
const (
	DropEmpty         DropReason = iota // a zero-length datagram
	DropGameSpyBad                      // starts with a backslash but is no GameSpy query (a reply, or malformed)
	DropRateLimited                     // a reply (GameSpy, refusal) it would have caused was over the rate limit
	DropNotConnect                      // from an unknown source, and not a connect request
	DropBadPeer                         // byte 0 is no client's peer id
	DropDamaged                         // a connected client's datagram that does not parse
	DropLegacyFraming                   // the legacy [type][len][flags] framing, not accepted without --accept-legacy-framing
	DropHalfOpen                        // a connect beyond the half-open bounds, with no place to take (admission.go)
	numDropReasons
)

var dropNames = [numDropReasons]string{"empty", "gamespy-not-query", "rate-limited", "not-connect",
	"bad-peer-id", "damaged", "legacy-framing", "half-open-full"}

func (r DropReason) String() string {
	if r < numDropReasons {
		return dropNames[r]
	}
	return "?"
}

// Drops counts dropped datagrams by reason.
type Drops [numDropReasons]int

// Total is the number of datagrams dropped for any reason.
func (d *Drops) Total() int {
	n := 0
	for _, c := range d {
		n += c
	}
	return n
}

// LogValue is the counts that are not zero, by reason name, so the stop
// line reads drops.rate-limited=3 (text) or "drops":{"rate-limited":3}
// (JSON).
func (d Drops) LogValue() slog.Value {
	var as []slog.Attr
	for r, c := range d {
		if c > 0 {
			as = append(as, slog.Int(DropReason(r).String(), c))
		}
	}
	return slog.GroupValue(as...)
}

// dropLogsPerSecond caps the debug lines about drops, so a flood cannot
// fill a disk: beyond it drops are counted, and the next line that is
// logged says how many went unlogged.
const dropLogsPerSecond = 10

// dropLog is the rate limit of the drop lines.
type dropLog struct {
	window     time.Time
	logged     int
	suppressed int
}

// dropDatagram counts a dropped datagram and logs it at debug level with its
// reason, source and any further attributes, within dropLogsPerSecond.
func (s *Server) dropDatagram(now time.Time, from netip.AddrPort, reason DropReason, args ...any) {
	s.stats.Drops[reason]++
	s.stats.Dropped++
	s.debugLimited(now, "datagram dropped", append([]any{"reason", reason.String(), "source", from}, args...)...)
}

// debugLimited logs at debug level, at most dropLogsPerSecond lines a
// second over all callers; the first line after a gap says how many were
// not written (unlogged_before).
func (s *Server) debugLimited(now time.Time, msg string, args ...any) {
	if !s.log.Enabled(context.Background(), slog.LevelDebug) {
		return
	}
	l := &s.dropLog
	if now.Sub(l.window) >= time.Second || now.Before(l.window) {
		l.window, l.logged = now, 0
	}
	if l.logged >= dropLogsPerSecond {
		l.suppressed++
		return
	}
	l.logged++
	if l.suppressed > 0 {
		args = append(args, "unlogged_before", l.suppressed)
		l.suppressed = 0
	}
	s.log.Debug(msg, args...)
}
