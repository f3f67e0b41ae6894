// Package testclient is a small Bridge Commander client for testing the
// native server: it connects, answers the checksum rounds as a stock client
// does, sends NewPlayerInGame after GameInit, keeps alive, and records every
// game message it receives. Its core takes the time from the caller, so a
// test can run it on simulated time; Run drives it over a UDP socket, with
// optional seeded loss.
package testclient

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"net"
	"net/netip"
	"os"
	"sync"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/server/native/internal/inorder"
	"github.com/bcwire/bcwire/server/stock"
	"github.com/bcwire/bcwire/server/transport"
)

// Options tune a Client.
type Options struct {
	Name            string
	Addr            netip.AddrPort // what the connect request says (the socket's address)
	RetransmitAfter time.Duration  // default 1s
	MaxRetries      int            // default 8
	Keepalive       time.Duration  // default 1s
	// Checksum answers a checksum round (default stock.ChecksumResponse).
	Checksum func(round game.ChecksumRound) *game.ChecksumResponse
	// Stall makes a client that acknowledges everything and keeps alive but
	// never answers a checksum request: the stalling client of issue 28.
	Stall bool
}

// Msg is one game message the client received.
type Msg struct {
	At      time.Time
	Payload []byte
}

// Client is one test client. Its fields are read under Lock, or through
// Snapshot.
type Client struct {
	mu    sync.Mutex
	o     Options
	conn  *transport.Conn
	order inorder.Buffer
	start time.Time
	out   func(wire []byte)
	dg    dissect.Datagram

	nextKeepalive time.Time
	state         State
}

// State is what the client has seen.
type State struct {
	Slot        byte // wire slot assigned by the server (0 until then)
	GameSlot    int  // from Settings
	Rounds      []game.ChecksumRound
	Bundle      bool // 0x28, Settings and GameInit arrived in one datagram
	ConnectDG   bool // slot assignment and checksum round 0 arrived in one datagram
	Lobby       bool // GameInit received
	InGame      bool // MISSION_INIT received
	Booted      bool
	BootReason  byte
	ServerLeft  bool // the server sent a disconnect
	Dead        bool // the server stopped acknowledging
	Received    []Msg
	Datagrams   int
	Retransmits int
	// SlotAfterRetransmits is how many datagrams the client had resent when
	// its slot arrived: 0 when the server answered its first connect.
	SlotAfterRetransmits int
	Failed               game.Opcode // 0x22 or 0x23 received (0 otherwise)
}

// New returns a client that sends its datagrams (encrypted) with out.
func New(o Options, out func(wire []byte)) *Client {
	if o.Keepalive <= 0 {
		o.Keepalive = time.Second
	}
	if o.Checksum == nil {
		o.Checksum = stock.ChecksumResponse
	}
	return &Client{o: o, out: out,
		conn: transport.NewConn(stock.ConnectingPeer, transport.Options{RetransmitAfter: o.RetransmitAfter, MaxRetries: o.MaxRetries})}
}

func (c *Client) rel(now time.Time) time.Duration {
	if c.start.IsZero() {
		c.start = now
	}
	return now.Sub(c.start)
}

func (c *Client) flush(now time.Time) {
	for _, plain := range c.conn.Flush(c.rel(now)) {
		wire := make([]byte, len(plain))
		dissect.Encrypt(wire, plain)
		c.out(wire)
	}
}

// Connect sends the connect request.
func (c *Client) Connect(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	req := stock.ConnectRequest(c.o.Addr)
	c.conn.Queue(dissect.TypeConnectAck, dissect.AppendControl(nil, &req), true, true)
	c.flush(now)
}

// Send sends one game message.
func (c *Client) Send(now time.Time, payload []byte, reliable bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.conn.Queue(dissect.TypeData, payload, reliable, false)
	c.flush(now)
}

