package diff

import (
	"testing"

	"github.com/bcwire/bcwire/dissect/capture"
)

// diff matches relayed copies with the session package's rule
// (session.Relays), so its relay figures are stats/timeline's: per session,
// the messages relayed at least once, the copies sent to other clients and
// the copies received (issue 21 point 3). diff counts them in the rate
// window only; in these captures every relay falls inside it.
func TestRelayAgreesWithStats(t *testing.T) {
	for _, name := range []string{"battle.pcap", "lossy.pcap", "duel.pcapng"} {
		c := readBundled(t, name)
		compared, copies := 0, 0
		for _, s := range c.Sessions {
			if s.Info == nil {
				continue
			}
			compared++
			var relayed, sent, received int
			for op := range s.Relay {
				relayed += s.Relay[op].Relayed
				sent += s.Relay[op].Copies
				received += s.Relayed[op]
			}
			copies += sent
			want := s.Info.Relay
			if relayed != want.Messages || sent != want.Copies || received != want.Received {
				t.Errorf("%s %s: diff relayed %d, copies %d, received %d; stats %d, %d, %d",
					name, s.Client, relayed, sent, received, want.Messages, want.Copies, want.Received)
			}
		}
		if compared < 2 || copies == 0 {
			t.Errorf("%s: %d sessions compared, %d copies: nothing to compare", name, compared, copies)
		}
	}
}

// readBundled builds the Capture of testdata/pcaps/name with the default
// rules.
func readBundled(t *testing.T, name string) *Capture {
	t.Helper()
	rd, err := capture.Open("../../testdata/pcaps/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	r := DefaultRules()
	c, err := Read(name, rd, nil, &r)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
