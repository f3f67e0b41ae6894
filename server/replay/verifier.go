package replay

// One session's verifier: the client socket, the facts of its join, and the
// setup and finish shared by exact and adaptive mode.

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/session"
)

// verifier plays one session.
type verifier struct {
	opts    *VerifyOptions
	listen  func() (net.PacketConn, error)
	live    *liveRecorder // the run's datagrams, for the verdict
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
	// scripted is called once the session's script has been played;
	// allScripted is closed once every session's has (adaptive mode: a
	// session the capture does not disconnect stays, receiving and
	// ACKing, until then, as a client still connected would).
	scripted    func()
	allScripted <-chan struct{}
	asked       map[game.ChecksumRound]bool
	answered    map[game.ChecksumRound]bool
	inFrame     map[game.Opcode]bool // server opcodes of the current datagram
	inFrameN    int

	buf      []byte
	received int // datagrams received in the whole session
	// stamped: the socket delivers the kernel's receive time stamps
	// (stamp_linux.go), read with oob.
	stamped bool
	oob     [128]byte

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
	v.observeAt(time.Time{}, src, dst, wire)
}

// observeAt is observe for a datagram that arrived at a known time (zero:
// now).
func (v *verifier) observeAt(at time.Time, src, dst netip.AddrPort, wire []byte) {
	v.frame++
	now := at
	if now.IsZero() {
		now = time.Now()
	}
	v.live.add(now, src, dst, wire)
	v.tracker.Datagram(v.frame, now, src, dst, wire, func(r *flow.Record) {
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
	v.stamped = stampConn(pc)
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