// Leave sends a graceful disconnect.
func (c *Client) Leave(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.conn.Queue(dissect.TypeDisconnect, stock.Disconnect(c.state.Slot, c.o.Addr.Addr()), true, true)
	c.flush(now)
}

// Snapshot copies the client's state.
func (c *Client) Snapshot() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.state
	s.Rounds = append([]game.ChecksumRound(nil), s.Rounds...)
	s.Received = append([]Msg(nil), s.Received...)
	s.Retransmits = c.conn.Retransmits
	return s
}

// Handle processes one datagram from the server.
func (c *Client) Handle(now time.Time, wire []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(wire) == 0 || dissect.IsGameSpy(wire) {
		return
	}
	c.state.Datagrams++
	plain := make([]byte, len(wire))
	dissect.Decrypt(plain, wire)
	if c.dg.Parse(plain) == nil {
		var ops []byte
		slot := false
		for i := range c.dg.Messages {
			m := &c.dg.Messages[i]
			if m.Type == dissect.TypeData && !m.Fragment && len(m.Payload) > 0 {
				ops = append(ops, m.Payload[0])
			}
			if m.Type == dissect.TypeConnectAck && len(m.Payload) == 1 {
				slot = true
			}
		}
		if string(ops) == "\x28\x00\x01" {
			c.state.Bundle = true
		}
		if slot && len(ops) == 1 && ops[0] == byte(game.OpChecksumRequest) {
			c.state.ConnectDG = true
		}
	}
	ds, _ := c.conn.Receive(plain, c.rel(now))
	for _, d := range c.order.Push(now, ds) {
		c.deliver(now, &d)
	}
	c.flush(now)
}

func (c *Client) deliver(now time.Time, d *transport.Delivery) {
	switch d.Type {
	case dissect.TypeConnectAck:
		if len(d.Payload) == 1 {
			if c.state.Slot == 0 {
				c.state.SlotAfterRetransmits = c.conn.Retransmits
			}
			c.state.Slot = d.Payload[0]
			c.conn.LocalID = d.Payload[0]
		}
	case dissect.TypeBoot:
		c.state.Booted = true
		if len(d.Payload) > 0 {
			c.state.BootReason = d.Payload[0]
		}
	case dissect.TypeDisconnect:
		c.state.ServerLeft = true
	case dissect.TypeData:
		if len(d.Payload) == 0 {
			return
		}
		c.state.Received = append(c.state.Received, Msg{At: now, Payload: d.Payload})
		switch game.Opcode(d.Payload[0]) {
		case game.OpChecksumRequest:
			if len(d.Payload) > 1 {
				r := game.ChecksumRound(d.Payload[1])
				c.state.Rounds = append(c.state.Rounds, r)
				if c.o.Stall {
					return
				}
				c.conn.Queue(dissect.TypeData, c.o.Checksum(r).Append(nil), true, false)
			}
		case game.OpSettings:
			if r := game.NewDecoder().Decode(d.Payload, game.ServerToClient); r.Err == nil {
				if st, ok := r.Msg.(*game.Settings); ok {
					c.state.GameSlot = int(st.PlayerSlot)
				}
			}
		case game.OpGameInit:
			c.state.Lobby = true
			c.conn.Queue(dissect.TypeData, (&game.NewPlayerInGame{}).Append(nil), true, false)
		case game.OpMissionInit:
			c.state.InGame = true
		case game.OpVersionMismatch, game.OpSystemChecksumFail:
			c.state.Failed = game.Opcode(d.Payload[0])
		}
	}
}

// Tick runs retransmissions and the keepalive.
func (c *Client) Tick(now time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.conn.Retransmit(c.rel(now)) {
		c.state.Dead = true
	}
	if c.state.Slot != 0 && !now.Before(c.nextKeepalive) {
		c.nextKeepalive = now.Add(c.o.Keepalive)
		id := stock.Identity(c.state.Slot, c.o.Addr.Addr(), c.o.Name)
		c.conn.Queue(dissect.TypePeerInfo, dissect.AppendControl(nil, &id), true, true)
	}
	if c.conn.Pending() {
		c.flush(now)
	}
}

