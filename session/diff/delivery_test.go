package diff

import (
	"testing"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/session"
)

// diff follows reliable delivery with the session package's engine, so it
// counts each reliable message, and each ACK, as stats does: on every
// bundled capture with loss and retransmissions, every session's figures
// agree with the session package's own (issue 21 point 3).
func TestDeliveryAgreesWithStats(t *testing.T) {
	for _, name := range []string{"lossy.pcap", "battle.pcap", "join.pcap"} {
		c := readBundled(t, name)
		compared := 0
		for _, s := range c.Sessions {
			if s.Info == nil {
				continue
			}
			compared++
			for d, chans := range []session.Channels{s.Info.Reliability.ClientToServer, s.Info.Reliability.ServerToClient} {
				for ch, want := range map[dissect.Channel]session.ChannelStats{dissect.ChannelData: chans.Data, dissect.ChannelControl: chans.Control} {
					got := s.delivery[d].Sequence(ch)
					if got.Reliable != want.Reliable || got.Acked != want.Acked || got.Gaps != want.Gaps || got.Missing != want.Missing {
						t.Errorf("%s %s %s %s: diff %+v, stats %+v", name, s.Client, session.Dirs[d], ch, got, want)
					}
				}
			}
		}
		if compared == 0 {
			t.Errorf("%s: no session compared", name)
		}
	}
}
