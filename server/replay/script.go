// Package replay turns a capture into per-session scripts and plays them on
// real UDP sockets, in both directions:
//
//   - Server stands in for the captured server: each new client address is
//     given the next captured session, every datagram it sends is compared
//     with the next captured client datagram, and on a match the captured
//     server datagrams are sent back byte for byte.
//   - Verify plays the client side of every captured session against any
//     server and compares what comes back with what the captured server sent,
//     datagram by datagram (exact mode) or message by message after decoding
//     (adaptive mode).
//
// Both work on a net.PacketConn the caller provides (tests use 127.0.0.1:0
// sockets) and stop when their context is cancelled; they return only once
// every goroutine they started has ended.
//
// # Scripts
//
// A Script is one client endpoint's traffic with the chosen server, in
// capture order: GameSpy queries and replies (in clear) and game datagrams
// (kept encrypted as captured, and decrypted). A server datagram that follows
// a client datagram within AnswerWindow of it, with no other client datagram
// in between, is that datagram's answer; other server datagrams (keepalives,
// relayed traffic, StateUpdates, retransmissions) are sent on their own, at
// their offset from the session's first datagram when the timing is
// TimingCapture.
//
// The capture point of the bundled captures is the server's interface: a
// server datagram the link lost is still in the capture (and the client's
// retransmission follows), a client datagram the link lost is not. A replay
// runs over a link that loses nothing, so "100% identical" means: every
// captured server datagram arrives, byte for byte, and nothing else does.
//
// # Address fields
//
// Three control payloads carry the client's own address, in both directions
// (see dissect.ParseControl): the connect request 0x03 sent from peer 0xFF
// ([ipv4:4][port:u16 BE][reserved]), the peer-info keepalive 0x00
// ([slot][ipv4:4][name]) and the disconnect 0x05 ([slot][ipv4:4]). Where
// such a field holds the captured client's address (IP or port) it is
// rewritten to the live one and the datagram re-encrypted; nothing else is
// changed. When client datagrams are matched, every address field is
// ignored, whatever it holds.
package replay

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"sort"
	"strings"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
)

// Datagram is one captured datagram of a script.
type Datagram struct {
	Frame int            // 1-based packet number in the capture
	At    time.Duration  // offset from the session's first datagram
	Dir   game.Direction // ClientToServer or ServerToClient
	// Wire is the UDP payload as captured: encrypted, or GameSpy in clear.
	Wire []byte
	// Plain is the decrypted datagram (equal to Wire for GameSpy).
	Plain   []byte
	GameSpy bool
	// Answer marks a server datagram sent in answer to the client datagram
	// before it (see the package comment); AnswerTo is that datagram's
	// index in the script, -1 otherwise.
	Answer   bool
	AnswerTo int
	// Fields are the address fields in Plain that hold the captured
	// client's address.
	Fields []AddrField
}

// IsClient reports whether the client sent d.
func (d *Datagram) IsClient() bool { return d.Dir == game.ClientToServer }

// Script is one captured session: a client endpoint's datagrams with the
// server, in capture order.
type Script struct {
	Index  int            // join order, 0-based
	Client netip.AddrPort // the captured client endpoint
	Server netip.AddrPort
	Start  time.Time // capture time of the first datagram
	Steps  []Datagram
	// Damaged counts this session's captured records that carry damage
	// (see Capture.Damage).
	Damaged int
}

// Clients counts the client datagrams.
func (s *Script) Clients() int {
	n := 0
	for i := range s.Steps {
		if s.Steps[i].IsClient() {
			n++
		}
	}
	return n
}

// Capture is what Load extracted: the scripts of every session on one
// server, in join order.
type Capture struct {
	Name     string // file name, for messages
	Server   netip.AddrPort
	Servers  []netip.AddrPort // every server seen in the capture
	Sessions []*Script
	// Damaged counts capture records that could not be read (skipped).
	Damaged int
	// DamageCount counts every damaged record: unreadable capture records
	// (Damaged) and datagrams or messages that do not parse or decode, as
	// `bcwire stats` counts them. Damage holds the first KeptDamage of
	// them, in capture order.
	DamageCount int
	Damage      []DamagedRecord
	// GaveUp is why the capture reader stopped before the end of the
	// file (capture.ErrUnreadable), or "".
	GaveUp       string
	unattributed int // damaged records of flows past maxDamagedFlows
	// NonStock counts the messages marked non-stock, by registry form
	// (see nonstock.go): intact, replayed as captured, not damage.
	NonStock [dissect.NumForms]int
}

