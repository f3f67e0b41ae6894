package session

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"
)

// A Builder that builds later sessions in the memory of those given back
// by Reuse makes the same sessions, byte for byte, as one that allocates
// each anew: on OpenBC's battle played three times in a row (a session
// ends at each reconnect, so the later copies' sessions are built in the
// earlier ones' memory) and on the generated battle.
func TestReuseSameSessions(t *testing.T) {
	for _, path := range []string{
		filepath.Join("..", "testdata", "openbc", "networked-battle.pcap"),
		filepath.Join("..", "testdata", "pcaps", "battle.pcap"),
	} {
		t.Run(filepath.Base(path), func(t *testing.T) {
			br := loadRecords(t, path)
			run := func(reuse bool) (out []byte, reused int) {
				seen := map[*Session]bool{}
				var b *Builder
				b = NewBuilder(Options{}, func(s *Session) {
					if seen[s] {
						reused++
					}
					seen[s] = true
					j, err := json.Marshal(struct {
						S *Session
						T *Counts
					}{s, &s.Traffic})
					if err != nil {
						t.Fatal(err)
					}
					out = append(append(out, j...), '\n')
					if reuse {
						b.Reuse(s)
					}
				})
				period := br.span + 5*time.Second
				for pass := range 3 {
					for i := range br.recs {
						r := br.recs[i]
						r.Time = r.Time.Add(time.Duration(pass) * period)
						b.Add(&r)
					}
				}
				b.Finish()
				return append(out, sessionsJSON(t, nil, b.Totals())...), reused
			}
			want, _ := run(false)
			got, reused := run(true)
			if reused == 0 {
				t.Fatal("no session was built in the memory of an earlier one")
			}
			if string(got) != string(want) {
				t.Fatalf("with Reuse (%d sessions reused):\n%s\nwant\n%s", reused, got, want)
			}
		})
	}
}
