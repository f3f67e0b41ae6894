package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
)

// Timing says when datagrams that answer nothing are sent.
type Timing int

const (
	// TimingCapture keeps the captured offsets from the session's first
	// datagram (never sending earlier than captured).
	TimingCapture Timing = iota
	// TimingASAP sends everything as soon as the script allows: a server
	// sends what follows a client datagram at once, a client sends its next
	// datagram as soon as the answers before it have arrived.
	TimingASAP
)

func (t Timing) String() string {
	if t == TimingASAP {
		return "asap"
	}
	return "capture"
}

// ParseTiming reads "capture" or "asap".
func ParseTiming(s string) (Timing, error) {
	switch strings.ToLower(s) {
	case "capture":
		return TimingCapture, nil
	case "asap":
		return TimingASAP, nil
	}
	return 0, fmt.Errorf("timing %q: want capture or asap", s)
}

// ServerOptions tune a replay Server.
type ServerOptions struct {
	Timing Timing
	// Strict ends a session at its first client datagram that matches
	// nothing, instead of waiting for the next one that does.
	Strict bool
	// Lookahead is how many client datagrams past the expected one a
	// datagram may match to re-synchronise (default 16).
	Lookahead int
	// Logf, when set, receives one line (or a block of lines) per notable
	// event: sessions given out, rewritten fields, mismatches side by side.
	Logf func(format string, args ...any)
}

// ServerSession is what a replay server did for one live client.
type ServerSession struct {
	Session  int    `json:"session"`  // 1-based, in join order
	Captured string `json:"captured"` // the captured client endpoint
	Client   string `json:"client"`   // the live client endpoint
	// Expected is the number of client datagrams in the script.
	Expected   int `json:"expected"`
	Matched    int `json:"matched"`
	Mismatched int `json:"mismatched"`
	Skipped    int `json:"skipped"`    // captured client datagrams passed over to re-synchronise
	Duplicates int `json:"duplicates"` // the client's retransmissions of datagrams already matched
	Sent       int `json:"sent"`       // server datagrams sent (answers to duplicates included)
	// Rewritten counts the address fields rewritten in sent datagrams, by
	// field name ("peer-info ip", ...).
	Rewritten map[string]int `json:"rewritten"`
	Done      bool           `json:"done"`            // the whole script was played
	Ended     string         `json:"ended,omitempty"` // why the session stopped early (--strict)
}

// Server answers live clients from a capture's scripts.
type Server struct {
	c    *Capture
	opts ServerOptions

	mu      sync.Mutex
	next    int
	live    map[netip.AddrPort]*liveSession
	order   []*liveSession
	ignored int // datagrams from clients after every session was given out
	serving bool
	heard   time.Time // the last datagram received, or the start of Serve
}

// NewServer returns a Server for the scripts of c.
func NewServer(c *Capture, opts ServerOptions) *Server {
	if opts.Lookahead <= 0 {
		opts.Lookahead = 16
	}
	return &Server{c: c, opts: opts, live: map[netip.AddrPort]*liveSession{}}
}

func (s *Server) logf(format string, args ...any) {
	if s.opts.Logf != nil {
		s.opts.Logf(format, args...)
	}
}

// Report returns the state of every session given out so far, in join order.
func (s *Server) Report() []ServerSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]ServerSession, len(s.order))
	for i, ls := range s.order {
		out[i] = ls.stats
		out[i].Rewritten = make(map[string]int, len(ls.stats.Rewritten))
		for k, v := range ls.stats.Rewritten {
			out[i].Rewritten[k] = v
		}
	}
	return out
}

// Ignored is the number of datagrams from client addresses that came after
// every captured session had been given out.
func (s *Server) Ignored() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ignored
}

// Idle is how long no datagram has arrived (since Serve started when none
// has): --exit-when-done gives up after a wait limit of it.
func (s *Server) Idle(now time.Time) time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.heard.IsZero() {
		return 0
	}
	return now.Sub(s.heard)
}

// AllDone reports whether every captured session has been given out and
// played to its end.
func (s *Server) AllDone() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.order) < len(s.c.Sessions) {
		return false
	}
	for _, ls := range s.order {
		if !ls.stats.Done {
			return false
		}
	}
	return true
}

// inbound is one datagram received from a live client.
type inbound struct {
	at   time.Time
	data []byte
}

