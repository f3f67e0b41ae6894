package replay

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"sync"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/server/manifest"
	"github.com/bcwire/bcwire/session"
	"github.com/bcwire/bcwire/session/diff"
)

// Mode is how Verify plays and compares.
type Mode int

const (
	// ModeExact sends the captured client datagrams unchanged (address
	// fields rewritten) and expects byte-identical answers.
	ModeExact Mode = iota
	// ModeAdaptive is a protocol-aware client: it ACKs what it receives,
	// numbers its reliable messages as captured, answers checksum requests
	// with the captured response for that round and compares decoded
	// messages rather than datagrams.
	ModeAdaptive
)

func (m Mode) String() string {
	if m == ModeAdaptive {
		return "adaptive"
	}
	return "exact"
}

// ParseMode reads "exact" or "adaptive".
func ParseMode(s string) (Mode, error) {
	switch strings.ToLower(s) {
	case "exact":
		return ModeExact, nil
	case "adaptive":
		return ModeAdaptive, nil
	}
	return 0, fmt.Errorf("mode %q: want exact or adaptive", s)
}

// VerifyOptions tune Verify.
type VerifyOptions struct {
	Target netip.AddrPort // the server under test
	Mode   Mode
	Timing Timing
	// AnswerTimeout is how long to wait for an expected answer after the
	// last datagram that arrived (default 1s). With TimingCapture a server
	// datagram is not waited for before its captured offset.
	AnswerTimeout time.Duration
	// GiveUp abandons a session after this many steps in a row that
	// expected answers and received nothing (default 5).
	GiveUp int
	// Comparer judges decoded game messages: by default, in adaptive mode,
	// a RulesComparer with session/diff's DefaultRules (the diff engine's
	// tolerances, plus GameSpyIgnore), in exact mode DefaultComparer
	// (field for field, game time aside).
	Comparer Comparer
	// Listen opens each session's socket. The default listens on UDP port
	// 0 of the session's address in Sources.
	Listen func() (net.PacketConn, error)
	// Logf, when set, receives progress lines.
	Logf func(format string, args ...any)
	// Manifest, when set (adaptive mode), answers each checksum request it
	// has a round for with its response instead of the captured one: a
	// server that checks the answers against its own manifest accepts them.
	Manifest manifest.Manifest
	// Sources are the local addresses sessions send from, one per session
	// in join order (the list repeats when there are more sessions). By
	// default, against a loopback target every session has its own
	// address, 127.0.0.2 on, so that a server's per-address limits see one
	// client per address as in the capture; otherwise all send from the
	// address that routes to the target. Ignored when Listen is set.
	Sources []netip.Addr
	// FailOnConfig counts configuration differences (status "config")
	// against the run (Summary.OK).
	FailOnConfig bool
}

// Step statuses.
const (
	StatusSent       = "sent"       // a client datagram (or, adaptive, message) sent
	StatusNotSent    = "not-sent"   // a client step of an abandoned session
	StatusIdentical  = "identical"  // the server's datagram arrived byte for byte
	StatusEquivalent = "equivalent" // it differs in bytes but decodes to the same content
	StatusDifferent  = "different"  // something else arrived in its place
	StatusMissing    = "missing"    // nothing arrived for it
	StatusUnexpected = "unexpected" // a datagram arrived that nothing in the capture accounts for
	// StatusNotDue (adaptive, asap timing): a message the server sends on
	// its own clock or unprompted (keepalive, StateUpdate, another
	// client's relayed traffic) that the session ended before; not a
	// divergence, since an asap client runs ahead of the server's clock.
	StatusNotDue = "not-due"
	// StatusConfig: the server's message arrived and differs only in how
	// the server is set up (ConfigFields: GameSpy name, map, limits,
	// player list; Settings values; match settings). Step.Config lists
	// every such difference. Not a protocol divergence, and not counted
	// against the run unless VerifyOptions.FailOnConfig.
	StatusConfig = "config"
	// StatusNotReached: a server step of a session abandoned before it
	// (no timing: the session never got there).
	StatusNotReached = "not-reached"
	// StatusNoAnswer: the synthetic step that opens an abandoned
	// session's report: the server stopped answering after the client
	// step it names.
	StatusNoAnswer = "no-answer"
	// StatusRefused: the synthetic step that opens the report of a
	// session the server refused (a boot, or a checksum failure 0x22 or
	// 0x23): what it sent, and after which client step.
	StatusRefused = "refused"
)

