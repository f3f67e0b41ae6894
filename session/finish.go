package session

import (
	"fmt"
	"slices"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
)

// Finish: how a session ends (disconnect, boot, timeout) and the figures
// completed before it is emitted.

// Finish ends every session still open: those silent for longer than the
// timeout as timed out, the rest as open when the capture ended.
func (b *Builder) Finish() {
	for _, srv := range b.servers {
		for _, l := range srv.sessions {
			if !l.ending {
				if l.silent(b.clock, b.opts.Timeout) {
					l.timeout(b.opts.Timeout)
				} else {
					l.s.EndReason = EndOpen
				}
			}
			b.closing = append(b.closing, l)
		}
	}
	b.flushClosing()
	clear(b.opened)
	b.opened, b.head = b.opened[:0], 0
}

// end marks the session ended; it lingers to absorb what follows.
func (l *live) end(reason EndReason, t time.Time, frame int, by, text string) {
	s := l.s
	s.EndReason = reason
	s.EndBy = by
	s.setOnce(&s.Phases.End, t)
	l.eventAt(t, frame, string(reason), text)
	l.ending = true
	l.lingerUntil = stampOf(t.Add(l.opts.Linger))
}

func (l *live) timeout(after time.Duration) {
	l.end(EndTimeout, l.s.LastSeen, 0, "", fmt.Sprintf("no traffic for %s", after))
}

// finish completes the session's figures before it is emitted.
func (l *live) finish() {
	s := l.s
	for d := range l.streams {
		for ch := range l.streams[d] {
			l.streams[d][ch].finish()
		}
	}
	l.burst.flush(l)
	l.common.flush(&s.Traffic)
	if l.lastIsSeen {
		s.Traffic.Last = s.LastSeen
	}
	s.Reached = s.reached()
	for i := range l.rates.hints {
		l.flushRate(&l.rates.hints[i])
	}
	for i := range s.StateUpdates {
		u := &s.StateUpdates[i]
		if dt := u.Last.Sub(u.First).Seconds(); u.Count > 1 && dt > 0 {
			u.PerSecond = round(float64(u.Count-1)/dt, 1e3)
		}
	}
	s.Relay.FanOut = ratio(s.Relay.Copies, s.Relay.Messages)
	// (SortStableFunc, unlike sort.SliceStable, allocates nothing.)
	slices.SortStableFunc(s.Events, func(a, b Event) int { return a.Time.Compare(b.Time) })
	// Empty lists, not null, for programs reading the JSON.
	nonNil(&s.Checksums)
	nonNil(&s.Events)
	nonNil(&s.Chat)
	nonNil(&s.Ships)
	nonNil(&s.StateUpdates)
}

func nonNil[T any](s *[]T) {
	if *s == nil {
		*s = []T{}
	}
}

// reached derives the furthest phase from the phase times.
func (s *Session) reached() Phase {
	p := &s.Phases
	switch {
	case p.InGame != nil || p.FirstStateUpdate != nil || p.Destroyed != nil || p.Respawned != nil:
		return PhaseInGame
	case p.ChecksumDone != nil || p.Lobby != nil || p.NewPlayer != nil || p.MissionInit != nil:
		return PhaseLobby
	case len(s.Checksums) > 0:
		return PhaseChecksum
	case p.Connect != nil || p.ConnectReply != nil:
		return PhaseConnecting
	}
	return PhaseUnknown
}

// burst groups retransmissions that follow each other closely into one
// event.
type burst struct {
	start, last time.Time
	frame       int
	n           int
	by          [2][2]int // by direction index and channel
}

func (b *burst) note(l *live, r *flow.Record) {
	if b.n > 0 && r.Time.Sub(b.last) > l.opts.BurstGap {
		b.flush(l)
	}
	if b.n == 0 {
		b.start, b.frame = r.Time, r.Frame
	}
	b.n++
	b.last = r.Time
	b.by[DirIndex(r.Dir)][r.Msg.Type.Channel()]++
}

func (b *burst) flush(l *live) {
	if b.n >= l.opts.BurstMin && !l.eventsFull() {
		text := fmt.Sprintf("%d retransmissions in %s:", b.n, b.last.Sub(b.start).Round(time.Millisecond))
		for d := range 2 {
			for _, ch := range []dissect.Channel{dissect.ChannelData, dissect.ChannelControl} {
				if n := b.by[d][ch]; n > 0 {
					text += fmt.Sprintf(" %s %s %d", Dirs[d], ch, n)
				}
			}
		}
		l.eventAt(b.start, b.frame, EventRetransmitBurst, text)
	}
	*b = burst{}
}
