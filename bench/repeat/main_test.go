package main

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/session"
)

var pcaps = filepath.Join("..", "..", "testdata", "pcaps")

// result is what the pipeline made of a capture: the flow counts, the
// fragments taken for retransmissions, the sessions and the total traffic.
type result struct {
	flow       flow.Stats
	duplicates int
	sessions   []*session.Session
	totals     session.Counts
}

func pipeline(t *testing.T, path string) result {
	t.Helper()
	rd, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var res result
	bl := session.NewBuilder(session.Options{}, func(s *session.Session) { res.sessions = append(res.sessions, s) })
	sum, err := flow.Run(rd, flow.New(flow.Options{}), func(r *flow.Record) bool {
		if r.DuplicateFragment {
			res.duplicates++
		}
		bl.Add(r)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if !sum.Clean() {
		t.Errorf("%s: %d damaged records", path, sum.Damage)
	}
	bl.Finish()
	res.flow, res.totals = sum.Flow, *bl.Totals()
	return res
}

func repeat(t *testing.T, src string, o options) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "repeat.pcap")
	if err := run(src, dst, o); err != nil {
		t.Fatal(err)
	}
	return dst
}

// The same client joining twice from the same address and port is two
// whole sessions, whether the first ended with a disconnect, timed out
// before the second connect, or simply stopped (no disconnect) and is
// still open when the second connect comes: nothing of the second is
// taken for a retransmission of the first (issue 16 point 1: its
// fragmented checksum answer was dropped as a duplicate).
func TestReconnectFromSameAddress(t *testing.T) {
	join := filepath.Join(pcaps, "join.pcap")
	one := pipeline(t, join)
	if one.flow.Reassembled == 0 {
		t.Fatal("join.pcap has no fragmented message: the test would not test reassembly")
	}
	for _, tc := range []struct {
		name string
		o    options
		end  session.EndReason // of the first session
	}{
		{"disconnect, 5s gap", options{n: 2, gap: 5 * time.Second}, session.EndDisconnect},
		{"disconnect, 60s gap", options{n: 2, gap: time.Minute}, session.EndDisconnect},
		{"disconnect, 10m gap", options{n: 2, gap: 10 * time.Minute}, session.EndDisconnect},
		{"no disconnect, 5s gap", options{n: 2, gap: 5 * time.Second, dropDisconnects: true}, session.EndReconnect},
		{"no disconnect, 60s gap", options{n: 2, gap: time.Minute, dropDisconnects: true}, session.EndTimeout},
	} {
		t.Run(tc.name, func(t *testing.T) {
			two := pipeline(t, repeat(t, join, tc.o))
			if two.duplicates != 0 || two.flow.DuplicateFrags != 0 {
				t.Errorf("%d fragments taken for retransmissions (%d counted)", two.duplicates, two.flow.DuplicateFrags)
			}
			if got, want := two.flow.GameMessages, 2*one.flow.GameMessages; got != want {
				t.Errorf("%d game messages, want %d", got, want)
			}
			if got, want := two.flow.Reassembled, 2*one.flow.Reassembled; got != want {
				t.Errorf("%d fragmented messages reassembled, want %d", got, want)
			}
			checkCounts(t, &one.totals, &two.totals, 2, !tc.o.dropDisconnects)
			if len(two.sessions) != 2 {
				t.Fatalf("%d sessions, want 2", len(two.sessions))
			}
			if got := two.sessions[0].EndReason; got != tc.end {
				t.Errorf("first session ended by %q, want %q", got, tc.end)
			}
			want := one.sessions[0]
			for i, s := range two.sessions {
				if s.MidCapture || s.Phases.Connect == nil || s.Phases.ChecksumDone == nil {
					t.Errorf("session %d: mid-capture %v, connect %v, checksums done %v", i, s.MidCapture, s.Phases.Connect, s.Phases.ChecksumDone)
				}
				if len(s.Checksums) != len(want.Checksums) {
					t.Errorf("session %d: %d checksum rounds, want %d", i, len(s.Checksums), len(want.Checksums))
				}
				for _, c := range s.Checksums {
					if c.Request == nil || c.Response == nil {
						t.Errorf("session %d: checksum round %v requested %v, answered %v", i, c.Round, c.Request, c.Response)
					}
				}
				if s.Reliability != want.Reliability && !tc.o.dropDisconnects {
					t.Errorf("session %d: reliability %+v, want %+v", i, s.Reliability, want.Reliability)
				}
			}
		})
	}
}

// Battle repeated: every per-opcode and per-transport-type count is the
// copies times battle's (issue 16 point 1: on battle x100, 1,604 client
// ChecksumResponses were counted of 2,000). x100 is bench/compare.sh's
// file; it takes under a second.
func TestRepeatedBattleCounts(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 97 MB capture")
	}
	battle := filepath.Join(pcaps, "battle.pcap")
	one := pipeline(t, battle)
	const n = 100
	many := pipeline(t, repeat(t, battle, options{n: n, gap: 5 * time.Second}))
	checkCounts(t, &one.totals, &many.totals, n, true)
	if many.duplicates != n*one.duplicates {
		t.Errorf("%d fragments taken for retransmissions, want %d", many.duplicates, n*one.duplicates)
	}
	if len(many.sessions) != n*len(one.sessions) {
		t.Errorf("%d sessions, want %d", len(many.sessions), n*len(one.sessions))
	}
}

// checkCounts compares every opcode count of many, and with transport every
// transport-type count, with n times one's.
func checkCounts(t *testing.T, one, many *session.Counts, n int, transport bool) {
	t.Helper()
	for d := range 2 {
		for i := range 256 {
			if got, want := many.Opcodes[d][i], one.Opcodes[d][i]; got.Count != n*want.Count || got.Bytes != n*want.Bytes {
				t.Errorf("%s opcode %#02x: %+v, want %d x %+v", session.Dirs[d], i, got, n, want)
			}
			if got, want := many.Transport[d][i], one.Transport[d][i]; transport && (got.Count != n*want.Count || got.Bytes != n*want.Bytes) {
				t.Errorf("%s transport type %#02x: %+v, want %d x %+v", session.Dirs[d], i, got, n, want)
			}
		}
	}
}
