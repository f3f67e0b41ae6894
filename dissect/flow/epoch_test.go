package flow

import (
	"net/netip"
	"testing"

	"github.com/bcwire/bcwire/dissect/capture"
)

// Record.Epoch stands for the pair of a record's flow: a non-zero Epoch
// belongs to one Server and Client only, in one Tracker and across
// Trackers (a consumer fed one file after another compares Epochs too).
func TestEpochNamesOnePairAcrossTrackers(t *testing.T) {
	type pair struct{ server, client netip.AddrPort }
	owner := map[uint32]pair{} // epoch -> its pair, over both runs
	for run := range 2 {
		rd, err := capture.Open("../../testdata/pcaps/battle.pcap")
		if err != nil {
			t.Fatal(err)
		}
		mine := map[uint32]bool{}
		messages := 0
		_, err = Run(rd, New(Options{}), func(r *Record) bool {
			if r.Kind != KindMessage {
				return true
			}
			messages++
			if r.Epoch == 0 {
				t.Fatalf("run %d: frame %d: a message record with Epoch 0", run, r.Frame)
			}
			p := pair{r.Server, r.Client}
			if o, ok := owner[r.Epoch]; ok && o != p {
				t.Fatalf("run %d: frame %d: Epoch %d on %v and on %v", run, r.Frame, r.Epoch, o, p)
			}
			if _, seen := owner[r.Epoch]; seen && !mine[r.Epoch] {
				t.Fatalf("run %d: frame %d: Epoch %d was handed out by the other Tracker", run, r.Frame, r.Epoch)
			}
			owner[r.Epoch], mine[r.Epoch] = p, true
			return true
		})
		rd.Close()
		if err != nil {
			t.Fatal(err)
		}
		if messages == 0 || len(mine) < 2 {
			t.Fatalf("run %d: %d messages on %d epochs; want several flows", run, messages, len(mine))
		}
	}
}