// Serve answers the clients that send to pc until ctx is cancelled (then it
// returns nil) or reading pc fails. It returns only after every goroutine it
// started has ended. It does not close pc. A Server serves once.
func (s *Server) Serve(ctx context.Context, pc net.PacketConn) error {
	s.mu.Lock()
	if s.serving {
		s.mu.Unlock()
		return errors.New("replay: Serve called twice")
	}
	s.serving = true
	s.heard = time.Now()
	s.mu.Unlock()

	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() {
		cancel()
		wg.Wait()
	}()
	// Cancellation unblocks the read.
	stop := context.AfterFunc(ctx, func() { _ = pc.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()

	buf := make([]byte, 64<<10)
	for {
		n, addr, err := pc.ReadFrom(buf)
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return fmt.Errorf("replay server: %w", err)
		}
		ua, ok := addr.(*net.UDPAddr)
		if !ok {
			continue
		}
		from := ua.AddrPort()
		from = netip.AddrPortFrom(from.Addr().Unmap(), from.Port())
		in := inbound{at: time.Now(), data: append([]byte(nil), buf[:n]...)}

		s.mu.Lock()
		s.heard = in.at
		ls := s.live[from]
		if ls == nil {
			if s.next >= len(s.c.Sessions) {
				s.ignored++
				first := s.ignored == 1
				s.mu.Unlock()
				if first {
					s.logf("datagram from %s ignored: all %d captured sessions are taken", from, len(s.c.Sessions))
				}
				continue
			}
			ls = newLiveSession(s, s.c.Sessions[s.next], from, pc)
			s.next++
			s.live[from] = ls
			s.order = append(s.order, ls)
			wg.Add(1)
			go func() {
				defer wg.Done()
				ls.run(ctx)
			}()
			s.logf("session %d: %s plays the captured client %s (%d client and %d server datagrams)",
				ls.script.Index+1, from, ls.script.Client, ls.script.Clients(), len(ls.script.Steps)-ls.script.Clients())
		}
		s.mu.Unlock()
		select {
		case ls.in <- in:
		case <-ctx.Done():
			return nil
		}
	}
}

// liveSession is one live client playing one script.
type liveSession struct {
	srv    *Server
	script *Script
	client netip.AddrPort
	pc     net.PacketConn
	in     chan inbound
	masks  [][]byte // masked plaintext of each client step (nil for server steps)

	// owned by the session goroutine
	cursor  int
	start   time.Time
	seen    map[string]int // masked client datagrams matched so far -> step
	stopped bool

	stats ServerSession // guarded by srv.mu
}

func newLiveSession(s *Server, sc *Script, client netip.AddrPort, pc net.PacketConn) *liveSession {
	ls := &liveSession{srv: s, script: sc, client: client, pc: pc, in: make(chan inbound, 256),
		seen: map[string]int{}}
	ls.masks = make([][]byte, len(sc.Steps))
	for i := range sc.Steps {
		if d := &sc.Steps[i]; d.IsClient() {
			if d.GameSpy {
				ls.masks[i] = d.Plain
			} else {
				ls.masks[i] = masked(d.Plain)
			}
		}
	}
	ls.stats = ServerSession{Session: sc.Index + 1, Captured: sc.Client.String(), Client: client.String(),
		Expected: sc.Clients(), Rewritten: map[string]int{}}
	return ls
}

func (ls *liveSession) update(f func(st *ServerSession)) {
	ls.srv.mu.Lock()
	f(&ls.stats)
	ls.srv.mu.Unlock()
}

func (ls *liveSession) name() string {
	return fmt.Sprintf("session %d (%s, captured %s)", ls.script.Index+1, ls.client, ls.script.Client)
}

func (ls *liveSession) run(ctx context.Context) {
	steps := ls.script.Steps
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()
	for {
		var wait <-chan time.Time
		if !ls.start.IsZero() && !ls.stopped {
			// Send the server datagrams now due.
			for ls.cursor < len(steps) && !steps[ls.cursor].IsClient() {
				d := &steps[ls.cursor]
				if ls.srv.opts.Timing == TimingCapture && !d.Answer {
					if due := time.Until(ls.start.Add(d.At)); due > 0 {
						timer.Reset(due)
						wait = timer.C
						break
					}
				}
				ls.send(ls.cursor)
				ls.cursor++
			}
			if ls.cursor == len(steps) {
				ls.update(func(st *ServerSession) {
					if !st.Done {
						st.Done = true
						ls.srv.logf("%s: script played to its end", ls.name())
					}
				})
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-wait:
		case in := <-ls.in:
			if wait != nil && !timer.Stop() {
				<-timer.C
			}
			if ls.start.IsZero() {
				ls.start = in.at
			}
			ls.receive(in.data)
		}
	}
}

// send sends step i, with its address fields rewritten for the live client.
func (ls *liveSession) send(i int) {
	d := &ls.script.Steps[i]
	wire, _, changed := Rewrite(d, ls.client)
	if _, err := ls.pc.WriteTo(wire, net.UDPAddrFromAddrPort(ls.client)); err != nil {
		ls.srv.logf("%s: sending frame %d: %v", ls.name(), d.Frame, err)
	}
	ls.update(func(st *ServerSession) {
		st.Sent++
		for _, c := range changed {
			if st.Rewritten[c.Field] == 0 {
				ls.srv.logf("%s: frame %d: rewrote %s", ls.name(), d.Frame, c)
			}
			st.Rewritten[c.Field]++
		}
	})
}

// nextClient is the index of the first client step at or after i, or -1.
func (ls *liveSession) nextClient(i int) int {
	for ; i < len(ls.script.Steps); i++ {
		if ls.script.Steps[i].IsClient() {
			return i
		}
	}
	return -1
}

// receive handles one datagram from the live client.
func (ls *liveSession) receive(data []byte) {
	if ls.stopped {
		return
	}
	plain := data
	if !dissect.IsGameSpy(data) {
		plain = make([]byte, len(data))
		dissect.Decrypt(plain, data)
		plain = masked(plain)
	}
	key := string(plain)
	j := ls.nextClient(ls.cursor)
	if j >= 0 && bytes.Equal(plain, ls.masks[j]) {
		ls.advance(j)
		ls.seen[key] = j
		ls.update(func(st *ServerSession) { st.Matched++ })
		return
	}
	if k, ok := ls.seen[key]; ok {
		// The client sent a datagram again: answer it as captured.
		ls.update(func(st *ServerSession) { st.Duplicates++ })
		for i := k + 1; i < len(ls.script.Steps); i++ {
			d := &ls.script.Steps[i]
			if d.IsClient() {
				continue
			}
			if d.AnswerTo != k {
				break
			}
			if i < ls.cursor {
				ls.send(i)
			}
		}
		return
	}
	if j >= 0 {
		c := j
		for n := 0; n < ls.srv.opts.Lookahead; n++ {
			if c = ls.nextClient(c + 1); c < 0 {
				break
			}
			if bytes.Equal(plain, ls.masks[c]) {
				skipped := ls.advance(c)
				ls.seen[key] = c
				ls.update(func(st *ServerSession) { st.Matched++; st.Skipped += skipped })
				ls.srv.logf("%s: re-synchronised on frame %d, skipping %d captured client datagrams from frame %d",
					ls.name(), ls.script.Steps[c].Frame, skipped, ls.script.Steps[j].Frame)
				return
			}
		}
	}
	ls.update(func(st *ServerSession) { st.Mismatched++ })
	got := Describe(decryptIfNeeded(data), game.ClientToServer)
	if j < 0 {
		ls.srv.logf("%s: datagram after the end of the script matches nothing:\n%s", ls.name(),
			SideBySide("received", got, "expected", []string{"(nothing: the script has ended)"}))
	} else {
		exp := &ls.script.Steps[j]
		ls.srv.logf("%s: client datagram does not match the expected one (frame %d):\n%s", ls.name(), exp.Frame,
			SideBySide("received", got, fmt.Sprintf("expected (frame %d)", exp.Frame), Describe(exp.Plain, game.ClientToServer)))
	}
	if ls.srv.opts.Strict {
		ls.stopped = true
		ls.update(func(st *ServerSession) { st.Ended = "strict: a client datagram did not match" })
		ls.srv.logf("%s: ended (--strict)", ls.name())
	}
}

// advance moves the cursor past client step c, sending the server steps
// before it. Client steps before c are skipped, and so are their answers;
// it returns how many were skipped.
func (ls *liveSession) advance(c int) int {
	skipped := 0
	skippedSet := map[int]bool{}
	for i := ls.cursor; i < c; i++ {
		d := &ls.script.Steps[i]
		if d.IsClient() {
			skipped++
			skippedSet[i] = true
			continue
		}
		if d.Answer && skippedSet[d.AnswerTo] {
			continue
		}
		ls.send(i)
	}
	ls.cursor = c + 1
	return skipped
}

func decryptIfNeeded(b []byte) []byte {
	if dissect.IsGameSpy(b) {
		return b
	}
	p := make([]byte, len(b))
	dissect.Decrypt(p, b)
	return p
}

// SortedFields lists a Rewritten map as "name ×n" strings, sorted.
func SortedFields(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, fmt.Sprintf("%s ×%d", k, v))
	}
	sort.Strings(out)
	return out
}