// Unacked is the number of reliable messages the server has not ACKed.
func (c *Client) Unacked() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn.Unacked()
}

// UDP is a Client on a socket.
type UDP struct {
	*Client
	pc     net.PacketConn
	server netip.AddrPort
	loss   float64
	rng    *rand.Rand
	rngMu  sync.Mutex
	done   chan struct{}
	err    error
	// Lost counts datagrams the loss shim dropped, each way.
	lostOut, lostIn int
}

// Dial opens a loopback socket, connects to server and runs the client
// until ctx is done or Close. loss (0-1) drops that share of datagrams in
// each direction, with a generator seeded by seed.
func Dial(ctx context.Context, server netip.AddrPort, o Options, loss float64, seed int64) (*UDP, error) {
	return DialFrom(ctx, netip.MustParseAddr("127.0.0.1"), server, o, loss, seed)
}

// DialFrom is Dial from a socket on the local address local (another
// loopback address, 127.0.0.2 and up, for a test that needs many hosts).
func DialFrom(ctx context.Context, local netip.Addr, server netip.AddrPort, o Options, loss float64, seed int64) (*UDP, error) {
	pc, err := net.ListenPacket("udp4", netip.AddrPortFrom(local, 0).String())
	if err != nil {
		return nil, err
	}
	u := &UDP{pc: pc, server: server, loss: loss, rng: rand.New(rand.NewSource(seed)), done: make(chan struct{})}
	o.Addr = pc.LocalAddr().(*net.UDPAddr).AddrPort()
	u.Client = New(o, u.write)
	u.Connect(time.Now())
	go u.run(ctx)
	return u, nil
}

func (u *UDP) drop(out bool) bool {
	if u.loss <= 0 {
		return false
	}
	u.rngMu.Lock()
	defer u.rngMu.Unlock()
	if u.rng.Float64() >= u.loss {
		return false
	}
	if out {
		u.lostOut++
	} else {
		u.lostIn++
	}
	return true
}

// Lost reports how many datagrams the shim dropped to and from the server.
func (u *UDP) Lost() (out, in int) {
	u.rngMu.Lock()
	defer u.rngMu.Unlock()
	return u.lostOut, u.lostIn
}

func (u *UDP) write(wire []byte) {
	if u.drop(true) {
		return
	}
	_, _ = u.pc.WriteTo(wire, net.UDPAddrFromAddrPort(u.server))
}

func (u *UDP) run(ctx context.Context) {
	defer close(u.done)
	buf := make([]byte, 4096)
	tick := 20 * time.Millisecond
	next := time.Now().Add(tick)
	for ctx.Err() == nil {
		_ = u.pc.SetReadDeadline(next)
		n, _, err := u.pc.ReadFrom(buf)
		now := time.Now()
		if err == nil && !u.drop(false) {
			u.Handle(now, append([]byte(nil), buf[:n]...))
		} else if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
			u.err = err
			return
		}
		if !now.Before(next) {
			u.Tick(now)
			next = now.Add(tick)
		}
	}
}

// Close stops the client and closes its socket; it waits for the client's
// goroutine to end.
func (u *UDP) Close() error {
	_ = u.pc.SetReadDeadline(time.Now())
	err := u.pc.Close()
	<-u.done
	return err
}

// Addr is the client's own address.
func (u *UDP) Addr() netip.AddrPort { return u.o.Addr }

// Wait polls cond every few milliseconds until it holds or timeout passes.
func (c *Client) Wait(timeout time.Duration, what string, cond func(s *State) bool) error {
	deadline := time.Now().Add(timeout)
	for {
		s := c.Snapshot()
		if cond(&s) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: not reached within %v (slot %d, rounds %d, in game %v)", what, timeout, s.Slot, len(s.Rounds), s.InGame)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
