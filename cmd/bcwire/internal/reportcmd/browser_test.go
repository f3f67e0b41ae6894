package reportcmd

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
)

// chromiumPath is where Debian's chromium package puts the browser; one on
// $PATH does as well.
var chromiumPath = "/usr/bin/chromium"

func init() {
	if p, err := exec.LookPath("chromium"); err == nil {
		chromiumPath = p
	}
}

// chromium runs headless Chromium on page with extra flags and returns its
// stdout and stderr.
func chromium(t *testing.T, page string, flags ...string) (stdout, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir(), "--window-size=1400,2400"}, flags...)
	args = append(args, "file://"+page)
	cmd := exec.CommandContext(ctx, chromiumPath, args...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(flags, " "), err, errb.String())
	}
	return out.String(), errb.String()
}

// TestReportInBrowser renders a report of a small generated battle in
// headless Chromium: the charts must survive parsing, nothing may log a
// console error, and the screenshot must show a real page.
func TestReportInBrowser(t *testing.T) {
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			// .ci/run installs chromium; a CI run without it would pass
			// without checking the report renders.
			t.Fatalf("chromium is not installed (%s missing) although CI=true: .ci/run should have installed it", chromiumPath)
		}
		t.Skipf("chromium is not installed (%s missing; apt-get install chromium): skipping the browser test", chromiumPath)
	}
	if testing.Short() {
		t.Skip("browser test skipped in -short mode")
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var stderr bytes.Buffer
	if err := Run(&Options{IO: &iostreams.IOStreams{Out: &bytes.Buffer{}, Err: &stderr}, Files: []string{writeCapture(t, dir)},
		Output: page, Timeout: 45 * time.Second, Quiet: true}); err != nil {
		t.Fatalf("Run: %v\n%s", err, stderr.String())
	}

	dom, logs := chromium(t, page, "--dump-dom", "--enable-logging=stderr", "--v=0")
	charts := strings.Split(dom, "<svg")[1:]
	if len(charts) != 4 {
		t.Fatalf("dumped DOM has %d <svg> elements, want 4", len(charts))
	}
	for i, c := range charts {
		c, _, _ = strings.Cut(c, "</svg>")
		if n := strings.Count(c, "<rect") + strings.Count(c, "<path") + strings.Count(c, "<line"); n < 5 {
			t.Errorf("chart %d has %d shapes in the DOM", i, n)
		}
	}
	for _, line := range strings.Split(logs, "\n") {
		if strings.Contains(line, "Uncaught") || strings.Contains(line, "ERROR:CONSOLE") {
			t.Errorf("console: %s", line)
		}
	}

	shot := filepath.Join(dir, "report.png")
	chromium(t, page, "--screenshot="+shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 1000 || b.Dy() < 2000 {
		t.Errorf("screenshot is %v", b)
	}
	if n := distinctColors(img, 200); n < 50 {
		t.Errorf("screenshot has %d distinct colors, want a drawn page", n)
	}
	if os.Getenv("BCWIRE_KEEP_SCREENSHOT") != "" {
		data, _ := os.ReadFile(shot)
		os.WriteFile(os.Getenv("BCWIRE_KEEP_SCREENSHOT"), data, 0o644)
	}
}

// distinctColors counts the colors of img, stopping at limit.
func distinctColors(img image.Image, limit int) int {
	seen := map[[3]uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 2 {
		for x := b.Min.X; x < b.Max.X; x += 2 {
			r, g, bl, _ := img.At(x, y).RGBA()
			seen[[3]uint32{r >> 8, g >> 8, bl >> 8}] = true
			if len(seen) >= limit {
				return len(seen)
			}
		}
	}
	return len(seen)
}
