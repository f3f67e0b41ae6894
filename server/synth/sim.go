// Package synth generates realistic Bridge Commander captures: whole
// sessions as a stock dedicated server and stock clients would put them on
// the wire, built with the project's own encoders and transport layer. The
// generator is a discrete-event simulation on a virtual clock with a seeded
// random source, so the same Config always gives the same bytes.
//
// The capture point is the server's network interface: datagrams the server
// sends are captured even when the link then loses them (so retransmissions
// show), datagrams a client sends that the link loses never reach the
// capture.
package synth

import (
	"container/heap"
	"fmt"
	"math/rand"
	"net/netip"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/server/transport"
)

// Config describes the capture to generate.
type Config struct {
	Players  int           // 1-16 clients, joining at staggered times
	Duration time.Duration // length of the capture
	Seed     int64
	Loss     float64        // probability that the link drops a datagram (0-0.5)
	Server   netip.AddrPort // default 10.0.0.1:22101
	Start    time.Time      // time of the first packet (default 2026-01-10 20:00:00 UTC)
	// Latency is the one-way delay, jittered by up to half again (default 25ms).
	Latency time.Duration
	// Quirks make the server deviate from stock (zero value: stock).
	Quirks Quirks
}

// DefaultServer is where the generated server listens.
var DefaultServer = netip.MustParseAddrPort("10.0.0.1:22101")

func (c Config) withDefaults() (Config, error) {
	if c.Players == 0 {
		c.Players = 1
	}
	if c.Players < 1 || c.Players > 16 {
		return c, fmt.Errorf("players: %d is outside 1-16", c.Players)
	}
	if c.Duration == 0 {
		c.Duration = 60 * time.Second
	}
	if c.Duration < 5*time.Second || c.Duration > 24*time.Hour {
		return c, fmt.Errorf("duration: %v is outside 5s-24h", c.Duration)
	}
	if c.Loss < 0 || c.Loss > 0.5 {
		return c, fmt.Errorf("loss: %v is outside 0-0.5", c.Loss)
	}
	if !c.Server.IsValid() {
		c.Server = DefaultServer
	}
	if !c.Server.Addr().Is4() {
		return c, fmt.Errorf("server: %v is not an IPv4 address", c.Server)
	}
	if c.Start.IsZero() {
		c.Start = time.Date(2026, 1, 10, 20, 0, 0, 0, time.UTC)
	}
	if c.Latency == 0 {
		c.Latency = 25 * time.Millisecond
	}
	if c.Quirks.StateUpdateDivisor < 0 {
		return c, fmt.Errorf("quirks: StateUpdate divisor %d is negative", c.Quirks.StateUpdateDivisor)
	}
	return c, nil
}

// CountKey names one kind of game message in one direction.
type CountKey struct {
	Dir    game.Direction
	Opcode game.Opcode
}

// Manifest is what the generator wrote, so tests can check a decoder
// against it.
type Manifest struct {
	Datagrams   int              // datagrams in the capture
	GameSpy     int              // of which GameSpy
	Lost        int              // datagrams the link dropped (captured or not)
	Retransmits int              // reliable messages sent again
	Opcodes     map[CountKey]int // complete game messages in the capture, as a decoder counts them
}

// event is one scheduled action.
type event struct {
	at  time.Duration
	seq int // ties broken by scheduling order, for determinism
	fn  func()
}

type eventQueue []*event

func (q eventQueue) Len() int { return len(q) }
func (q eventQueue) Less(i, j int) bool {
	if q[i].at != q[j].at {
		return q[i].at < q[j].at
	}
	return q[i].seq < q[j].seq
}
func (q eventQueue) Swap(i, j int) { q[i], q[j] = q[j], q[i] }
func (q *eventQueue) Push(x any)   { *q = append(*q, x.(*event)) }
func (q *eventQueue) Pop() any {
	old := *q
	e := old[len(old)-1]
	*q = old[:len(old)-1]
	return e
}

// sim is the running simulation.
type sim struct {
	cfg     Config
	rng     *rand.Rand
	now     time.Duration
	q       eventQueue
	nextSeq int
	w       *capture.Writer
	err     error
	man     Manifest
	// fragments captured so far per (connection end, seq), to count a
	// fragmented message once, when its last piece is first captured.
	fragSeen  map[fragID]map[uint8]bool
	fragTotal map[fragID]int
	fragFirst map[fragID]game.Opcode
	fragDone  map[fragID]bool

	server  *server
	players []*player
	game    *gameState
}

type fragID struct {
	from, to netip.AddrPort
	seq      uint16
}

func (s *sim) at(d time.Duration, fn func()) {
	s.nextSeq++
	heap.Push(&s.q, &event{at: s.now + d, seq: s.nextSeq, fn: fn})
}

func (s *sim) run(until time.Duration) {
	for s.q.Len() > 0 && s.err == nil {
		e := heap.Pop(&s.q).(*event)
		if e.at > until {
			break
		}
		s.now = e.at
		e.fn()
	}
}

