package flow

import (
	"bytes"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/game"
)

// scene builds a capture record by record.
type scene struct {
	t   *testing.T
	buf bytes.Buffer
	w   *capture.Writer
	now time.Time
}

func newScene(t *testing.T) *scene {
	s := &scene{t: t, now: time.Date(2026, 1, 10, 20, 0, 0, 0, time.UTC)}
	w, err := capture.NewWriter(&s.buf, capture.PCAP, capture.Ethernet)
	if err != nil {
		t.Fatal(err)
	}
	s.w = w
	return s
}

// send writes one encrypted datagram built from msgs.
func (s *scene) send(src, dst string, peer byte, msgs ...dissect.Message) {
	s.t.Helper()
	plain := (&dissect.Datagram{Peer: peer, Messages: msgs}).Append(nil)
	wire := make([]byte, len(plain))
	dissect.Encrypt(wire, plain)
	s.raw(src, dst, wire)
}

func (s *scene) raw(src, dst string, payload []byte) {
	s.t.Helper()
	s.now = s.now.Add(10 * time.Millisecond)
	if err := s.w.WriteUDP(s.now, netip.MustParseAddrPort(src), netip.MustParseAddrPort(dst), payload); err != nil {
		s.t.Fatal(err)
	}
}

func data(seq uint16, m game.Message) dissect.Message {
	return dissect.Message{Type: dissect.TypeData, Reliable: true, Seq: seq, Payload: m.Append(nil)}
}

func connect(ip string) dissect.Message {
	c := dissect.Control{Kind: "connect-request", Addr: netip.MustParseAddr(ip), Port: 50000, Reserved: make([]byte, 4)}
	return dissect.Message{Type: dissect.TypeConnectAck, Reliable: true, Ordered: true, Payload: dissect.AppendControl(nil, &c)}
}

func slot(n byte) dissect.Message {
	return dissect.Message{Type: dissect.TypeConnectAck, Reliable: true, Ordered: true, Payload: []byte{n}}
}

type collected struct {
	recs []Record
	sum  Summary
}

func (s *scene) decode(opts Options) collected {
	s.t.Helper()
	if err := s.w.Flush(); err != nil {
		s.t.Fatal(err)
	}
	rd, err := capture.NewReader(bytes.NewReader(s.buf.Bytes()))
	if err != nil {
		s.t.Fatal(err)
	}
	var c collected
	c.sum, err = Run(rd, New(opts), func(r *Record) bool {
		cp := *r
		if r.Game != nil {
			g := *r.Game
			cp.Game = &g
			// keep the decoded message's text: the Message value is reused
			cp.Warning = r.Warning + "|" + g.Msg.Opcode().String() + " " + g.Msg.String()
			cp.Payload = bytes.Clone(r.Payload) // valid only during emit
		}
		c.recs = append(c.recs, cp)
		return true
	})
	if err != nil {
		s.t.Fatal(err)
	}
	return c
}

