package diff

// Building the model: one record at a time into its session, findings
// as they show, and at the end the pairing and per-session checks.

import (
	"fmt"
	"net/netip"
	"sort"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/session"
	"github.com/bcwire/bcwire/session/measure"
)

type flowKey struct{ server, client netip.AddrPort }

// Builder builds a Capture from the records of one capture file. Feed it
// every record with Add (and, optionally, the session package's sessions
// with AddSession), then call Finish.
type Builder struct {
	rules    *Rules
	name     string
	flows    map[flowKey]*Session
	all      []*Session
	servers  map[netip.AddrPort]*serverState
	infos    []*session.Session
	findings map[string]*Finding
	records  int
	damaged  int
	measures *measure.Builder
}

// NewBuilder returns a Builder for the capture called name.
func NewBuilder(name string, r *Rules) *Builder {
	return &Builder{rules: r, name: name, flows: map[flowKey]*Session{},
		servers: map[netip.AddrPort]*serverState{}, findings: map[string]*Finding{}, measures: measure.NewBuilder()}
}

// Read builds a Capture from src, running the flow tracker and the
// session builder itself.
func Read(name string, src flow.Source, servers []netip.AddrPort, r *Rules) (*Capture, error) {
	b := NewBuilder(name, r)
	sb := session.NewBuilder(session.Options{}, b.AddSession)
	_, err := flow.Run(src, flow.New(flow.Options{Servers: servers}), func(rec *flow.Record) bool {
		sb.Add(rec)
		b.Add(rec)
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	sb.Finish()
	return b.Finish(), nil
}

// AddSession hands the Builder one of the session package's sessions of
// the same capture; Finish pairs it with the diff's own.
func (b *Builder) AddSession(s *session.Session) { b.infos = append(b.infos, s) }

func dirIndex(d game.Direction) int { return session.DirIndex(d) }

func (b *Builder) server(ep netip.AddrPort) *serverState {
	sv := b.servers[ep]
	if sv == nil {
		sv = &serverState{ships: map[game.ObjectID]*Session{}}
		sv.relays.Window = time.Duration(b.rules.RelayWindow)
		b.servers[ep] = sv
	}
	return sv
}

func (b *Builder) newSession(k flowKey, at time.Time) *Session {
	s := &Session{Server: k.server, Client: k.client, Start: at, End: at,
		ackUse: map[ackUseKey]*usage{}, srv: b.server(k.server)}
	b.flows[k] = s
	b.all = append(b.all, s)
	s.srv.sessions = append(s.srv.sessions, s)
	return s
}

// Add consumes one record. r is not retained.
func (b *Builder) Add(r *flow.Record) {
	b.records++
	b.measures.Add(r)
	if r.Err != nil {
		b.damaged++
	}
	if r.Kind == flow.KindGameSpy || !r.Client.IsValid() || !r.Server.IsValid() {
		return
	}
	d := dirIndex(r.Dir)
	if d < 0 {
		return
	}
	k := flowKey{r.Server, r.Client}
	s := b.flows[k]
	connect := r.Kind == flow.KindMessage && r.Dir == game.ClientToServer && r.Control != nil && r.Control.Kind == "connect-request"
	if s == nil || (connect && !s.Connect.IsZero() && s.Step("connect") != nil && !isRetransmit(s, r)) {
		if s != nil {
			b.endSession(s, r.Time)
		}
		s = b.newSession(k, r.Time)
	}
	s.End = r.Time
	if r.Kind == flow.KindDamaged || r.Kind == flow.KindLost {
		b.anomaly(s, r, "damaged", "damaged datagrams or lost fragments", Major, Minor)
		return
	}
	m := r.Msg
	if m == nil {
		return
	}
	if b.disconnect06(s, r) {
		return // its own finding; no stock message to compare
	}
	if m.Legacy && !b.legacyConnect(s, r) {
		b.anomaly(s, r, "legacy-framing", "messages in the legacy [type][len:u8][flags:u8] framing", Major, Minor)
	}
	if !m.Type.Known() {
		b.anomaly(s, r, fmt.Sprintf("unknown-transport-0x%02X", uint8(m.Type)),
			fmt.Sprintf("messages of unknown transport type 0x%02X", uint8(m.Type)), Major, Minor)
	}
	if !b.eventLengthDeviation(s, r) && !b.registryDeviation(s, r) && r.Game != nil && r.Game.Err != nil {
		b.anomaly(s, r, "decode-error", "game messages that do not decode as their opcode's layout", Major, Minor)
	}
	if r.Dir == game.ServerToClient && r.Control != nil && r.Control.Kind == "peer-info" {
		// Counted before the retransmission filter: a server may send
		// every keepalive under one sequence number.
		s.Keepalives++
		if s.Keepalive == nil {
			k := b.msg(r)
			s.Keepalive = &k
		}
	}
	b.closeExpired(s, r.Time)
	if r.Dir == game.ClientToServer && s.open != nil && !s.open.first.IsZero() && r.Frame != s.open.Trigger.Frame {
		s.open = nil // the answer is what the server sent before hearing from the client again
	}

	if m.Type == dissect.TypeAck {
		b.ack(s, r, d)
		return
	}
	if m.Reliable && !b.reliable(s, r, d) {
		return // a retransmission: everything about it was counted the first time
	}
	if r.Dir == game.ClientToServer {
		b.fromClient(s, r, d, connect)
	} else {
		b.toClient(s, r, d)
	}
}

// isRetransmit reports whether r repeats the connect request that opened s.
func isRetransmit(s *Session, r *flow.Record) bool {
	st := s.Step("connect")
	return st != nil && r.Msg != nil && r.Msg.Reliable && st.trigRel && r.Msg.Seq == st.trigSeq &&
		r.Time.Sub(st.Trigger.Time) < 30*time.Second && s.Lobby.IsZero()
}

func (b *Builder) anomaly(s *Session, r *flow.Record, kind, what string, serverSev, clientSev Severity) {
	sev, side := serverSev, "server"
	if r.Dir == game.ClientToServer {
		sev, side = clientSev, "client"
	}
	b.find(s, Finding{Key: kind + " " + r.Dir.String(), Kind: kind, Phase: s.PhaseAt(r.Time), Severity: sev,
		Summary: fmt.Sprintf("%s from the %s (%s)", what, side, r.Dir)}, r.Frame, errText(r))
}

func errText(r *flow.Record) string {
	switch {
	case r.Err != nil:
		return fmt.Sprintf("frame %d: %v", r.Frame, r.Err)
	case r.Game != nil && r.Game.Err != nil:
		// A game message that fits no stock layout: non-stock, not damage,
		// but the layout's failure is what the finding shows.
		return fmt.Sprintf("frame %d: %v: %v", r.Frame, r.Game.Msg.Opcode(), r.Game.Err)
	}
	return ""
}

// find records one occurrence of a finding.
func (b *Builder) find(s *Session, f Finding, frame int, detail string) {
	g := b.findings[f.Key]
	if g == nil {
		g = &f
		g.seen = map[*Session]bool{}
		b.findings[f.Key] = g
	}
	g.Count++
	if s != nil && !g.seen[s] {
		g.seen[s] = true
		g.Sessions++
	}
	if frame > 0 && len(g.Frames) < maxFrames {
		g.Frames = append(g.Frames, frame)
	}
	if detail != "" && len(g.Detail) < maxDetail {
		g.Detail = append(g.Detail, detail)
	}
}

const (
	maxFrames = 8
	maxDetail = 6
)

func (b *Builder) msg(r *flow.Record) Msg {
	m := r.Msg
	out := Msg{Frame: r.Frame, Index: r.MsgIndex, Time: r.Time, Dir: r.Dir, Type: m.Type, Reliable: m.Reliable,
		Ordered: m.Ordered, Fragment: m.Fragment, FragIndex: m.FragIndex, Seq: m.Seq, AckFlags: m.AckFlags}
	if m.Type == dissect.TypeAck {
		out.FragIndex = m.AckFragIndex
	}
	if r.Control != nil {
		c := *r.Control
		if c.Slot != nil {
			v := *c.Slot
			c.Slot = &v
		}
		c.Reserved = append([]byte(nil), c.Reserved...)
		c.Extra = append([]byte(nil), c.Extra...)
		out.Control = &c
	}
	if r.Game != nil {
		// The tracker reuses its messages; a fresh decoder's is reused by
		// no one: decoding the message's bytes again is the copy.
		res := game.NewDecoder().Decode(append([]byte(nil), r.Payload...), r.Dir)
		out.Game = res.Msg
	}
	return out
}

func (b *Builder) endSession(s *Session, t time.Time) {
	if s.ended {
		return
	}
	s.ended = true
	s.open, s.others = nil, nil
	b.stopRates(s, s.End)
	b.dropShips(s)
	b.checkSession(s)
}

// Finish ends every session and returns the capture.
func (b *Builder) Finish() *Capture {
	for _, s := range b.all {
		b.endSession(s, s.End)
	}
	b.pair()
	c := &Capture{Name: b.name, Records: b.records, Damaged: b.damaged, Measures: b.measures.Finish()}
	for _, s := range b.all {
		if s.Connect.IsZero() && !s.anyData && len(s.Steps) == 0 {
			continue // stray packets of a session that ended before the capture
		}
		c.Sessions = append(c.Sessions, s)
	}
	sort.SliceStable(c.Sessions, func(i, j int) bool { return joinTime(c.Sessions[i]).Before(joinTime(c.Sessions[j])) })
	for i, s := range c.Sessions {
		s.Index = i
	}
	for _, f := range b.findings {
		c.Findings = append(c.Findings, f)
	}
	sort.Slice(c.Findings, func(i, j int) bool { return c.Findings[i].Key < c.Findings[j].Key })
	return c
}

func joinTime(s *Session) time.Time {
	if !s.Connect.IsZero() {
		return s.Connect
	}
	return s.Start
}

// pair attaches each session package session to the diff session of the
// same flow that started closest to it.
func (b *Builder) pair() {
	for _, info := range b.infos {
		var best *Session
		var bestD time.Duration
		for _, s := range b.all {
			if s.Client != info.Client || s.Server != info.Server || s.Info != nil {
				continue
			}
			d := s.Start.Sub(info.Start)
			if d < 0 {
				d = -d
			}
			if best == nil || d < bestD {
				best, bestD = s, d
			}
		}
		if best != nil {
			best.Info = info
		}
	}
}

// checkSession runs the per-session protocol checks once it has ended.
func (b *Builder) checkSession(s *Session) {
	cutoff := s.End.Add(-time.Duration(b.rules.AckGrace))
	for d := 0; d < 2; d++ {
		for ch := 0; ch < 2; ch++ {
			var u struct{ n, frame int }
			if u.n, u.frame = s.delivery[d].Unacked(dissect.Channel(ch), cutoff); u.n > 0 {
				dir := session.Dirs[d]
				sev := Major // the server did not ACK a client's message
				if dir == game.ServerToClient {
					sev = Minor
				}
				b.find(s, Finding{Key: fmt.Sprintf("unacked %s %s", dir, dissect.Channel(ch)), Kind: "unacked",
					Phase: PhaseGameplay, Severity: sev,
					Summary: fmt.Sprintf("reliable %s messages on the %s channel never ACKed", dir, dissect.Channel(ch))},
					u.frame, fmt.Sprintf("%s: %d never ACKed, first in frame %d", s.Client, u.n, u.frame))
			}
		}
	}
	for d := 0; d < 2; d++ {
		dir := session.Dirs[d]
		sev := Major
		if dir == game.ClientToServer {
			sev = Minor
		}
		for ch := 0; ch < 2; ch++ {
			t := s.delivery[d].Sequence(dissect.Channel(ch))
			if t.Started && s.fromStart[d][ch] && t.First != 0 {
				b.find(s, Finding{Key: fmt.Sprintf("seq-start %s %s", dir, dissect.Channel(ch)), Kind: "sequence",
					Phase: PhaseHandshake, Severity: sev,
					Summary: fmt.Sprintf("%s reliable messages on the %s channel are numbered from %d (stock starts at 0)", dir, dissect.Channel(ch), t.First)},
					t.FirstFrame, "")
			}
			if t.Gaps > 0 && dir == game.ServerToClient {
				b.find(s, Finding{Key: fmt.Sprintf("seq-gaps %s %s", dir, dissect.Channel(ch)), Kind: "sequence",
					Phase: s.PhaseAt(s.Start), Severity: sev,
					Summary: fmt.Sprintf("%s sequence numbers on the %s channel skip values (captured at the server, so the server skipped them)", dir, dissect.Channel(ch))},
					t.GapFrame, fmt.Sprintf("%s: %d gaps", s.Client, t.Gaps))
			}
		}
	}
	if st := s.Step("new player in game"); st != nil && st.Answered {
		n := 0
		for i := range st.Reply {
			if g := st.Reply[i].Game; g != nil && (g.Opcode() == game.OpObjCreate || g.Opcode() == game.OpObjCreateTeam) {
				n++
			}
		}
		if n < st.LiveShips {
			b.find(s, Finding{Key: "replication", Kind: "replication", Phase: PhaseLobby, Severity: Major,
				Summary: "late joiners are not sent an ObjCreate for every ship already in play"},
				st.Trigger.Frame, fmt.Sprintf("%s: %d ObjCreate for %d live ships", s.Client, n, st.LiveShips))
		}
	}
	want := map[string]uint8{"control": dissect.AckControl, "data": 0, "fragment": dissect.AckFragment}
	keys := make([]ackUseKey, 0, len(s.ackUse))
	for k := range s.ackUse {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].dir != keys[j].dir {
			return keys[i].dir < keys[j].dir
		}
		return keys[i].cat < keys[j].cat
	})
	for _, k := range keys {
		u := s.ackUse[k]
		dir := session.Dirs[k.dir]
		sev := Major
		if dir == game.ClientToServer {
			sev = Minor
		}
		for f, n := range u.flags {
			if f == want[k.cat] {
				continue
			}
			b.find(s, Finding{Key: fmt.Sprintf("ack-flags %s %s 0x%02X", dir, k.cat, f), Kind: "ack-flags",
				Phase: PhaseHandshake, Severity: sev,
				Summary: fmt.Sprintf("%s ACKs of %s messages carry flags 0x%02X (stock 0x%02X)", dir, k.cat, f, want[k.cat])},
				u.frame[f], fmt.Sprintf("%s: %d ACKs", s.Client, n))
		}
	}
}
