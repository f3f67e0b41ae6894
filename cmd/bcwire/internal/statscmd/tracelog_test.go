package statscmd

import (
	"encoding/json"
	"path/filepath"
	"testing"
)

// statsCounts runs stats --json on file and returns what it counted per
// session (its client, name and end), per direction and opcode or
// transport type: everything but the times, which a packet_trace.log
// holds to the millisecond only.
func statsCounts(t *testing.T, file string, servers ...string) []string {
	t.Helper()
	out, errs, code := run(t, &Options{Files: []string{file}, JSON: true, Quiet: true, Servers: servers}, false)
	if code != 0 {
		t.Fatalf("%s: exit %d: %s", file, code, errs)
	}
	var doc struct {
		Sessions []struct {
			Client    string
			Name      string
			EndReason string `json:"end_reason"`
			Opcodes   []struct {
				Dir           string
				Opcode, Count int
				Bytes         int
			}
			Transport []struct {
				Dir         string
				Type, Count int
				Bytes       int
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatal(err)
	}
	var counts []string
	for _, s := range doc.Sessions {
		b, _ := json.Marshal(s)
		counts = append(counts, string(b))
	}
	if len(counts) == 0 || len(doc.Sessions[0].Opcodes) == 0 || doc.Sessions[0].Opcodes[0].Count == 0 {
		t.Fatalf("%s: no sessions", file)
	}
	return counts
}

// A packet_trace.log written (by STBC-Dedicated-Server's own logger; see
// dissect/capture/testdata/tracelog/STEPS.txt) from a capture gives the
// same stats --json counts as the capture, once --server names the
// logging server; in the logger's older form and compressed too.
func TestStatsPacketTraceLogAsItsCapture(t *testing.T) {
	logs := filepath.Join("..", "..", "..", "..", "dissect", "capture", "testdata", "tracelog")
	pcaps := filepath.Join("..", "..", "..", "..", "testdata", "pcaps")
	for _, c := range [][2]string{
		{"join.packet_trace.log", "join.pcap"},
		{"join-old.packet_trace.log.gz", "join.pcap"},
		{"duel.packet_trace.log.zst", "duel.pcapng"},
	} {
		t.Run(c[0], func(t *testing.T) {
			want := statsCounts(t, filepath.Join(pcaps, c[1]))
			got := statsCounts(t, filepath.Join(logs, c[0]), "10.0.0.1:22101")
			if len(got) != len(want) {
				t.Fatalf("%d sessions, want %d", len(got), len(want))
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("session %d:\n got %s\nwant %s", i, got[i], want[i])
				}
			}
		})
	}
}