// LoadOptions tune script extraction.
type LoadOptions struct {
	// Server chooses the server whose sessions are extracted; needed only
	// when the capture holds more than one.
	Server netip.AddrPort
	// AnswerWindow is how soon after a client datagram a server datagram
	// must follow to count as its answer (default 30ms).
	AnswerWindow time.Duration
	// MaxBytes caps the memory the scripts take: datagram bytes (each
	// kept encrypted and decrypted) plus 256 a session (default
	// DefaultMaxBytes). Past it loading stops with ErrTooLarge.
	MaxBytes int64
	// Interrupt, when closed, stops loading with ErrInterrupted (checked
	// every 256 records, also while no datagram is found).
	Interrupt <-chan struct{}
	// Capture tunes the capture reader (Load; Interrupt is set from the
	// field above).
	Capture capture.Options
}

// DefaultMaxBytes is LoadOptions.MaxBytes by default: 1 GiB of scripts is
// a capture of some 500 MB, hours of a full server.
const DefaultMaxBytes = 1 << 30

// Errors of loading that are not about the file's bytes.
var (
	// ErrInterrupted: LoadOptions.Interrupt stopped loading.
	ErrInterrupted = errors.New("interrupted while loading the capture")
	// ErrTooLarge: the scripts would take more than LoadOptions.MaxBytes.
	ErrTooLarge = errors.New("the capture's sessions hold more datagram bytes than a replay keeps")
	// ErrNoSessions: the capture yields no session to replay.
	ErrNoSessions = errors.New("no session to replay")
)

// ErrManyServers is returned when the capture holds several servers and
// LoadOptions.Server does not choose one.
var ErrManyServers = errors.New("the capture holds more than one server")

// Load reads the capture file at path and extracts its scripts.
func Load(path string, opts LoadOptions) (*Capture, error) {
	copts := opts.Capture
	copts.Interrupt = opts.Interrupt
	// A packet_trace.log does not hold its server's address: the chosen
	// server is the one it is shown with.
	copts.TraceServer = opts.Server
	rd, err := capture.OpenWithOptions(path, copts)
	if err != nil {
		return nil, err
	}
	defer rd.Close()
	c, err := Extract(rd, opts)
	if c != nil {
		c.Name = path
	}
	if err != nil {
		return c, fmt.Errorf("%s: %w", path, err)
	}
	return c, nil
}

// Read extracts the scripts of a capture read from r.
func Read(r io.Reader, opts LoadOptions) (*Capture, error) {
	copts := opts.Capture
	copts.Interrupt = opts.Interrupt
	rd, err := capture.NewReaderWithOptions(r, copts)
	if err != nil {
		return nil, err
	}
	return Extract(rd, opts)
}