// Step is one step of a verified session.
type Step struct {
	Step   int     `json:"step"`            // index in the script; -1 for unexpected datagrams
	Frame  int     `json:"frame,omitempty"` // capture frame of the step
	Dir    string  `json:"dir"`             // "C->S" or "S->C"
	Status string  `json:"status"`
	AtMS   float64 `json:"at_ms,omitempty"` // live offset from the session's start; absent for steps not reached
	// Rewritten lists the address fields rewritten in a sent datagram.
	Rewritten []string `json:"rewritten,omitempty"`
	// Detail says how a different step differs.
	Detail string `json:"detail,omitempty"`
	// Expected and Got are the decoded captured and received datagrams
	// (or messages), for steps that are not identical.
	Expected []string `json:"expected,omitempty"`
	Got      []string `json:"got,omitempty"`
	// Config lists every configuration difference of a "config" step.
	Config []string `json:"config,omitempty"`
}

// IsDivergence reports whether the step shows a difference.
func (s *Step) IsDivergence() bool {
	switch s.Status {
	case StatusDifferent, StatusMissing, StatusUnexpected, StatusNoAnswer, StatusRefused:
		return true
	}
	return false
}

// Text is a readable form of the step with both sides decoded.
func (s *Step) Text() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "step %d", s.Step)
	if s.Frame > 0 {
		fmt.Fprintf(&sb, " (capture frame %d)", s.Frame)
	}
	if s.Status == StatusNotReached || s.Status == StatusNoAnswer || s.Status == StatusRefused {
		fmt.Fprintf(&sb, " %s: %s", s.Dir, s.Status)
	} else {
		fmt.Fprintf(&sb, " %s at +%.3fs: %s", s.Dir, s.AtMS/1000, s.Status)
	}
	if s.Detail != "" {
		sb.WriteString(": " + s.Detail)
	}
	sb.WriteString("\n")
	if len(s.Expected) > 0 || len(s.Got) > 0 {
		exp, got := s.Expected, s.Got
		if len(exp) == 0 {
			exp = []string{"(nothing)"}
		}
		if len(got) == 0 {
			got = []string{"(nothing)"}
		}
		sb.WriteString(SideBySide("captured", exp, "received", got))
	}
	return sb.String()
}

// Counts are the step totals of a session or of a whole run.
type Counts struct {
	Identical  int `json:"identical"`
	Equivalent int `json:"equivalent"`
	Different  int `json:"different"`
	Missing    int `json:"missing"`
	Unexpected int `json:"unexpected"`
	NotDue     int `json:"not_due"`
	Config     int `json:"config"`      // steps that differ only in configuration
	NotReached int `json:"not_reached"` // server steps of abandoned sessions never reached
}

// OK reports whether nothing differed.
func (c Counts) OK() bool { return c.Different == 0 && c.Missing == 0 && c.Unexpected == 0 }

func (c *Counts) add(status string) {
	switch status {
	case StatusIdentical:
		c.Identical++
	case StatusEquivalent:
		c.Equivalent++
	case StatusDifferent:
		c.Different++
	case StatusMissing:
		c.Missing++
	case StatusUnexpected:
		c.Unexpected++
	case StatusNotDue:
		c.NotDue++
	case StatusConfig:
		c.Config++
	case StatusNotReached:
		c.NotReached++
	}
}

