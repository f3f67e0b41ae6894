package native

import (
	"net/netip"
	"strconv"
	"time"

	"github.com/bcwire/bcwire/server/stock"
)

// mastersRepliesPerSecond is how many GameSpy replies the master servers
// may get a second, each, back to back: a master answers a heartbeat with
// \secure\ and then may query \status\ at once (OpenBC
// docs/protocol/gamespy-protocol.md, "Master Server Handshake", step 4),
// which one reply a second would drop.
const mastersRepliesPerSecond = 5

// masterState is the registration with the master servers.
type masterState struct {
	list   []*master
	byAddr map[netip.AddrPort]*master
	lim    limiter
	next   time.Time // the next periodic heartbeat; zero before the first
	state  string    // the game state the last heartbeat reported
}

type master struct {
	addr       netip.AddrPort
	registered bool // it has sent \secure\ or a query
}

func newMasterState(addrs []netip.AddrPort) masterState {
	ms := masterState{byAddr: map[netip.AddrPort]*master{},
		lim: limiter{perSecond: mastersRepliesPerSecond * max(1, len(addrs)), last: map[netip.AddrPort]time.Time{}}}
	for _, a := range addrs {
		a = netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
		if ms.byAddr[a] == nil {
			m := &master{addr: a}
			ms.list = append(ms.list, m)
			ms.byAddr[a] = m
		}
	}
	return ms
}

// heartbeats sends what is due at now: the first heartbeat, the periodic
// one, or a state-change one when the game state, its mode (settings,
// openplaying) or its number of players, has changed since the last (the
// stock server sent one after a player left: OpenBC
// docs/network-flows/disconnect-flow.md, 7.3).
func (s *Server) heartbeats(now time.Time) {
	ms := &s.master
	if len(ms.list) == 0 {
		return
	}
	in := s.serverInfo()
	state := in.GameMode + "/" + strconv.Itoa(in.NumPlayers)
	switch {
	case ms.next.IsZero() || !now.Before(ms.next):
		s.sendHeartbeats(now, stock.HeartbeatPlain)
	case state != ms.state:
		s.sendHeartbeats(now, stock.HeartbeatStateChange)
	default:
		return
	}
	ms.state = state
	ms.next = now.Add(s.t.Heartbeat)
	ms.lim.prune(now)
}

// byHost is the master whose host sent from, on any port: a master
// queries from other ports than the one it takes heartbeats on
// (333networks' Masterserver-Qt5 checks servers from its port + 1, and
// one that learned of the server from another master sends \secure\ and
// \status\ back to back from there). The exact address wins.
func (ms *masterState) byHost(from netip.AddrPort) *master {
	if m := ms.byAddr[from]; m != nil {
		return m
	}
	a := from.Addr().Unmap()
	for _, m := range ms.list {
		if m.addr.Addr() == a {
			return m
		}
	}
	return nil
}

// finalHeartbeats tells every master the server is going.
func (s *Server) finalHeartbeats(now time.Time) {
	if len(s.master.list) > 0 {
		s.sendHeartbeats(now, stock.HeartbeatFinal)
	}
}

func (s *Server) sendHeartbeats(now time.Time, kind int) {
	hb := stock.Heartbeat(s.local.Port(), kind)
	for _, m := range s.master.list {
		s.sendWire(now, m.addr, hb)
	}
	s.log.Debug("master heartbeat", "kind", [...]string{"plain", "statechanged", "final"}[kind], "masters", len(s.master.list))
}
