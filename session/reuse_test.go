package session

import (
	"encoding/json"
	"path/filepath"
	"runtime"
	"testing"
	"time"
)

// A Builder that builds later sessions in the memory of those given back
// by Reuse, and in the live state of closed ones (retire), makes the same
// sessions, byte for byte, as one that allocates each anew: on OpenBC's battle played three times in a row (a session
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
				defer func() {
					if reuse && len(b.freeLive) == 0 {
						t.Error("no live state was kept for a later session")
					}
				}()
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
				if !reuse {
					b.maxFreeLive = 0 // every live state new, too
				}
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

// A long capture of short sessions leaves the collector next to nothing
// per session once Builder.Reuse gives the sessions back: their live state
// (Builder.retire), their lists' arrays and their times (Session.reset)
// serve the next ones. OpenBC's networked battle played again and again,
// each copy after the last: its clients reconnect, so every copy is new
// sessions: 8.8 KB of garbage each when each live state was made anew,
// 2.4 KB when their lists and times were, 0.4 KB now (mostly event
// texts).
func TestReuseGarbagePerSession(t *testing.T) {
	br := loadRecords(t, filepath.Join("..", "testdata", "openbc", "networked-battle.pcap"))
	emitted := 0
	var b *Builder
	b = NewBuilder(Options{}, func(s *Session) { emitted++; b.Reuse(s) })
	period := br.span + 5*time.Second
	orig := make([]time.Time, len(br.recs))
	for i := range br.recs {
		orig[i] = br.recs[i].Time
	}
	play := func(pass int) {
		for i := range br.recs {
			br.recs[i].Time = orig[i].Add(time.Duration(pass) * period)
			b.Add(&br.recs[i])
		}
	}
	// The first copies fill the spares (streams' arrays, sessions, live
	// states); then count.
	for pass := range 4 {
		play(pass)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	from := emitted
	for pass := 4; pass < 24; pass++ {
		play(pass)
	}
	runtime.ReadMemStats(&after)
	sessions := emitted - from
	if sessions < 20 {
		t.Fatalf("%d sessions in 20 copies", sessions)
	}
	perSession := float64(after.TotalAlloc-before.TotalAlloc) / float64(sessions)
	t.Logf("%d sessions, %.0f bytes allocated per session", sessions, perSession)
	if perSession > 1024 {
		t.Errorf("%.0f bytes allocated per session, want at most 1024", perSession)
	}
}

// Live states are kept only once nothing points to them: with room for
// fewer sessions than the battle has players, sessions are evicted (and
// their live state kept) while the server still relays their messages,
// whose entries in its relay memory must no longer name them
// (Relays.forget). The sessions come out as with new live states. (The
// battle's first 1,500 records: some 430 evictions.)
func TestRetireSameSessionsEvicting(t *testing.T) {
	br := loadBattleRecords(t)
	run := func(keep int) []byte {
		var out []byte
		b := NewBuilder(Options{MaxSessions: 2}, func(s *Session) {
			j, err := json.Marshal(struct {
				S *Session
				T *Counts
			}{s, &s.Traffic})
			if err != nil {
				t.Fatal(err)
			}
			out = append(append(out, j...), '\n')
		})
		b.maxFreeLive = keep
		for i := range br.recs[:1500] {
			b.Add(&br.recs[i])
		}
		if b.Evicted() == 0 {
			t.Fatal("no session was evicted")
		}
		b.Finish()
		return out
	}
	want, got := run(0), run(defaultFreeLive)
	if string(got) != string(want) {
		t.Fatalf("with live states kept:\n%s\nwant\n%s", got, want)
	}
}
