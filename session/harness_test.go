package session

import (
	"net/netip"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
)

// harness plays a scripted conversation through a flow.Tracker (encrypted
// datagrams, as a capture holds them) into a Builder, keeping the sequence
// numbers of each side the way a stock peer does.
type harness struct {
	t        *testing.T
	tr       *flow.Tracker
	b        *Builder
	now      time.Time
	frame    int
	server   netip.AddrPort
	sessions []*Session
	peers    map[netip.AddrPort]*peer
}

// peer is one endpoint's transport state.
type peer struct {
	id  byte      // byte 0 of its datagrams
	seq [2]uint16 // next sequence number by dissect.Channel
}

var (
	testServer  = netip.MustParseAddrPort("10.0.0.1:22101")
	testClient  = netip.MustParseAddrPort("10.0.0.2:53000")
	testClient2 = netip.MustParseAddrPort("10.0.0.3:53001")
	testStart   = time.Date(2024, 5, 1, 20, 0, 0, 0, time.UTC)
)

func newHarness(t *testing.T, opts Options) *harness {
	h := &harness{t: t, tr: flow.New(flow.Options{}), now: testStart, server: testServer,
		peers: map[netip.AddrPort]*peer{testServer: {id: 0x01}}}
	h.b = NewBuilder(opts, func(s *Session) { h.sessions = append(h.sessions, s) })
	return h
}

func (h *harness) peer(ep netip.AddrPort) *peer {
	p := h.peers[ep]
	if p == nil {
		p = &peer{id: 0xFF}
		h.peers[ep] = p
	}
	return p
}

func (h *harness) step(d time.Duration) { h.now = h.now.Add(d) }

// send sends one datagram from src to dst.
func (h *harness) send(src, dst netip.AddrPort, msgs ...dissect.Message) {
	h.t.Helper()
	d := dissect.Datagram{Peer: h.peer(src).id, Messages: msgs}
	plain := d.Append(nil)
	enc := make([]byte, len(plain))
	dissect.Encrypt(enc, plain)
	h.frame++
	h.tr.Datagram(h.frame, h.now, src, dst, enc, h.b.Add)
}

func (h *harness) finish() {
	h.tr.Finish(h.b.Add)
	h.b.Finish()
}

// reliable numbers a reliable message from ep.
func (h *harness) reliable(ep netip.AddrPort, t dissect.TransportType, payload []byte) dissect.Message {
	p := h.peer(ep)
	ch := t.Channel()
	m := dissect.Message{Type: t, Reliable: true, Ordered: true, Seq: p.seq[ch], Payload: payload}
	p.seq[ch]++
	return m
}

func unreliable(payload []byte) dissect.Message {
	return dissect.Message{Type: dissect.TypeData, Payload: payload}
}

// ackOf is the ACK a stock peer sends for m.
func ackOf(m dissect.Message) dissect.Message {
	a := dissect.Message{Type: dissect.TypeAck, Seq: m.Seq}
	if m.Type.Channel() == dissect.ChannelControl {
		a.AckFlags |= dissect.AckControl
	}
	if m.Fragment {
		a.AckFlags |= dissect.AckFragment
		a.AckFragIndex = m.FragIndex
	}
	return a
}

// deliver sends msgs from src to dst and, 20 ms later, dst's ACKs of the
// reliable ones; then 20 ms pass.
func (h *harness) deliver(src, dst netip.AddrPort, msgs ...dissect.Message) {
	h.t.Helper()
	h.send(src, dst, msgs...)
	h.step(20 * time.Millisecond)
	var acks []dissect.Message
	for _, m := range msgs {
		if m.Reliable {
			acks = append(acks, ackOf(m))
		}
	}
	if len(acks) > 0 {
		h.send(dst, src, acks...)
	}
	h.step(20 * time.Millisecond)
}

// gameMsgs numbers reliable data messages carrying game messages.
func (h *harness) gameMsgs(src netip.AddrPort, msgs ...game.Message) []dissect.Message {
	var out []dissect.Message
	for _, g := range msgs {
		out = append(out, h.reliable(src, dissect.TypeData, g.Append(nil)))
	}
	return out
}