func TestCaptureWithTwoServersFragmentsAndDamage(t *testing.T) {
	s := newScene(t)
	const srvA, srvB = "10.0.0.1:22101", "10.0.0.5:2300" // B only shows itself by peer id 0x01
	clientsA := []string{"10.0.1.10:50000", "10.0.1.11:50007", "10.0.1.12:50014"}
	clientsB := []string{"10.0.2.20:40000", "10.0.2.21:40001"}

	// GameSpy on server A, then an unrelated UDP flow (DNS-like bytes).
	s.raw(clientsA[0], srvA, []byte(`\status\`))
	s.raw(srvA, clientsA[0], []byte(`\hostname\A\numplayers\0\queryid\1.1\final\`))
	s.raw("10.0.9.9:5353", "10.0.9.1:53", []byte{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0})

	for i, c := range append(append([]string{}, clientsA...), clientsB...) {
		srv := srvA
		if i >= len(clientsA) {
			srv = srvB
		}
		ip := netip.MustParseAddrPort(c).Addr().String()
		s.send(c, srv, 0xFF, connect(ip))
		round0 := &game.ChecksumRequest{Round: 0, Dir: "scripts/", Filter: "App.pyc"}
		s.send(srv, c, 0x01, slot(byte(2+i)), data(0, round0))
	}

	// Client A0 answers round 2 with a 3-fragment response: fragments
	// arrive 1, 0, 1 (retransmitted), 2.
	resp := &game.ChecksumResponse{Round: 2, DirHash: 0x1234}
	for i := 0; i < 120; i++ {
		resp.Tree.Files = append(resp.Tree.Files, game.ChecksumFile{Name: game.Hash32(i), Content: game.Hash32(i * 7)})
	}
	whole := resp.Append(nil)
	chunks := [][]byte{whole[:400], whole[400:800], whole[800:]}
	frag := func(i int) dissect.Message {
		m := dissect.Message{Type: dissect.TypeData, Reliable: true, Fragment: true, Seq: 2, FragIndex: uint8(i), Payload: chunks[i]}
		if i == 0 {
			m.FragTotal = 3
		}
		return m
	}
	s.send(clientsA[0], srvA, 0x02, frag(1))
	s.send(clientsA[0], srvA, 0x02, frag(0))
	s.send(clientsA[0], srvA, 0x02, frag(1))
	// This 182-byte datagram is IPv4-fragmented on the wire (MTU 100: three
	// fragments).
	s.w.MTU = 100
	s.send(clientsA[0], srvA, 0x02, frag(2), dissect.Message{Type: dissect.TypeAck, Seq: 0, AckFlags: dissect.AckControl})
	s.w.MTU = 0
	s.send(srvA, clientsA[0], 0x01, dissect.Message{Type: dissect.TypeAck, Seq: 2, AckFlags: dissect.AckFragment, AckFragIndex: 0})

	// A truncated record (an Ethernet+IPv4 header cut short), then a game
	// message on server B from its second client.
	s.now = s.now.Add(time.Millisecond)
	if err := s.w.WriteRaw(s.now, []byte{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0x08, 0x00, 0x45, 0x00, 0x00, 0x40}); err != nil {
		t.Fatal(err)
	}
	chat := &game.Chat{Op: game.OpChat, SenderID: 3, Text: "hello from B"}
	s.send(clientsB[1], srvB, 0x03, data(5, chat))

	c := s.decode(Options{})
	// Frame numbers: 2 GameSpy + 1 DNS + 10 connect records = 13; the BC
	// fragments are 14-16, the IPv4 fragments 17-19, the ACK 20, the
	// truncated record 21, the chat 22.
	const truncFrame = 21

	if c.sum.Flow.Servers != 2 {
		t.Errorf("servers found: %d, want 2", c.sum.Flow.Servers)
	}
	if c.sum.Flow.OtherUDP != 1 {
		t.Errorf("other UDP: %d, want 1", c.sum.Flow.OtherUDP)
	}
	if c.sum.Flow.Flows != 5 {
		t.Errorf("flows: %d, want 5", c.sum.Flow.Flows)
	}
	if c.sum.Capture.Reassembled != 1 {
		t.Errorf("IPv4 reassembled: %d, want 1", c.sum.Capture.Reassembled)
	}
	var gotResp, gotChat, gotDup, gotTrunc, gotGameSpy bool
	for _, r := range c.recs {
		switch {
		case r.Kind == KindGameSpy:
			gotGameSpy = true
			if r.Server.String() != srvA {
				t.Errorf("GameSpy server %v", r.Server)
			}
		case r.Kind == KindDamaged:
			gotTrunc = true
			var pe *capture.PacketError
			if r.Frame != truncFrame || !errors.As(r.Err, &pe) {
				t.Errorf("damage at frame %d: %v", r.Frame, r.Err)
			}
		case r.DuplicateFragment:
			gotDup = true
		case r.Game != nil && r.Game.Msg.Opcode() == game.OpChecksumResponse:
			gotResp = true
			if len(r.Warning) > 200 {
				r.Warning = r.Warning[:200]
			}
			if r.Reassembled != 3 || r.Dir != game.ClientToServer || r.Frame != 19 || len(r.Game.Unparsed) != 0 || r.Game.Err != nil {
				t.Errorf("reassembled response: %+v", r)
			}
			if !bytes.Equal(r.Payload, whole) {
				t.Errorf("reassembled response's payload: % X, want the fragments joined, % X", r.Payload, whole)
			}
		case r.Game != nil && r.Game.Msg.Opcode() == game.OpChat:
			gotChat = true
			if r.Server.String() != srvB || r.Dir != game.ClientToServer || r.Peer != 3 {
				t.Errorf("chat on server B: %+v", r)
			}
			if want := chat.Append(nil); !bytes.Equal(r.Payload, want) {
				t.Errorf("chat's payload: % X, want % X", r.Payload, want)
			}
		}
		if r.Kind == KindMessage && r.Msg.Type == dissect.TypeConnectAck && r.Peer == 0x01 && r.Dir != game.ServerToClient {
			t.Errorf("frame %d: server's connect reply oriented %v", r.Frame, r.Dir)
		}
	}
	if !gotResp || !gotChat || !gotDup || !gotTrunc || !gotGameSpy {
		t.Errorf("missing records: response %v chat %v duplicate %v truncated %v gamespy %v", gotResp, gotChat, gotDup, gotTrunc, gotGameSpy)
	}
	if c.sum.Damage != 1 {
		t.Errorf("damage count %d, want 1 (the truncated record)", c.sum.Damage)
	}
}

func TestLostFragmentsAreReportedAtTheEnd(t *testing.T) {
	s := newScene(t)
	m := dissect.Message{Type: dissect.TypeData, Reliable: true, Fragment: true, Seq: 9, FragIndex: 0, FragTotal: 3, Payload: []byte{0x21, 2}}
	s.send("10.0.1.10:50000", "10.0.0.1:22101", 0x02, m)
	c := s.decode(Options{})
	last := c.recs[len(c.recs)-1]
	if last.Kind != KindLost || last.Err == nil || last.Frame != 1 || c.sum.Damage != 1 {
		t.Fatalf("lost fragment set: %+v, damage %d", last, c.sum.Damage)
	}
}

func TestForcedServerAndFramingDamage(t *testing.T) {
	s := newScene(t)
	// A flow on odd ports whose first datagram is damaged: only --server
	// makes it Bridge Commander traffic.
	bad := []byte{0x02, 0x02, 0x01, 0x00, 0x00, 0x00, 0x32, 0xFF, 0x80}
	wire := make([]byte, len(bad))
	dissect.Encrypt(wire, bad)
	s.raw("10.0.1.10:50000", "10.0.0.7:4000", wire)
	c := s.decode(Options{})
	if len(c.recs) != 0 || c.sum.Flow.OtherUDP != 1 {
		t.Fatalf("undetected flow produced %d records", len(c.recs))
	}
	c = s.decode(Options{Servers: []netip.AddrPort{netip.MustParseAddrPort("10.0.0.7:4000")}})
	if len(c.recs) != 2 || c.recs[0].Msg.Type != dissect.TypeAck || c.recs[1].Kind != KindDamaged || c.sum.Damage != 1 {
		t.Fatalf("forced server: %+v", c.recs)
	}
	var de *dissect.Error
	if !errors.As(c.recs[1].Err, &de) || de.Offset != 7 { // the length field of the message at 6
		t.Fatalf("damage offset: %v", c.recs[1].Err)
	}
}
