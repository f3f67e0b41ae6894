package replay

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
)

func TestAdaptiveAgainstReplayEveryCapture(t *testing.T) {
	checkGoroutines(t)
	for _, name := range []string{"join.pcap", "battle.pcap", "lossy.pcap", "duel.pcapng", "sll.pcap", "damaged.pcap"} {
		t.Run(name, func(t *testing.T) {
			c := load(t, name)
			s := serve(t, c, ServerOptions{Timing: TimingASAP}, nil)
			res, err := verifyAgainst(t, c, addrOf(s.pc), VerifyOptions{Timing: TimingASAP, Mode: ModeAdaptive})
			if err != nil {
				t.Fatal(err)
			}
			waitFor(t, settle, s.srv.AllDone)
			if err := s.stop(); err != nil {
				t.Fatal(err)
			}
			if !res.Summary.OK || res.Summary.SessionsOK != len(c.Sessions) || res.Summary.Identical == 0 {
				t.Fatalf("summary %+v\n%s", res.Summary, describeFirst(res))
			}
			// Against a server that behaves as captured, the adaptive client
			// sends exactly the captured datagrams, and more only where the
			// captured client's ACK was lost before the capture point (a
			// lossy link): adaptive mode ACKs a reliable message the
			// captured client never acknowledged, which the replay server
			// then logs as one mismatch.
			extra := 0
			if name == "lossy.pcap" {
				extra = 2
			}
			for _, st := range s.srv.Report() {
				if st.Matched != st.Expected || st.Mismatched > extra || !st.Done {
					t.Errorf("server side %+v\n%s", st, s.log)
				}
			}
		})
	}
}

// rebundler sends every message of a datagram in a datagram of its own: a
// server that bundles differently from the stock one.
type rebundler struct {
	net.PacketConn
}

func (r *rebundler) WriteTo(b []byte, addr net.Addr) (int, error) {
	if dissect.IsGameSpy(b) {
		return r.PacketConn.WriteTo(b, addr)
	}
	plain := make([]byte, len(b))
	dissect.Decrypt(plain, b)
	var d dissect.Datagram
	if err := d.Parse(plain); err != nil || len(d.Messages) < 2 {
		return r.PacketConn.WriteTo(b, addr)
	}
	for i := range d.Messages {
		one := dissect.Datagram{Peer: d.Peer, Messages: d.Messages[i : i+1]}
		p := one.Append(nil)
		dissect.Encrypt(p, p)
		if _, err := r.PacketConn.WriteTo(p, addr); err != nil {
			return 0, err
		}
	}
	return len(b), nil
}

func TestAdaptiveToleratesDifferentBundling(t *testing.T) {
	checkGoroutines(t)
	c := load(t, "duel.pcapng")
	wrap := func(pc net.PacketConn) net.PacketConn { return &rebundler{pc} }

	// Exact mode sees different datagrams.
	s := serve(t, c, ServerOptions{Timing: TimingASAP}, wrap)
	exact, err := verifyAgainst(t, c, addrOf(s.pc), VerifyOptions{Timing: TimingASAP, AnswerTimeout: 150 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.stop()
	if exact.Summary.OK {
		t.Fatal("exact mode did not notice the different bundling")
	}
	if f := exact.Sessions[0].First; f == nil || !strings.Contains(f.Detail, "transport messages, captured") {
		t.Errorf("exact first divergence %+v", f)
	}

	// Adaptive mode compares message by message: nothing differs.
	s2 := serve(t, c, ServerOptions{Timing: TimingASAP}, wrap)
	res, err := verifyAgainst(t, c, addrOf(s2.pc), VerifyOptions{Timing: TimingASAP, Mode: ModeAdaptive})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, settle, s2.srv.AllDone)
	if err := s2.stop(); err != nil {
		t.Fatal(err)
	}
	if !res.Summary.OK || res.Summary.SessionsOK != len(c.Sessions) {
		t.Fatalf("adaptive against a re-bundling server: %+v\n%s", res.Summary, describeFirst(res))
	}
	for _, sr := range res.Sessions {
		if !sr.Joined || sr.Identical == 0 {
			t.Errorf("session %d: joined %v, %d identical", sr.Session, sr.Joined, sr.Identical)
		}
	}
}

func TestAdaptiveNoticesMissingMessage(t *testing.T) {
	checkGoroutines(t)
	c := load(t, "join.pcap")
	var target *Datagram
	for i := range c.Sessions[0].Steps {
		d := &c.Sessions[0].Steps[i]
		if !d.IsClient() && !d.GameSpy && strings.Contains(strings.Join(Describe(d.Plain, game.ServerToClient), "\n"), "ChecksumRequest round=3") {
			target = d
			break
		}
	}
	if target == nil {
		t.Fatal("join.pcap has no checksum round 3 request")
	}
	var dw *dropWriter
	s := serve(t, c, ServerOptions{Timing: TimingASAP}, func(pc net.PacketConn) net.PacketConn {
		dw = &dropWriter{PacketConn: pc, drop: func(b []byte) bool { return string(b) == string(target.Wire) }}
		return dw
	})
	res, err := verifyAgainst(t, c, addrOf(s.pc), VerifyOptions{Timing: TimingASAP, Mode: ModeAdaptive, AnswerTimeout: 150 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	_ = s.stop()
	sr := res.Sessions[0]
	if sr.Missing == 0 || sr.First == nil || sr.First.Frame != target.Frame || sr.First.Status != StatusMissing ||
		!strings.Contains(strings.Join(sr.First.Expected, " "), "ChecksumRequest round=3") {
		t.Fatalf("counts %+v first %+v", sr.Counts, sr.First)
	}
	// The ACK of the lost request was held back, not sent for nothing.
	held := false
	for _, st := range sr.Steps {
		if st.Dir == "C->S" && strings.Contains(st.Detail, "held back") {
			held = true
		}
	}
	if !held {
		t.Error("no captured ACK was held back for the message that never came")
	}
}