// jitter returns d ± up to half of d.
func (s *sim) jitter(d time.Duration) time.Duration {
	return d/2 + time.Duration(s.rng.Int63n(int64(d)+1))
}

// link is one direction of a player's path. Delays are jittered, but a
// datagram never overtakes one sent before it on the same path.
type link struct{ last time.Duration }

// arrival returns the delay, from now, of a datagram sent now.
func (l *link) arrival(s *sim) time.Duration {
	at := s.now + s.jitter(s.cfg.Latency)
	if at <= l.last {
		at = l.last + 50*time.Microsecond
	}
	l.last = at
	return at - s.now
}

func (s *sim) lost() bool { return s.cfg.Loss > 0 && s.rng.Float64() < s.cfg.Loss }

// capture writes one datagram seen at the server's interface now.
func (s *sim) capture(src, dst netip.AddrPort, wire []byte, plain []byte) {
	if s.err != nil {
		return
	}
	if err := s.w.WriteUDP(s.cfg.Start.Add(s.now), src, dst, wire); err != nil {
		s.err = err
		return
	}
	s.man.Datagrams++
	if dissect.IsGameSpy(wire) {
		s.man.GameSpy++
		return
	}
	dir := game.ClientToServer
	if src == s.cfg.Server {
		dir = game.ServerToClient
	}
	var d dissect.Datagram
	if err := d.Parse(plain); err != nil {
		s.err = fmt.Errorf("synth built a datagram it cannot parse: %v", err)
		return
	}
	for i := range d.Messages {
		m := &d.Messages[i]
		if m.Type != dissect.TypeData {
			continue
		}
		if !m.Fragment {
			s.man.Opcodes[CountKey{dir, game.Opcode(m.Payload[0])}]++
			continue
		}
		id := fragID{src, dst, m.Seq}
		if s.fragDone[id] {
			continue
		}
		seen := s.fragSeen[id]
		if seen == nil {
			seen = map[uint8]bool{}
			s.fragSeen[id] = seen
		}
		seen[m.FragIndex] = true
		if m.FragIndex == 0 {
			s.fragTotal[id] = int(m.FragTotal)
			s.fragFirst[id] = game.Opcode(m.Payload[0])
		}
		if total, ok := s.fragTotal[id]; ok && len(seen) == total {
			s.man.Opcodes[CountKey{dir, s.fragFirst[id]}]++
			s.fragDone[id] = true
			delete(s.fragSeen, id)
		}
	}
}

// sendClient puts a client's plaintext datagrams on the link to the server.
func (s *sim) sendClient(p *player, dgs [][]byte) {
	for _, plain := range dgs {
		wire := make([]byte, len(plain))
		dissect.Encrypt(wire, plain)
		if s.lost() {
			s.man.Lost++
			continue
		}
		plain := plain
		s.at(p.upLink.arrival(s), func() {
			s.capture(p.addr, s.cfg.Server, wire, plain)
			s.server.receive(p, plain)
		})
	}
}

// sendServer puts the server's plaintext datagrams for p on the link.
func (s *sim) sendServer(p *player, dgs [][]byte) {
	for _, plain := range dgs {
		seen := s.ackQuirk(plain) // what the capture shows; the client gets plain
		wire := make([]byte, len(seen))
		dissect.Encrypt(wire, seen)
		s.capture(s.cfg.Server, p.addr, wire, seen)
		if s.lost() {
			s.man.Lost++
			continue
		}
		plain := plain
		s.at(p.downLink.arrival(s), func() { p.receive(plain) })
	}
}

// sendGameSpy carries a plaintext GameSpy datagram (never lost: it is the
// first thing a client does, and a lost query is simply asked again).
func (s *sim) gamespyExchange(p *player, query, reply []byte) {
	s.at(0, func() { s.capture(p.addr, s.cfg.Server, query, nil) })
	s.at(s.jitter(2*time.Millisecond)+s.cfg.Latency, func() { s.capture(s.cfg.Server, p.addr, reply, nil) })
}

// Generate writes a capture described by cfg to w.
func Generate(cfg Config, w *capture.Writer) (Manifest, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return Manifest{}, err
	}
	s := &sim{cfg: cfg, rng: rand.New(rand.NewSource(cfg.Seed)), w: w,
		fragSeen: map[fragID]map[uint8]bool{}, fragDone: map[fragID]bool{},
		fragTotal: map[fragID]int{}, fragFirst: map[fragID]game.Opcode{}}
	s.man.Opcodes = map[CountKey]int{}
	s.game = newGameState(s)
	s.server = newServer(s)
	s.schedulePlayers()
	s.run(cfg.Duration)
	if s.err != nil {
		return s.man, s.err
	}
	s.man.Retransmits = s.server.retransmits()
	for _, p := range s.players {
		s.man.Retransmits += p.conn.Retransmits
	}
	return s.man, w.Flush()
}

var _ = transport.Options{}