// SessionResult is the verification of one captured session.
type SessionResult struct {
	Session  int    `json:"session"`  // 1-based, in join order
	Client   string `json:"client"`   // the live client endpoint
	Captured string `json:"captured"` // the captured client endpoint
	// Joined: the session reached the lobby (Settings and GameInit
	// received from the server).
	Joined bool           `json:"joined"`
	Phases session.Phases `json:"phases"`
	// ChecksumRounds counts the checksum rounds the server asked for and
	// the client answered; Bundle is ChecksumComplete (0x28), Settings and
	// GameInit arriving in one datagram; MissionInit is MISSION_INIT
	// arriving.
	ChecksumRounds int  `json:"checksum_rounds"`
	Bundle         bool `json:"bundle"`
	MissionInit    bool `json:"mission_init"`
	// Relayed counts the game messages received that another captured
	// session's client sent: relayed traffic (adaptive mode).
	Relayed int `json:"relayed"`
	Counts
	Sent    int `json:"sent"`     // client datagrams (or messages) sent
	NotSent int `json:"not_sent"` // client steps not played (abandoned session)
	// Abandoned says why the session stopped early.
	Abandoned string `json:"abandoned,omitempty"`
	// First is the first divergence, nil when there is none.
	First *Step  `json:"first_divergence,omitempty"`
	Steps []Step `json:"steps"`
}

// Summary totals a run.
type Summary struct {
	Sessions int `json:"sessions"`
	Joined   int `json:"joined"`
	Counts
	// Identical (sessions whose every server step was identical) and OK
	// (identical or equivalent throughout).
	SessionsIdentical int  `json:"sessions_identical"`
	SessionsOK        int  `json:"sessions_ok"`
	OK                bool `json:"ok"`
}

// Result is what Verify found.
type Result struct {
	Target   string           `json:"target"`
	Mode     string           `json:"mode"`
	Timing   string           `json:"timing"`
	Sessions []*SessionResult `json:"sessions"`
	Summary  Summary          `json:"summary"`
	// Damage is the capture's damage (nil when clean): see damage.go.
	Damage *DamageReport `json:"capture_damage,omitempty"`
}

// ErrUnreachable is returned when the target never answered the first
// session's first datagram that expects an answer.
var ErrUnreachable = errors.New("target unreachable")