// Extract reads every datagram of src, orients the flows with a
// flow.Tracker and returns the scripts of the chosen server's sessions.
func Extract(src flow.Source, opts LoadOptions) (*Capture, error) {
	if opts.AnswerWindow <= 0 {
		opts.AnswerWindow = 30 * time.Millisecond
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultMaxBytes
	}
	var fopts flow.Options
	if opts.Server.IsValid() {
		fopts.Servers = []netip.AddrPort{opts.Server}
	}
	tr := flow.New(fopts)
	type key struct{ server, client netip.AddrPort }
	scripts := map[key]*Script{}
	var order []*Script
	serverSeen := map[netip.AddrPort]bool{}
	var servers []netip.AddrPort
	c := &Capture{}
	tally := &damageTally{byFlow: map[flowKey]int{}}
	var size int64
	for n := 0; ; n++ {
		if n&255 == 0 && closed(opts.Interrupt) {
			return nil, ErrInterrupted
		}
		pkt, err := src.Next()
		if err == io.EOF {
			if ir, ok := src.(interface{ Interrupted() bool }); ok && ir.Interrupted() {
				return nil, ErrInterrupted
			}
			break
		}
		if err != nil {
			var pe *capture.PacketError
			if errors.As(err, &pe) {
				c.Damaged++
				c.addDamage(tally, DamagedRecord{Frame: pe.Frame, Error: pe.Error()})
				if errors.Is(err, capture.ErrUnreadable) {
					c.GaveUp = pe.Err.Error()
				}
				continue
			}
			return nil, err
		}
		var rec flow.Record
		got := false
		tr.Datagram(pkt.Frame, pkt.Time, pkt.Src, pkt.Dst, pkt.Payload, func(r *flow.Record) {
			if !got {
				rec, got = *r, true
			}
			if r.Err != nil {
				c.addDamage(tally, DamagedRecord{Frame: r.Frame, Src: r.Src.String(), Dst: r.Dst.String(),
					Error: r.Err.Error(), server: r.Server, client: r.Client})
			}
			if r.NonStock != nil {
				c.NonStock[r.NonStock.Form%dissect.NumForms]++
			}
		})
		if !got || !rec.Server.IsValid() || !rec.Client.IsValid() {
			continue
		}
		if !serverSeen[rec.Server] {
			serverSeen[rec.Server] = true
			servers = append(servers, rec.Server)
		}
		k := key{rec.Server, rec.Client}
		s := scripts[k]
		if s == nil {
			s = &Script{Client: rec.Client, Server: rec.Server, Start: pkt.Time}
			scripts[k] = s
			order = append(order, s)
			size += 256
		}
		if size += 2 * int64(len(pkt.Payload)); size > opts.MaxBytes {
			return nil, fmt.Errorf("%w (%d MiB, at frame %d)", ErrTooLarge, opts.MaxBytes>>20, pkt.Frame)
		}
		d := Datagram{Frame: pkt.Frame, At: pkt.Time.Sub(s.Start), Dir: rec.Dir, AnswerTo: -1,
			Wire: append([]byte(nil), pkt.Payload...)}
		if dissect.IsGameSpy(d.Wire) {
			d.GameSpy, d.Plain = true, d.Wire
		} else {
			d.Plain = make([]byte, len(d.Wire))
			dissect.Decrypt(d.Plain, d.Wire)
			d.Fields = clientFields(d.Plain, s.Client)
		}
		s.Steps = append(s.Steps, d)
	}
	c.Servers = servers
	switch {
	case opts.Server.IsValid():
		c.Server = opts.Server
	case len(servers) == 1:
		c.Server = servers[0]
	case len(servers) == 0:
		c.attributeDamage(tally)
		return c, fmt.Errorf("%w: no Bridge Commander server traffic in the capture", ErrNoSessions)
	default:
		names := make([]string, len(servers))
		for i, s := range servers {
			names[i] = s.String()
		}
		return c, fmt.Errorf("%w (%s): choose one", ErrManyServers, strings.Join(names, ", "))
	}
	for _, s := range order {
		if s.Server != c.Server || !hasClient(s) {
			continue
		}
		markAnswers(s, opts.AnswerWindow)
		s.Index = len(c.Sessions)
		c.Sessions = append(c.Sessions, s)
	}
	sort.SliceStable(c.Sessions, func(i, j int) bool { return c.Sessions[i].Start.Before(c.Sessions[j].Start) })
	for i, s := range c.Sessions {
		s.Index = i
	}
	c.attributeDamage(tally)
	if len(c.Sessions) == 0 {
		return c, fmt.Errorf("%w: no client sessions on server %s", ErrNoSessions, c.Server)
	}
	return c, nil
}

// closed reports whether done (which may be nil) is closed.
func closed(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

func hasClient(s *Script) bool {
	for i := range s.Steps {
		if s.Steps[i].IsClient() {
			return true
		}
	}
	return false
}

// markAnswers marks the server datagrams that answer a client datagram.
func markAnswers(s *Script, window time.Duration) {
	last := -1
	for i := range s.Steps {
		d := &s.Steps[i]
		if d.IsClient() {
			last = i
			continue
		}
		if last >= 0 && d.At-s.Steps[last].At <= window {
			d.Answer, d.AnswerTo = true, last
		}
	}
}
