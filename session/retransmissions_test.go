package session_test

import (
	"testing"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/session"
)

// Builder.Retransmissions, the running count live shows, is the sum of the
// sessions' own counts: one place counts retransmissions.
func TestBuilderRetransmissionsAddUp(t *testing.T) {
	rd, err := capture.Open("../testdata/pcaps/lossy.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	sum := 0
	bl := session.NewBuilder(session.Options{}, func(s *session.Session) {
		for _, c := range []session.Channels{s.Reliability.ClientToServer, s.Reliability.ServerToClient} {
			sum += c.Total().Retransmissions
		}
	})
	running := 0
	if _, err := flow.Run(rd, flow.New(flow.Options{}), func(r *flow.Record) bool {
		bl.Add(r)
		if n := bl.Retransmissions(); n < running {
			t.Fatalf("frame %d: the count went back from %d to %d", r.Frame, running, n)
		} else {
			running = n
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	bl.Finish()
	if sum == 0 || bl.Retransmissions() != sum {
		t.Errorf("Retransmissions %d, sessions' sum %d (lossy.pcap has some)", bl.Retransmissions(), sum)
	}
}
