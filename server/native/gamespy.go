package native

import (
	"net/netip"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/server/stock"
)

// gamespy answers a plaintext query: at most once a second per source,
// mastersRepliesPerSecond for a master, RepliesPerSecond in all.
func (s *Server) gamespy(now time.Time, from netip.AddrPort, b []byte) {
	q, err := dissect.ParseGameSpy(b)
	if err != nil || !q.Query {
		s.dropDatagram(now, from, DropGameSpyBad)
		return
	}
	m := s.master.byHost(from)
	lim := &s.lim
	if m != nil {
		lim = &s.master.lim
	}
	if !lim.allow(now, from) {
		s.dropDatagram(now, from, DropRateLimited)
		return
	}
	s.stats.GameSpy++
	s.sendWire(now, from, stock.GameSpyAnswer(&q, s.serverInfo()))
	s.log.Debug("gamespy", "client", from, "query", q.Kind, "queryid", q.QueryID)
	if m != nil && !m.registered {
		// A master that answers a heartbeat with \secure\ (or a query)
		// has the server on its list.
		m.registered = true
		s.log.Info("master server answered", "master", from, "query", q.Kind)
	}
}

// serverInfo is what GameSpy replies say about this server: its match, its
// name, its players (clients that have finished the checksum rounds: a
// connection still in them is no player yet, and a flood of connects must
// not show in the list or trigger heartbeats), and the game mode, which is
// "openplaying" while someone is in the game and the match has not ended,
// "settings" otherwise.
func (s *Server) serverInfo() stock.ServerInfo {
	in := s.match.ServerInfo()
	in.Hostname, in.Password = s.o.Config.Name, s.o.Config.Password != ""
	in.HostPort = s.local.Port()
	in.GameMode = stock.GameModeSettings
	for _, p := range s.sortedPeers() {
		if p.phase == phLobby || p.phase == phGame {
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

// limiter allows at most one reply per interval per source and
// perSecond in all; it remembers at most maxSources sources.
type limiter struct {
	perSecond int
	interval  time.Duration
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
	if t, ok := l.last[from]; ok && now.Sub(t) < l.interval {
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
		if now.Sub(t) >= l.interval {
			delete(l.last, k)
		}
	}
}
