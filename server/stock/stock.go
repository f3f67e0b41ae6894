// Package stock holds what the stock Bridge Commander 1.1 dedicated server
// and stock clients put on the wire that more than one program here needs:
// the checksum round table, the default match settings and the messages
// built from them (Settings, MISSION_INIT, DeletePlayerUI), the keepalive
// identity, the GameSpy replies, the stock client's checksum responses, the
// host's relay policy (HostRoute) and its repair-list announcements
// (HostDamage).
//
// The capture generator (server/synth) and the native server
// (server/native) both build their traffic from it, so a capture of either
// shows the same messages in the same shape.
package stock

import (
	"fmt"
	"hash/fnv"
	"net/netip"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
)

// Port is the stock server's UDP port, for game traffic and GameSpy queries
// alike.
const Port = 22101

// ServerPeer is the wire peer id (datagram byte 0) of the server; clients get
// FirstClientPeer and up, in join order. A client that has no slot yet sends
// ConnectingPeer.
const (
	ServerPeer      = 0x01
	FirstClientPeer = 0x02
	ConnectingPeer  = 0xFF
)

// MaxPlayers is the most players a stock server takes.
const MaxPlayers = 16

// GameVersionHash is StringHash("60"), the game version that a stock
// client's round-0 checksum response carries as its reference hash.
const GameVersionHash game.Hash32 = 0x7E0CE243

// DefaultMap is the mission script of the stock Deathmatch map, and
// DefaultMapName the name GameSpy replies show for it.
const (
	DefaultMap     = "Multiplayer.Episode.Mission1.Mission1"
	DefaultMapName = "Mission1"
)

// ChecksumRounds are the stock server's five checksum requests, in the order
// it sends them, one at a time: each goes out when the previous one's
// response has arrived.
var ChecksumRounds = []game.ChecksumRequest{
	{Round: 0x00, Dir: "scripts/", Filter: "App.pyc"},
	{Round: 0x01, Dir: "scripts/", Filter: "Autoexec.pyc"},
	{Round: 0x02, Dir: "scripts/ships", Filter: "*.pyc", Recursive: true},
	{Round: 0x03, Dir: "scripts/mainmenu", Filter: "*.pyc"},
	{Round: 0xFF, Dir: "Scripts/Multiplayer", Filter: "*.pyc", Recursive: true},
}

// RoundIndex returns the position of round in ChecksumRounds, or -1.
func RoundIndex(round game.ChecksumRound) int {
	for i, r := range ChecksumRounds {
		if r.Round == round {
			return i
		}
	}
	return -1
}

// Match is a server's match configuration: what Settings, MISSION_INIT and
// the GameSpy replies say.
type Match struct {
	Map             string // mission script, DefaultMap when empty
	MaxPlayers      int    // player limit, 8 when 0
	CollisionDamage bool
	FriendlyFire    bool
	// TimeLimit is in minutes and FragLimit in kills; a negative value
	// means no limit.
	TimeLimit int
	FragLimit int
	System    uint8 // star system index of MISSION_INIT, 1 when 0
	// SystemName is the star system's script name that GameSpy replies
	// give, DefaultSystem when empty.
	SystemName string
}

// DefaultMatch is the stock dedicated server's default: Deathmatch on
// Mission1, 8 players, collision damage on, friendly fire off, no time
// limit, 10 frags.
var DefaultMatch = Match{Map: DefaultMap, MaxPlayers: 8, CollisionDamage: true, TimeLimit: -1, FragLimit: 10, System: 1}

func (m Match) withDefaults() Match {
	if m.Map == "" {
		m.Map = DefaultMap
	}
	if m.MaxPlayers == 0 {
		m.MaxPlayers = 8
	}
	if m.System == 0 {
		m.System = 1
	}
	if m.SystemName == "" {
		m.SystemName = DefaultSystem
	}
	return m
}

func limit(v int) uint8 {
	if v < 0 || v >= game.NoLimit {
		return game.NoLimit
	}
	return uint8(v)
}

// Settings is the Settings (0x00) message for the player in game slot
// playerSlot (0 for the first client), with the host's game clock at
// gameTime seconds.
func (m Match) Settings(gameTime float32, playerSlot int) *game.Settings {
	m = m.withDefaults()
	return &game.Settings{GameTime: gameTime, CollisionDamage: m.CollisionDamage, FriendlyFire: m.FriendlyFire,
		PlayerSlot: uint8(playerSlot), Map: m.Map}
}

// MissionInit is the MISSION_INIT (0x35) message; endTime is the game-clock
// second the match ends, used only with a time limit.
func (m Match) MissionInit(endTime int32) *game.MissionInit {
	m = m.withDefaults()
	mi := &game.MissionInit{PlayerLimit: uint8(m.MaxPlayers), System: m.System,
		TimeLimit: limit(m.TimeLimit), FragLimit: limit(m.FragLimit)}
	if mi.TimeLimit != game.NoLimit {
		mi.EndTime = endTime
	}
	return mi
}

