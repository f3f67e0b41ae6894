package native

import (
	"net/netip"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/server/stock"
)

// gamespy answers a plaintext query, at most once a second per source.
func (s *Server) gamespy(now time.Time, from netip.AddrPort, b []byte) {
	q, err := dissect.ParseGameSpy(b)
	if err != nil || !q.Query || !s.lim.allow(now, from) {
		s.stats.Dropped++
		return
	}
	s.stats.GameSpy++
	id := q.QueryID
	if id == "" {
		id = "1.1"
	}
	s.sendWire(now, from, stock.GameSpyReply(q.Kind, s.serverInfo(), id))
	s.log.Debug("gamespy", "client", from, "query", q.Kind)
}

// serverInfo is what GameSpy replies say about this server: its match, its
// name, the players connected, and the game mode, which is "openplaying"
// while someone is in the game and the match has not ended, "settings"
// otherwise.
func (s *Server) serverInfo() stock.ServerInfo {
	in := s.match.ServerInfo()
	in.Hostname, in.Password = s.o.Config.Name, s.o.Config.Password != ""
	in.GameMode = stock.GameModeSettings
	for _, p := range s.sortedPeers() {
		if p.phase != phClosing {
			in.NumPlayers++
			if p.name != "" {
				in.Players = append(in.Players, p.name)
			}
		}
		if p.phase == phGame && !s.ended {
			in.GameMode = stock.GameModePlaying
		}
	}
	return in
}

// limiter allows at most one reply a second per source and perSecond in
// all; it remembers at most maxSources sources.
type limiter struct {
	perSecond int
	last      map[netip.AddrPort]time.Time
	window    time.Time
	count     int
}

const maxSources = 4096

func (l *limiter) allow(now time.Time, from netip.AddrPort) bool {
	if now.Sub(l.window) >= time.Second {
		l.window, l.count = now, 0
	}
	if l.count >= l.perSecond {
		return false
	}
	if t, ok := l.last[from]; ok && now.Sub(t) < time.Second {
		return false
	}
	if len(l.last) >= maxSources {
		l.prune(now)
		if len(l.last) >= maxSources {
			return false
		}
	}
	l.last[from] = now
	l.count++
	return true
}

func (l *limiter) prune(now time.Time) {
	for k, t := range l.last {
		if now.Sub(t) >= time.Second {
			delete(l.last, k)
		}
	}
}
