package root

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
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

// peakRSS runs the binary and returns its peak resident memory in bytes.
//
// It is not started from the test process itself: Go starts children with
// vfork, and Linux then counts the parent's own peak (tens of MiB after the
// corpus tests) into the child's. A copy of this test binary, started with
// rssHelperEnv set, runs the command instead (see init) and reports the
// child's figure, which then only includes the small helper's.
func peakRSS(t *testing.T, bin string, args ...string) int64 {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, append([]string{bin}, args...)...)
	cmd.Env = append(os.Environ(), rssHelperEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out.Bytes())
	}
	var kb int64
	if _, err := fmt.Sscan(out.String(), &kb); err != nil {
		t.Fatalf("helper printed %q", out.String())
	}
	if kb < 0 {
		t.Skip("no rusage on this platform")
	}
	return kb * 1024 // kilobytes on Linux
}

const rssHelperEnv = "BCWIRE_PEAK_RSS_HELPER"

// init turns the test binary into the peakRSS helper when asked: run
// os.Args[1:], print the child's peak RSS in KiB (-1 if unknown), exit.
func init() {
	if os.Getenv(rssHelperEnv) == "" {
		return
	}
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		fmt.Println(-1)
		os.Exit(0)
	}
	fmt.Println(ru.Maxrss)
	os.Exit(0)
}

// stats streams: its memory follows live sessions, not capture length.
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
	// before the heap reaches its steady size (a few MiB, now that the
	// binary's own footprint is small), and that start-up difference is
	// not growth with capture length.
	one := filepath.Join(corpusDir, "battle.pcap")
	ten := filepath.Join(dir, "battle10.pcap")
	fifty := filepath.Join(dir, "battle50.pcap")
	repeatCapture(t, one, ten, 10)
	repeatCapture(t, one, fifty, 50)
	base := peakRSS(t, bin, "stats", ten)
	big := peakRSS(t, bin, "stats", fifty)
	t.Logf("stats peak RSS: battle x10 %.1f MiB, battle x50 %.1f MiB", float64(base)/(1<<20), float64(big)/(1<<20))
	if big > base+6<<20 {
		t.Fatalf("peak memory grew from %.1f MiB to %.1f MiB on a 5x longer capture", float64(base)/(1<<20), float64(big)/(1<<20))
	}
	// At most 26 MiB for stats on any capture size, with one worker or
	// several (about 23 and 24 MiB now; the binary that linked Parquet and
	// Prometheus too needed 7 MiB more, see full.go).
	par := peakRSS(t, bin, "stats", "--workers", "2", fifty)
	t.Logf("stats --workers 2 peak RSS: battle x50 %.1f MiB", float64(par)/(1<<20))
	for _, v := range []int64{big, par} {
		if v > 26<<20 {
			t.Errorf("peak RSS %.1f MiB exceeds 26 MiB", float64(v)/(1<<20))
		}
	}
}
