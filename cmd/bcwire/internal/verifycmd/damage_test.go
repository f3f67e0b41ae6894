package verifycmd_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
)

// Issue 23, point 3: a replay of a damaged capture names the damage at
// the start and in both JSON reports, and exits 1, though every datagram
// that could be read was answered identically.
func TestReplayOfDamagedCaptureSaysSo(t *testing.T) {
	cut := filepath.Join(t.TempDir(), "battle-cut.pcap")
	b, err := os.ReadFile(corpus + "battle.pcap")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cut, b[:60000], 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		file    string
		summary string // the line printed at the start
	}{
		// damaged.pcap: a truncated packet, a garbage datagram, a bad length.
		{corpus + "damaged.pcap", "DAMAGED capture: 3 damaged records (1 unreadable capture records, 2 datagrams or messages that do not parse)"},
		{cut, "DAMAGED capture: 1 damaged records (1 unreadable capture records, 0 datagrams or messages that do not parse)"},
	} {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			// The damaged frames, as `stats` lists them.
			_, serrs, scode := run(t, "stats", tc.file)
			var frames []int
			for _, m := range regexp.MustCompile(`: (?:capture record: )?frame (\d+) `).FindAllStringSubmatch(serrs, -1) {
				n, _ := strconv.Atoi(m[1])
				frames = append(frames, n)
			}
			if scode != 1 || len(frames) == 0 {
				t.Fatalf("stats: exit %d, frames %v\n%s", scode, frames, serrs)
			}
			serveJSON := filepath.Join(t.TempDir(), "serve.json")
			addr, stop, exited := replayServer(t, tc.file, "--exit-when-done", "-o", serveJSON)
			verifyJSON := filepath.Join(t.TempDir(), "verify.json")
			out, errs, code := run(t, "verify", "--target", addr, "--timing", "asap", "--answer-timeout", "10s", "-o", verifyJSON, tc.file)
			if code != 1 || !strings.Contains(out, "0 different, 0 missing, 0 unexpected: all identical") {
				t.Errorf("verify: exit %d, want 1 (the datagrams identical, the capture damaged)\n%s\n%s", code, out, errs)
			}
			if !strings.Contains(errs, tc.summary) {
				t.Errorf("verify's stderr lacks %q:\n%s", tc.summary, errs)
			}
			if !exited(30 * time.Second) {
				t.Fatal("serve --exit-when-done did not end")
			}
			sout, serrs, scode := stop()
			if scode != exit.CodeDamaged {
				t.Errorf("serve --replay: exit %d, want 1\n%s\n%s", scode, sout, serrs)
			}
			if !strings.Contains(serrs, tc.summary) {
				t.Errorf("serve's stderr lacks %q:\n%s", tc.summary, serrs)
			}
			for _, path := range []string{serveJSON, verifyJSON} {
				var rep struct {
					Damage *struct {
						Records int `json:"records"`
						First   []struct {
							Frame int `json:"frame"`
						} `json:"first"`
					} `json:"capture_damage"`
				}
				var got []int
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				if err := json.Unmarshal(b, &rep); err != nil {
					t.Fatal(err)
				}
				if rep.Damage != nil {
					for _, d := range rep.Damage.First {
						got = append(got, d.Frame)
					}
				}
				if rep.Damage == nil || rep.Damage.Records != len(frames) || fmt.Sprint(got) != fmt.Sprint(frames) {
					t.Errorf("%s: capture_damage %+v, want the frames stats lists: %v", filepath.Base(path), rep.Damage, frames)
				}
			}
		})
	}
}

// A clean capture has no capture_damage and exits 0 (the field is omitted).
func TestCleanCaptureHasNoDamage(t *testing.T) {
	addr, _, _ := replayServer(t, corpus+"join.pcap", "--exit-when-done")
	out, errs, code := run(t, "verify", "--target", addr, "--timing", "asap", "--answer-timeout", "10s", "--json", corpus+"join.pcap")
	if code != 0 || strings.Contains(out, "capture_damage") || strings.Contains(errs, "DAMAGED") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errs)
	}
}

// serve --replay --exit-when-done with no client gives up after
// --wait-limit, exit 1.
func TestReplayWaitLimit(t *testing.T) {
	start := time.Now()
	_, stop, exited := replayServer(t, corpus+"join.pcap", "--exit-when-done", "--wait-limit", "300ms")
	if !exited(30 * time.Second) {
		t.Fatal("serve --exit-when-done with no client did not end within 30s of a 300ms wait limit")
	}
	if d := time.Since(start); d < 300*time.Millisecond {
		t.Errorf("ended after %v, before the wait limit", d)
	}
	out, errs, code := stop()
	if code != exit.CodeDamaged || !regexp.MustCompile(`(?m)^bcwire: .*--wait-limit`).MatchString(errs) {
		t.Errorf("exit %d, want 1 with an error naming --wait-limit\n%s\n%s", code, out, errs)
	}
}
