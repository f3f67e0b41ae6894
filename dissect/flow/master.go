package flow

import (
	"fmt"
	"net/netip"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/game"
)

// The GameSpy master server's TCP list protocol (dissect.MasterMessage):
// each connection to the master's list port is followed as two byte
// streams, put in order by sequence number, and cut into messages. A
// record of KindGameSpy carries each message, with Master set; its
// GameSpy holds the message's text (empty for the binary list).
//
// What is held is bounded: at most maxMasterConns connections (the oldest
// is forgotten first), and per direction at most maxMasterAhead bytes of
// segments that arrived ahead of a gap; past that the gap is given up on
// and reported.

const (
	maxMasterConns = 256
	maxMasterAhead = 64 << 10
)

type masterKey struct{ client, master netip.AddrPort }

type masterStream struct {
	started bool
	next    uint32
	ahead   map[uint32][]byte // segments past a gap, by sequence number
	aheadN  int
	split   dissect.MasterSplitter
}

type masterConn struct {
	dirs [2]masterStream // by DirIndex order: 0 client to master, 1 master to client
}

type masterTracker struct {
	conns map[masterKey]*masterConn
	order fifo[masterKey]
	msg   dissect.MasterMessage
	text  dissect.GameSpy
}

// masterSegment follows one TCP segment of a master list connection.
func (t *Tracker) masterSegment(r *Record, payload []byte, out *sink) {
	mt := &t.master
	if mt.conns == nil {
		mt.conns = map[masterKey]*masterConn{}
	}
	seg := r.TCP
	fromMaster := r.Src.Port() == capture.MasterListPort
	key := masterKey{client: r.Src, master: r.Dst}
	d := 0
	if fromMaster {
		key, d = masterKey{client: r.Dst, master: r.Src}, 1
	}
	c := mt.conns[key]
	if c == nil {
		for len(mt.conns) >= maxMasterConns {
			old, ok := mt.order.pop()
			if !ok {
				break
			}
			delete(mt.conns, old)
		}
		c = &masterConn{}
		c.dirs[1].split.FromMaster = true
		mt.conns[key] = c
		mt.order.push(key)
	}
	s := &c.dirs[d]
	seq := seg.Seq
	if seg.Flags&capture.TCPSyn != 0 {
		s.started, s.next = true, seq+1
		seq++
	}
	if !s.started && len(payload) > 0 {
		s.started, s.next = true, seq // the capture began inside the connection
	}
	base := *r
	emitMsg := func(b []byte) { t.masterMessage(&base, key, fromMaster, b, nil, out) }
	if len(payload) > 0 {
		switch diff := int32(seq - s.next); {
		case diff == 0:
			s.deliver(payload, emitMsg)
			s.drain(emitMsg)
		case diff < 0 && int32(seq+uint32(len(payload))-s.next) > 0:
			s.deliver(payload[-diff:], emitMsg) // a resent segment with new bytes at its end
			s.drain(emitMsg)
		case diff < 0: // resent: nothing new
		default:
			if s.ahead == nil {
				s.ahead = map[uint32][]byte{}
			}
			if _, ok := s.ahead[seq]; !ok {
				s.ahead[seq] = append([]byte(nil), payload...)
				s.aheadN += len(payload)
			}
			if s.aheadN > maxMasterAhead {
				gap := s.firstAhead() - s.next
				t.masterMessage(&base, key, fromMaster, nil,
					fmt.Errorf("master TCP stream: %d bytes never captured before sequence %d; resynchronised", gap, s.firstAhead()), out)
				s.next = s.firstAhead()
				s.split.Flush()
				s.drain(emitMsg)
			}
		}
	}
	if seg.Flags&(capture.TCPFin|capture.TCPRst) != 0 {
		if rest := s.split.Flush(); rest != nil {
			t.masterMessage(&base, key, fromMaster, rest, nil, out)
		}
		if seg.Flags&capture.TCPRst != 0 || !c.dirs[1-d].started {
			delete(mt.conns, key)
		}
	}
}

func (s *masterStream) deliver(p []byte, emit func([]byte)) {
	s.next += uint32(len(p))
	for _, m := range s.split.Push(p) {
		emit(m)
	}
}

// drain delivers the segments held ahead that the stream now reaches.
func (s *masterStream) drain(emit func([]byte)) {
	for len(s.ahead) > 0 {
		progressed := false
		for seq, p := range s.ahead {
			end := seq + uint32(len(p))
			switch {
			case int32(end-s.next) <= 0: // wholly before next: resent
			case int32(seq-s.next) <= 0:
				s.deliver(p[s.next-seq:], emit)
			default:
				continue
			}
			delete(s.ahead, seq)
			s.aheadN -= len(p)
			progressed = true
		}
		if !progressed {
			return
		}
	}
}

func (s *masterStream) firstAhead() uint32 {
	first, set := uint32(0), false
	for seq := range s.ahead {
		if !set || int32(seq-first) < 0 {
			first, set = seq, true
		}
	}
	return first
}

// masterMessage emits the record of one message (b), or of damage (err,
// with b nil).
func (t *Tracker) masterMessage(base *Record, key masterKey, fromMaster bool, b []byte, err error, out *sink) {
	mt := &t.master
	dir := game.ClientToServer
	if fromMaster {
		dir = game.ServerToClient
	}
	r := &t.rec
	*r = Record{Kind: KindGameSpy, Frame: base.Frame, Time: base.Time, Src: base.Src, Dst: base.Dst,
		Server: key.master, Client: key.client, Dir: dir, Datagram: b, Err: err}
	mt.text = dissect.GameSpy{}
	if b != nil {
		m, perr := dissect.ParseMasterMessage(b, fromMaster)
		mt.msg = m
		if m.Text != nil {
			mt.text = *m.Text
		}
		r.Master, r.Err = &mt.msg, perr
	} else {
		mt.msg = dissect.MasterMessage{}
		r.Master = &mt.msg
	}
	r.GameSpy = &mt.text
	t.stats.GameSpy++
	out.put(r)
}

// finishMaster reports the lists cut off by the end of the capture.
func (t *Tracker) finishMaster(emit func(*Record)) {
	mt := &t.master
	for _, key := range mt.order.q[mt.order.head:] {
		c := mt.conns[key]
		if c == nil {
			continue
		}
		for d := range c.dirs {
			s := &c.dirs[d]
			if rest := s.split.Flush(); rest != nil {
				base := Record{Src: key.client, Dst: key.master}
				if d == 1 {
					base.Src, base.Dst = key.master, key.client
				}
				t.masterMessage(&base, key, d == 1, rest, nil, &sink{until: func(r *Record) bool { emit(r); return true }})
			}
		}
	}
	mt.conns, mt.order = nil, fifo[masterKey]{}
}