// Verify plays the client side of every captured session of c against
// opts.Target, each from its own socket, starting them in join order, and
// compares what comes back with what the captured server sent. It returns
// once every session has finished (or ctx is cancelled) and every socket
// and goroutine it opened is closed.
func Verify(ctx context.Context, c *Capture, opts VerifyOptions) (*Result, error) {
	if !opts.Target.IsValid() {
		return nil, errors.New("verify: no target address")
	}
	if opts.AnswerTimeout <= 0 {
		opts.AnswerTimeout = time.Second
	}
	if opts.GiveUp <= 0 {
		opts.GiveUp = 5
	}
	if opts.Comparer == nil {
		if opts.Mode == ModeAdaptive {
			opts.Comparer = NewRulesComparer(diff.DefaultRules())
		} else {
			opts.Comparer = DefaultComparer{}
		}
	}
	sent := clientPayloads(c)
	// Join and leave order: a session's disconnect waits until every
	// session that connected before it in the capture has been given its
	// slot, so that slots, rosters and player lists are the captured ones
	// however fast the sessions run.
	slotted := make([]chan struct{}, len(c.Sessions))
	for i := range slotted {
		slotted[i] = make(chan struct{})
	}
	connectAt, leaveAt := make([]time.Time, len(c.Sessions)), make([]time.Time, len(c.Sessions))
	for i, sc := range c.Sessions {
		connectAt[i], leaveAt[i] = controlTimes(sc)
	}
	// sources[i] is session i's local address (invalid: opts.Listen), and
	// shared[i] the earlier session that sent from the same address last
	// (-1 for none): against a server that limits reconnects per address,
	// session i starts no sooner after it than in the capture.
	sources, err := sourcesFor(&opts, len(c.Sessions))
	if err != nil {
		return nil, err
	}
	shared := make([]int, len(c.Sessions))
	for i := range shared {
		shared[i] = -1
		for j := i - 1; j >= 0 && sources[i].IsValid(); j-- {
			if sources[j] == sources[i] {
				shared[i] = j
				break
			}
		}
	}
	liveStart := make([]time.Time, len(c.Sessions))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	res := &Result{Target: opts.Target.String(), Mode: opts.Mode.String(), Timing: opts.Timing.String(),
		Sessions: make([]*SessionResult, len(c.Sessions))}
	errs := make([]error, len(c.Sessions))
	var wg sync.WaitGroup
	start := time.Now()
	var first time.Time
	if len(c.Sessions) > 0 {
		first = c.Sessions[0].Start
	}
	prev := make(chan struct{})
	close(prev)
	for i, sc := range c.Sessions {
		ready := make(chan struct{})
		wg.Add(1)
		go func(i int, sc *Script, after <-chan struct{}, ready chan struct{}) {
			defer wg.Done()
			var once sync.Once
			started := func() { once.Do(func() { close(ready) }) }
			defer started()
			select { // join order: after the previous session has been answered
			case <-after:
			case <-ctx.Done():
				return
			}
			if opts.Timing == TimingCapture {
				if !sleepCtx(ctx, time.Until(start.Add(sc.Start.Sub(first)))) {
					return
				}
			} else if j := shared[i]; j >= 0 && !liveStart[j].IsZero() {
				if !sleepCtx(ctx, time.Until(liveStart[j].Add(sc.Start.Sub(c.Sessions[j].Start)))) {
					return
				}
			}
			liveStart[i] = time.Now()
			others := map[string]bool{}
			for j, set := range sent {
				if j != i {
					for k := range set {
						others[k] = true
					}
				}
			}
			v := &verifier{opts: &opts, script: sc, started: started, first: i == 0, others: others, listen: opts.Listen}
			if v.listen == nil {
				ap := net.UDPAddrFromAddrPort(netip.AddrPortFrom(sources[i], 0))
				v.listen = func() (net.PacketConn, error) { return net.ListenUDP("udp4", ap) }
			}
			var once2 sync.Once
			v.slotted = func() { once2.Do(func() { close(slotted[i]) }) }
			if opts.Mode == ModeAdaptive {
				// The adaptive client learns its wire slot: the next
				// session starts once it has, so that the server hands
				// out slots in the captured join order however slowly
				// its first answer came (an answer past AnswerTimeout
				// would otherwise let the next client connect first).
				v.started = nil
				v.slotted = func() { once2.Do(func() { close(slotted[i]); started() }) }
			}
			defer v.slotted()
			for j := range c.Sessions {
				if j != i && !connectAt[j].IsZero() && !leaveAt[i].IsZero() && connectAt[j].Before(leaveAt[i]) {
					v.beforeLeave = append(v.beforeLeave, slotted[j])
				}
			}
			r, err := v.run(ctx)
			res.Sessions[i], errs[i] = r, err
			if errors.Is(err, ErrUnreachable) {
				cancel()
			}
		}(i, sc, prev, ready)
		prev = ready
	}
	wg.Wait()
	for _, err := range errs {
		if errors.Is(err, ErrUnreachable) {
			return res, err
		}
	}
	for _, err := range errs {
		if err != nil {
			return res, err
		}
	}
	if err := ctx.Err(); err != nil && !errors.Is(err, context.Canceled) {
		return res, err
	}
	sum := &res.Summary
	for _, s := range res.Sessions {
		if s == nil {
			continue
		}
		sum.Sessions++
		if s.Joined {
			sum.Joined++
		}
		sum.Identical += s.Identical
		sum.Equivalent += s.Equivalent
		sum.Different += s.Different
		sum.Missing += s.Missing
		sum.Unexpected += s.Unexpected
		sum.NotDue += s.NotDue
		sum.Config += s.Config
		sum.NotReached += s.NotReached
		if s.OK() && s.Abandoned == "" && (!opts.FailOnConfig || s.Config == 0) {
			sum.SessionsOK++
			if s.Equivalent == 0 {
				sum.SessionsIdentical++
			}
		}
	}
	sum.OK = sum.SessionsOK == len(c.Sessions) && sum.Counts.OK() && (!opts.FailOnConfig || sum.Config == 0)
	return res, nil
}

