package root

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// feedBattle writes battle.pcap's header and then its records over and
// over to w until writing fails (the reader has gone), and closes started
// once n bytes are written: a capture without end, made as it is read.
func feedBattle(t *testing.T, w io.WriteCloser, n int, started chan<- struct{}) {
	b, err := os.ReadFile(filepath.Join(corpusDir, "battle.pcap"))
	if err != nil {
		t.Error(err)
		return
	}
	defer w.Close()
	if _, err := w.Write(b[:24]); err != nil {
		return
	}
	written := 0
	for {
		k, err := w.Write(b[24:])
		if written += k; written >= n && started != nil {
			close(started)
			started = nil
		}
		if err != nil {
			return
		}
	}
}

// SIGINT stops stats, decode and export reading an endless capture on
// standard input: stats and decode print what they counted, export leaves
// its directory as it found it, and each exits 130.
func TestInterruptedCommands(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bcwire")
	// export runs in bcwire-full, which bcwire finds beside itself.
	if out, err := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "github.com/bcwire/bcwire/cmd/bcwire",
		"github.com/bcwire/bcwire/cmd/bcwire/bcwire-full").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out := filepath.Join(dir, "fleet")
	cut := filepath.Join(t.TempDir(), "cut.pcapng")
	for _, tc := range []struct {
		args             []string
		wantOut, wantErr string
	}{
		{[]string{"stats", "-"}, "Total: 1 file(s)", "interrupted: what is printed above covers the records read before the signal"},
		{[]string{"decode", "-"}, "StateUpdate", "interrupted: the summary above"},
		{[]string{"decode", "-"}, "", " records, "},
		{[]string{"decode", "-q", "-"}, "", "interrupted"}, // -q prints no packets, as tshark's
		{[]string{"export", "-q", "-o", out, "-"}, "", "interrupted: nothing exported"},
		// -w: the partial being written goes, the target is not made.
		{[]string{"decode", "-q", "-Y", `name == "StateUpdate"`, "-w", cut, "-"}, "", cut + " not written"},
	} {
		cmd := exec.Command(bin, tc.args...)
		in, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		started := make(chan struct{})
		go feedBattle(t, in, 4<<20, started)
		select {
		case <-started:
		case <-time.After(2 * time.Minute):
			t.Fatalf("%v: did not read 4 MiB", tc.args)
		}
		cmd.Process.Signal(syscall.SIGINT)
		err = cmd.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Errorf("%v: %v, want exit status 130\n%s", tc.args, err, tail(stderr.String(), 1000))
		}
		if !strings.Contains(stdout.String(), tc.wantOut) || !strings.Contains(stderr.String(), tc.wantErr) {
			t.Errorf("%v: stdout %q, stderr %q", tc.args, tail(stdout.String(), 300), tail(stderr.String(), 500))
		}
		if strings.Contains(stderr.String(), "goroutine ") {
			t.Errorf("%v: a goroutine dump", tc.args)
		}
	}
	// export made nothing that stays: no .part-*.tmp, no empty folders,
	// not even DIR, which it created.
	var left []string
	filepath.WalkDir(out, func(p string, d fs.DirEntry, err error) error {
		if err == nil {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("export left %v", left)
	}
	if left, _ := os.ReadDir(filepath.Dir(cut)); len(left) > 0 {
		t.Errorf("decode -w left %v", left)
	}
}
