package native

import (
	"net/netip"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/server/native/internal/inorder"
	"github.com/bcwire/bcwire/server/stock"
	"github.com/bcwire/bcwire/server/transport"
)

type phase uint8

const (
	phChecksum phase = iota + 1 // connect answered, checksum rounds running
	phLobby                     // Settings and GameInit sent, waiting for NewPlayerInGame
	phGame                      // MISSION_INIT sent: in the game
	phClosing                   // gone, kept to ACK and to deliver a boot
)

func (p phase) String() string {
	switch p {
	case phChecksum:
		return "checksum"
	case phLobby:
		return "lobby"
	case phGame:
		return "game"
	case phClosing:
		return "closing"
	}
	return "?"
}

type peer struct {
	addr  netip.AddrPort
	slot  byte // wire peer id, 2 and up
	index int  // game slot, 0 and up
	ip    netip.Addr
	name  string
	team  int // -1 until the player's ship says
	conn  *transport.Conn
	order inorder.Buffer
	phase phase
	round int // index of the checksum request outstanding
	// legacy: the client connected with the legacy framing
	// (Options.AcceptLegacyFraming).
	legacy bool

	joinedAt    time.Time
	connectedAt time.Time
	// waitingSince is when p last moved on in the checksum rounds: its
	// connect, then each answer (admission.go).
	waitingSince  time.Time
	lastHeard     time.Time
	nextKeepalive time.Time
	closeAt       time.Time
	score         game.Score
	dirty         bool
	nextUpdate    time.Time // the next host StateUpdates to this client
}

// drop ends p's time on the server: the others are told it left, its ships
// are forgotten, and its connection lingers (Timing.Linger) to ACK and
// deliver what is queued, unless the caller deletes it at once.
func (s *Server) drop(now time.Time, p *peer, reason string) {
	if p.phase == phClosing {
		return
	}
	wasInGame := p.phase == phGame
	p.phase = phClosing
	p.closeAt = now.Add(s.t.Linger)
	for id, sh := range s.ships {
		if sh.owner == p {
			delete(s.ships, id)
		}
	}
	for id, o := range s.objects {
		if o.owner == p {
			delete(s.objects, id)
		}
	}
	if wasInGame {
		for _, q := range s.peers {
			if q != p && q.phase == phGame {
				s.queueGame(q, stock.PlayerRemoved(p.index, p.slot))
				s.queueGame(q, &game.DeletePlayerAnim{Name: p.name})
			}
		}
	}
	s.log.Debug("peer closing", "client", p.addr, "slot", p.slot, "reason", reason)
}

// boot sends p a boot notice (type 0x04 with the reason byte) and drops it.
func (s *Server) boot(now time.Time, p *peer, reason byte, why string) {
	p.conn.Queue(dissect.TypeBoot, []byte{reason}, true, true)
	p.dirty = true
	s.stats.Boots++
	s.drop(now, p, "boot: "+why)
}

func disconnectPayload(p *peer) []byte {
	ip := p.ip
	if !ip.Is4() {
		ip = netip.IPv4Unspecified()
	}
	return stock.Disconnect(p.slot, ip)
}