// sourcesFor returns each session's local address: opts.Sources in turn,
// else against a loopback target 127.0.0.2 on (wrapping after
// 127.0.0.254), else the address that routes to the target. With
// opts.Listen set every address is invalid (Listen decides).
func sourcesFor(opts *VerifyOptions, n int) ([]netip.Addr, error) {
	out := make([]netip.Addr, n)
	if opts.Listen != nil {
		return out, nil
	}
	switch {
	case len(opts.Sources) > 0:
		for i := range out {
			out[i] = opts.Sources[i%len(opts.Sources)]
		}
	case opts.Target.Addr().Unmap().IsLoopback() && opts.Target.Addr().Unmap().Is4():
		for i := range out {
			out[i] = netip.AddrFrom4([4]byte{127, 0, 0, byte(2 + i%253)})
		}
	default:
		ip, err := localIPFor(opts.Target)
		if err != nil {
			return nil, fmt.Errorf("verify: no route to %s: %w", opts.Target, err)
		}
		for i := range out {
			out[i] = ip
		}
	}
	return out, nil
}

// localIPFor is the local address the system would send to target from.
func localIPFor(target netip.AddrPort) (netip.Addr, error) {
	c, err := net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(target))
	if err != nil {
		return netip.Addr{}, err
	}
	defer c.Close()
	ap := c.LocalAddr().(*net.UDPAddr).AddrPort()
	return ap.Addr().Unmap(), nil
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// verifier plays one session.
type verifier struct {
	opts    *VerifyOptions
	listen  func() (net.PacketConn, error)
	script  *Script
	started func() // tells the next session it may start
	first   bool   // the run's first session: silence means unreachable

	pc     net.PacketConn
	target *net.UDPAddr
	local  netip.AddrPort
	start  time.Time
	res    *SessionResult

	// phases: the live exchange fed through a tracker into a session builder
	tracker  *flow.Tracker
	builder  *session.Builder
	built    *session.Session
	settings bool
	gameinit bool
	frame    int
	others   map[string]bool // game payloads the other sessions' clients send
	// slotted tells the other sessions this one has its slot (or ended);
	// beforeLeave are the sessions whose slot must come before this
	// session's disconnect.
	slotted     func()
	beforeLeave []chan struct{}
	done        <-chan struct{} // the run's context is done
	asked       map[game.ChecksumRound]bool
	answered    map[game.ChecksumRound]bool
	inFrame     map[game.Opcode]bool // server opcodes of the current datagram
	inFrameN    int

	buf      []byte
	received int // datagrams received in the whole session

	// silence is where the current run of unanswered client datagrams
	// began: the length of res.Steps then, and the last client step the
	// server answered nothing after (-1: none).
	silenceMark, silenceAfter int
	// refusal is the server's first refusal of the client (adaptive
	// mode), refusalMark the length of res.Steps then.
	refusal     *Step
	refusalMark int
	// liveDec and capDec (exact mode) decode the live and the captured
	// server datagrams for the report, each knowing its side's ships.
	liveDec, capDec *game.Decoder
}

// noteSilence records where a run of unanswered client datagrams begins:
// mark is len(res.Steps) before the window closed, before and after the
// silence count around it, next the client step about to be sent.
func (v *verifier) noteSilence(mark, before, after, next int) {
	if before == 0 && after > 0 {
		v.silenceMark, v.silenceAfter = mark, lastClientStep(v.script.Steps, next)
	}
}

