package root

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect/capture"
)

// repeatCapture writes src n times over, each copy shifted in time after the
// previous one, as `mergecap -a` of n copies would.
func repeatCapture(t *testing.T, src, dst string, n int) {
	t.Helper()
	out, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	bw := bufio.NewWriterSize(out, 1<<20)
	w, err := capture.NewWriter(bw, capture.PCAP, capture.Ethernet)
	if err != nil {
		t.Fatal(err)
	}
	var shift time.Duration
	for i := 0; i < n; i++ {
		rd, err := capture.Open(src)
		if err != nil {
			t.Fatal(err)
		}
		var first, last time.Time
		for {
			p, err := rd.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if first.IsZero() {
				first = p.Time
			}
			last = p.Time
			if err := w.WriteUDP(p.Time.Add(shift), p.Src, p.Dst, p.Payload); err != nil {
				t.Fatal(err)
			}
		}
		rd.Close()
		shift += last.Sub(first) + 5*time.Second
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
}

// gcTrace holds what the Go runtime reported about one run's heap: the
// live heap each collection marked (GODEBUG=gctrace=1, the "A->B->C MB"
// field's C) and the process's peak RSS, kept for the log only.
type gcTrace struct {
	cycles      int
	peakLiveMiB int   // largest heap marked live by any collection
	peakRSS     int64 // bytes; informative, not asserted (it depends on load)
}

// gcLine matches a gctrace line's heap sizes: "..., 4->5->2 MB, 8 MB goal".
var gcLine = regexp.MustCompile(`(\d+)->(\d+)->(\d+) MB, \d+ MB goal`)

// liveHeap runs the binary with the runtime tracing every collection and
// returns the largest live heap any collection marked.
//
// This is what "memory does not grow with the capture" means, and unlike
// peak RSS it does not depend on how busy the machine is: on a loaded
// machine the collector runs late, the heap overshoots its goal and the
// RSS with it, but what each collection finds reachable is the program's
// own. Every cycle is reported, so no peak is missed between samples.
// The figures are whole MiB, rounded down, as gctrace prints them.
func liveHeap(t *testing.T, bin string, args ...string) gcTrace {
	t.Helper()
	cmd := exec.Command(bin, args...)
	// GOGC=10: a collection every 10% of heap growth, so the live figure is
	// sampled often (about 100 times on battle x50) and what a collection
	// counts as live beyond the truly reachable heap (objects allocated
	// while it marks) is at most about a tenth of it, however slowly the
	// collector runs on a busy machine: the allocating goroutine itself
	// is made to help mark.
	cmd.Env = append(os.Environ(), "GODEBUG=gctrace=1", "GOGC=10")
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, tail(stderr.String(), 2000))
	}
	var tr gcTrace
	for _, m := range gcLine.FindAllStringSubmatch(stderr.String(), -1) {
		live, err := strconv.Atoi(m[3])
		if err != nil {
			t.Fatal(err)
		}
		tr.cycles++
		tr.peakLiveMiB = max(tr.peakLiveMiB, live)
	}
	if tr.cycles == 0 {
		t.Fatalf("%v: no gctrace lines on stderr:\n%s", args, tail(stderr.String(), 2000))
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
		tr.peakRSS = ru.Maxrss * 1024 // kilobytes on Linux
	}
	return tr
}

func tail(s string, n int) string {
	if len(s) > n {
		return "..." + s[len(s)-n:]
	}
	return s
}

// stats streams: its memory follows live sessions, not capture length.
//
// Asserted on the live heap the collector marks (see liveHeap), with
// margins stated below; peak RSS is only logged, as a benchmark figure
// (README, Performance), because it moves with machine load.
func TestStatsMemoryIsFlat(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary and a 48 MB capture")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bcwire")
	build := exec.Command("go", "build", "-o", bin, "github.com/bcwire/bcwire/cmd/bcwire")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// Compared with a 10x capture, not the 1x one: one battle is over
	// before the heap reaches its steady size, and that start-up
	// difference is not growth with capture length.
	one := filepath.Join(corpusDir, "battle.pcap")
	ten := filepath.Join(dir, "battle10.pcap")
	fifty := filepath.Join(dir, "battle50.pcap")
	repeatCapture(t, one, ten, 10)
	repeatCapture(t, one, fifty, 50)
	base := liveHeap(t, bin, "stats", ten)
	big := liveHeap(t, bin, "stats", fifty)
	par := liveHeap(t, bin, "stats", "--workers", "2", fifty)
	for _, r := range []struct {
		name string
		tr   gcTrace
	}{{"battle x10", base}, {"battle x50", big}, {"battle x50 --workers 2", par}} {
		t.Logf("stats %s: peak live heap %d MiB over %d collections (peak RSS %.1f MiB, not asserted)",
			r.name, r.tr.peakLiveMiB, r.tr.cycles, float64(r.tr.peakRSS)/(1<<20))
	}
	// Flat: five times the capture may not add more than 2 MiB of live
	// heap (measured: 3 and 4 MiB on 2026-11-26, the same beside two
	// busy loops; the margin covers gctrace's rounding to whole MiB and
	// the tenth a collection may count beyond the reachable heap). Growth with length, the bug this guards
	// against, would add its per-battle amount 40 times over.
	if big.peakLiveMiB > base.peakLiveMiB+2 {
		t.Errorf("peak live heap grew from %d MiB to %d MiB on a 5x longer capture", base.peakLiveMiB, big.peakLiveMiB)
	}
	// The budget was 32 MiB of RSS; the live heap that RSS holds
	// is at most half of it with the default GOGC=100, so 16 MiB of live
	// heap, with one worker or several.
	for _, tr := range []gcTrace{big, par} {
		if tr.peakLiveMiB > 16 {
			t.Errorf("peak live heap %d MiB exceeds 16 MiB", tr.peakLiveMiB)
		}
	}
}