// JoinBundle is what the stock server sends in one datagram once every
// checksum round has passed: ChecksumComplete (0x28), Settings and GameInit.
func (m Match) JoinBundle(gameTime float32, playerSlot int) []game.Message {
	return []game.Message{&game.ChecksumComplete{}, m.Settings(gameTime, playerSlot), &game.GameInit{}}
}

// PlayerListTarget is the destination object of the DeletePlayerUI events
// about the player in game slot playerSlot.
func PlayerListTarget(playerSlot int) game.ObjectID { return game.ObjectID(0x064F + playerSlot) }

// PlayerJoined is the DeletePlayerUI (0x17) the host sends a joining player
// right after MISSION_INIT: "new player in game".
func PlayerJoined(playerSlot int, peer byte) *game.DeletePlayerUI {
	return &game.DeletePlayerUI{Class: game.EventClassDeletePlayer, Code: game.ETNewPlayerInGame,
		Target: PlayerListTarget(playerSlot), Peer: peer}
}

// PlayerRemoved is the DeletePlayerUI the host sends the others when a
// player has left.
func PlayerRemoved(playerSlot int, peer byte) *game.DeletePlayerUI {
	return &game.DeletePlayerUI{Class: game.EventClassDeletePlayer, Code: game.ETNetworkPlayerRemoved,
		Target: PlayerListTarget(playerSlot), Peer: peer}
}

// Identity is the peer-info (type 0x00) payload that serves as keepalive:
// the client's wire slot, its IPv4 address and its name. The stock server
// echoes the client's own.
func Identity(peer byte, addr netip.Addr, name string) dissect.Control {
	return dissect.Control{Kind: "peer-info", Slot: &peer, Addr: ipv4(addr), Name: name}
}

// ipv4 is addr as IPv4, or 0.0.0.0 for an address that has no IPv4 form
// (the wire has room for IPv4 only).
func ipv4(addr netip.Addr) netip.Addr {
	if a := addr.Unmap(); a.Is4() {
		return a
	}
	return netip.IPv4Unspecified()
}

// ConnectRequest is the stock client's connect (sent as type 0x03): its own
// IPv4 address and port and four reserved zero bytes.
func ConnectRequest(addr netip.AddrPort) dissect.Control {
	return dissect.Control{Kind: "connect-request", Addr: ipv4(addr.Addr()), Port: addr.Port(), Reserved: make([]byte, 4)}
}

// Disconnect is the payload of a graceful disconnect (type 0x05): the
// leaving client's wire slot and IPv4 address.
func Disconnect(peer byte, addr netip.Addr) []byte {
	a := ipv4(addr).As4()
	return append([]byte{peer}, a[:]...)
}

// Boot reasons (the byte a type 0x04 boot message carries).
const (
	BootKicked   byte = 0
	BootVersion  byte = 1
	BootFull     byte = 2
	BootBanned   byte = 3
	BootChecksum byte = 4
)

// ChecksumResponse is a stock client's answer to checksum round round, with
// hash values derived from the file names so they are stable. The round-0
// answer carries GameVersionHash; round 2 (the ship scripts, recursive) is
// large enough to travel in fragments, as in stock traffic.
func ChecksumResponse(round game.ChecksumRound) *game.ChecksumResponse {
	req := game.ChecksumRequest{Round: round}
	if i := RoundIndex(round); i >= 0 {
		req = ChecksumRounds[i]
	}
	return ChecksumResponseTo(&req)
}

// ChecksumResponseTo is the stock client's answer to req, which may name a
// directory other than the stock one (its hash goes into the answer).
func ChecksumResponseTo(req *game.ChecksumRequest) *game.ChecksumResponse {
	round := req.Round
	h := func(s string) game.Hash32 {
		f := fnv.New32a()
		f.Write([]byte(s))
		return game.Hash32(f.Sum32())
	}
	resp := &game.ChecksumResponse{Round: round, DirHash: h(req.Dir)}
	if round == 0 {
		resp.RefHash = GameVersionHash
	}
	files := func(prefix string, n int) []game.ChecksumFile {
		out := make([]game.ChecksumFile, n)
		for i := range out {
			name := fmt.Sprintf("%s/%d.pyc", prefix, i)
			out[i] = game.ChecksumFile{Name: h(name), Content: h("content:" + name)}
		}
		return out
	}
	switch round {
	case 0, 1:
		resp.Tree.Files = files(req.Filter, 1)
	case 2:
		resp.Tree.Files = files("ships", 60)
		resp.Tree.Subdirs = []game.ChecksumSubdir{
			{Name: h("Hardpoints"), Tree: game.ChecksumTree{Files: files("ships/Hardpoints", 48)}},
		}
	case 3:
		resp.Tree.Files = files("mainmenu", 12)
	default:
		resp.Tree.Files = files("Multiplayer", 20)
		resp.Tree.Subdirs = []game.ChecksumSubdir{
			{Name: h("Episode"), Tree: game.ChecksumTree{Files: files("Multiplayer/Episode", 4)}},
		}
	}
	return resp
}