// noAnswer is the step that opens the report of a session the server
// stopped answering: the client step after which nothing came.
func (v *verifier) noAnswer() *Step {
	i := v.silenceAfter
	if i < 0 || i >= len(v.script.Steps) {
		return nil
	}
	d := &v.script.Steps[i]
	return &Step{Step: i, Frame: d.Frame, Dir: "C->S", Status: StatusNoAnswer,
		Detail: fmt.Sprintf("no answer after frame %d (%s)", d.Frame, clientSummary(d))}
}

func (v *verifier) since() float64 {
	return float64(time.Since(v.start).Microseconds()) / 1000
}

// observe feeds a live datagram to the phase tracker.
func (v *verifier) observe(src, dst netip.AddrPort, wire []byte) {
	v.frame++
	v.tracker.Datagram(v.frame, time.Now(), src, dst, wire, func(r *flow.Record) {
		if r.Game != nil && r.Game.Err == nil {
			v.joinFacts(r)
		}
		v.builder.Add(r)
	})
}

// joinFacts notes the join steps a live record shows.
func (v *verifier) joinFacts(r *flow.Record) {
	if v.asked == nil {
		v.asked, v.answered, v.inFrame = map[game.ChecksumRound]bool{}, map[game.ChecksumRound]bool{}, map[game.Opcode]bool{}
	}
	if r.Dir == game.ClientToServer {
		if m, ok := r.Game.Msg.(*game.ChecksumResponse); ok && v.asked[m.Round] && !v.answered[m.Round] {
			v.answered[m.Round] = true
			v.res.ChecksumRounds++
		}
		return
	}
	if r.Frame != v.inFrameN {
		clear(v.inFrame)
		v.inFrameN = r.Frame
	}
	op := r.Game.Msg.Opcode()
	v.inFrame[op] = true
	switch op {
	case game.OpSettings:
		v.settings = true
	case game.OpGameInit:
		v.gameinit = true
	case game.OpMissionInit:
		v.res.MissionInit = true
	case game.OpChecksumRequest:
		v.asked[r.Game.Msg.(*game.ChecksumRequest).Round] = true
	}
	if v.inFrame[game.OpChecksumComplete] && v.inFrame[game.OpSettings] && v.inFrame[game.OpGameInit] {
		v.res.Bundle = true
	}
}

// controlTimes returns the capture times of the client's connect request
// and of its disconnect (zero when absent).
func controlTimes(sc *Script) (connect, leave time.Time) {
	for j := range sc.Steps {
		d := &sc.Steps[j]
		if !d.IsClient() || d.GameSpy {
			continue
		}
		var dg dissect.Datagram
		_ = dg.Parse(d.Plain)
		for k := range dg.Messages {
			switch dg.Messages[k].Type {
			case dissect.TypeConnect, dissect.TypeConnectAck:
				if connect.IsZero() && dg.Peer == 0xFF {
					connect = sc.Start.Add(d.At)
				}
			case dissect.TypeDisconnect:
				if leave.IsZero() {
					leave = sc.Start.Add(d.At)
				}
			}
		}
	}
	return connect, leave
}

// clientPayloads lists, per session, the unfragmented game messages its
// client sent.
func clientPayloads(c *Capture) []map[string]bool {
	out := make([]map[string]bool, len(c.Sessions))
	for i, sc := range c.Sessions {
		out[i] = map[string]bool{}
		for j := range sc.Steps {
			d := &sc.Steps[j]
			if !d.IsClient() || d.GameSpy {
				continue
			}
			var dg dissect.Datagram
			_ = dg.Parse(d.Plain)
			for k := range dg.Messages {
				if m := &dg.Messages[k]; m.Type == dissect.TypeData && !m.Fragment && len(m.Payload) > 0 {
					out[i][string(m.Payload)] = true
				}
			}
		}
	}
	return out
}