func (h *harness) control(src netip.AddrPort, t dissect.TransportType, c dissect.Control) dissect.Message {
	return h.reliable(src, t, dissect.AppendControl(nil, &c))
}

func slotPtr(s uint8) *uint8 { return &s }

// connect plays the connect request and the slot assignment (with checksum
// round 0 in the same datagram, as stock servers send it).
func (h *harness) connect(client netip.AddrPort, slot uint8) {
	req := h.control(client, dissect.TypeConnectAck, dissect.Control{Kind: "connect-request",
		Addr: client.Addr(), Port: client.Port(), Reserved: []byte{0, 0, 0, 0}})
	h.send(client, h.server, req)
	h.step(4 * time.Millisecond)
	reply := h.control(h.server, dissect.TypeConnectAck, dissect.Control{Kind: "slot-assignment", Slot: slotPtr(slot)})
	round0 := h.gameMsgs(h.server, checksumRequest(0))[0]
	h.send(h.server, client, ackOf(req), reply, round0)
	h.peer(client).id = slot
	h.step(30 * time.Millisecond)
	h.send(client, h.server, ackOf(reply), ackOf(round0))
	h.step(10 * time.Millisecond)
}

func checksumRequest(round game.ChecksumRound) *game.ChecksumRequest {
	return &game.ChecksumRequest{Round: round, Dir: "scripts/", Filter: "App.pyc"}
}

// checksums plays the five rounds; round 0 was requested by connect.
func (h *harness) checksums(client netip.AddrPort) {
	rounds := []game.ChecksumRound{0, 1, 2, 3, game.FinalChecksumRound}
	for i, rd := range rounds {
		h.step(25 * time.Millisecond)
		h.deliver(client, h.server, h.gameMsgs(client, &game.ChecksumResponse{Round: rd, DirHash: 0x2FCBAF4D})...)
		if i+1 < len(rounds) {
			h.deliver(h.server, client, h.gameMsgs(h.server, checksumRequest(rounds[i+1]))...)
		}
	}
}

// lobby plays ChecksumComplete, Settings and GameInit in one datagram, the
// client's NewPlayerInGame and the server's MISSION_INIT.
func (h *harness) lobby(client netip.AddrPort, gameSlot uint8) {
	h.deliver(h.server, client, h.gameMsgs(h.server, &game.ChecksumComplete{},
		&game.Settings{GameTime: 12.5, CollisionDamage: true, PlayerSlot: gameSlot, Map: "Multiplayer.Episode.Mission1.Mission1"},
		&game.GameInit{})...)
	h.step(26 * time.Millisecond)
	h.deliver(client, h.server, h.gameMsgs(client, &game.NewPlayerInGame{})...)
	h.deliver(h.server, client, h.gameMsgs(h.server, &game.MissionInit{PlayerLimit: 8, System: 1, TimeLimit: game.NoLimit, FragLimit: 10})...)
}

// objCreateTeam builds an ObjCreateTeam for a ship.
func objCreateTeam(owner, team uint8, id game.ObjectID, species uint8, name string) []byte {
	return (&game.ObjCreate{HasTeam: true, Owner: owner, Team: team, Class: game.ClassShip, Object: id,
		Species: game.Species(species), PlayerName: name, SetName: "Multi1"}).Append(nil)
}

func stateUpdate(id game.ObjectID, t float32) []byte {
	return (&game.StateUpdate{Object: id, GameTime: t}).Append(nil)
}

func destroyObject(id game.ObjectID) []byte {
	return (&game.DestroyObject{Object: id}).Append(nil)
}

func keepalive(slot uint8, client netip.AddrPort, name string) dissect.Control {
	return dissect.Control{Kind: "peer-info", Slot: slotPtr(slot), Addr: client.Addr(), Name: name}
}

// only returns the one session emitted.
func (h *harness) only() *Session {
	h.t.Helper()
	if len(h.sessions) != 1 {
		h.t.Fatalf("got %d sessions, want 1", len(h.sessions))
	}
	return h.sessions[0]
}