func (v *verifier) setup() error {
	pc, err := v.listen()
	if err != nil {
		return fmt.Errorf("session %d: %w", v.script.Index+1, err)
	}
	v.pc = pc
	ua, ok := pc.LocalAddr().(*net.UDPAddr)
	if !ok {
		pc.Close()
		return fmt.Errorf("session %d: socket is not UDP", v.script.Index+1)
	}
	la := ua.AddrPort()
	v.local = netip.AddrPortFrom(la.Addr().Unmap(), la.Port())
	v.target = net.UDPAddrFromAddrPort(v.opts.Target)
	v.buf = make([]byte, 64<<10)
	v.tracker = flow.New(flow.Options{Servers: []netip.AddrPort{v.opts.Target}})
	v.builder = session.NewBuilder(session.Options{}, func(s *session.Session) {
		if v.built == nil {
			v.built = s
		}
	})
	v.res = &SessionResult{Session: v.script.Index + 1, Client: v.local.String(), Captured: v.script.Client.String(),
		Steps: []Step{}}
	return nil
}

func (v *verifier) finish() {
	v.builder.Finish()
	if v.built != nil {
		v.res.Phases = v.built.Phases
	}
	v.res.Joined = v.settings && v.gameinit
	// A session the server refused, or stopped answering, opens with
	// that: what follows are its symptoms, unless something else differed
	// before.
	var first *Step
	mark := v.silenceMark
	switch {
	case v.refusal != nil:
		first, mark = v.refusal, v.refusalMark
	case v.res.Abandoned != "":
		first = v.noAnswer()
	}
	for i := range v.res.Steps {
		st := &v.res.Steps[i]
		v.res.Counts.add(st.Status)
		if v.res.First == nil && st.IsDivergence() && (first == nil || i < mark) {
			c := *st
			v.res.First = &c
		}
	}
	if v.res.First == nil && first != nil {
		v.res.First = first
	}
}

func (v *verifier) run(ctx context.Context) (*SessionResult, error) {
	if err := v.setup(); err != nil {
		return nil, err
	}
	defer v.pc.Close()
	stop := context.AfterFunc(ctx, func() { _ = v.pc.SetReadDeadline(time.Unix(1, 0)) })
	defer stop()
	v.start = time.Now()
	v.done = ctx.Done()
	var err error
	if v.opts.Mode == ModeAdaptive {
		err = v.runAdaptive(ctx)
	} else {
		err = v.runExact(ctx)
	}
	v.finish()
	return v.res, err
}

// startedOnce lets the next session start once this one has been answered.
func (v *verifier) startedOnce() {
	if v.started != nil {
		v.started()
		v.started = nil
	}
}

// lastClientStep is the index of the last client step before before, or -1.
func lastClientStep(steps []Datagram, before int) int {
	for i := before - 1; i >= 0; i-- {
		if steps[i].IsClient() {
			return i
		}
	}
	return -1
}

// clientSummary names what a client datagram carried: its game messages
// ("ChecksumResponse round 0"), else its control messages, else "ACK".
func clientSummary(d *Datagram) string {
	if d.GameSpy {
		return "GameSpy query"
	}
	var dg dissect.Datagram
	_ = dg.Parse(d.Plain)
	var games, controls []string
	acks := 0
	for i := range dg.Messages {
		m := &dg.Messages[i]
		switch {
		case m.Type == dissect.TypeAck:
			acks++
		case m.Type != dissect.TypeData:
			controls = append(controls, m.Type.String())
		case len(m.Payload) == 0 || (m.Fragment && m.FragIndex > 0):
		case len(m.Payload) > 1 && game.Opcode(m.Payload[0]) == game.OpChecksumResponse:
			games = append(games, fmt.Sprintf("ChecksumResponse round %s", game.ChecksumRound(m.Payload[1])))
		default:
			games = append(games, game.Opcode(m.Payload[0]).String())
		}
	}
	switch {
	case len(games) > 0:
		return strings.Join(games, ", ")
	case len(controls) > 0:
		return strings.Join(controls, ", ")
	case acks > 0:
		return "ACK"
	}
	return "an empty datagram"
}

func lastClientFrame(steps []Datagram, before int) int {
	for i := before - 1; i >= 0; i-- {
		if steps[i].IsClient() {
			return steps[i].Frame
		}
	}
	return 0
}
