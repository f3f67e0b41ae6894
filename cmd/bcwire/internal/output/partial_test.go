//go:build unix

package output

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/interrupt"
)

// partialHelperEnv makes the test binary a writer that a test interrupts:
// it starts writing the target named in the variable (Create, WriteFile or
// CreateKept, after the mode), prints the temporary name, and writes until
// a signal ends it.
const partialHelperEnv = "BCWIRE_PARTIAL_HELPER"

func init() {
	spec := os.Getenv(partialHelperEnv)
	if spec == "" {
		return
	}
	mode, target, _ := strings.Cut(spec, ":")
	chunk := bytes.Repeat([]byte("x"), 1<<16)
	forever := func(w io.Writer, name string) error {
		fmt.Println(name)
		for {
			if _, err := w.Write(chunk); err != nil {
				return err
			}
			time.Sleep(time.Millisecond)
		}
	}
	switch mode {
	case "create", "kept":
		create := Create
		if mode == "kept" {
			create = CreateKept
		}
		f, err := create(target)
		if err != nil {
			fmt.Println("error:", err)
			os.Exit(2)
		}
		forever(f, f.Name())
	case "caught", "stuck":
		// A command that catches the first signal (decode): it stops,
		// aborts its file and exits 130 ("caught"), or does not get
		// round to it ("stuck") and a second signal must still clean up.
		intr, stop := interrupt.Catch()
		defer stop()
		f, err := Create(target)
		if err != nil {
			os.Exit(2)
		}
		fmt.Println(f.Name())
		for mode == "stuck" || !interrupt.Closed(intr) {
			f.Write(chunk)
			time.Sleep(time.Millisecond)
		}
		f.Abort()
		os.Exit(exit.CodeInterrupted)
	case "writefile":
		// WriteFile buffers: the temporary name is found by globbing.
		WriteFile(target, nil, func(w io.Writer) error {
			names, _ := filepath.Glob(filepath.Join(filepath.Dir(target), "."+filepath.Base(target)+".*.partial"))
			return forever(w, strings.Join(names, ","))
		})
	}
	os.Exit(3)
}

// startWriter starts the helper writing target and returns it with the
// temporary file it writes, once that exists and has grown.
func startWriter(t *testing.T, mode, target string) (*exec.Cmd, string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self, "-test.run=^$")
	cmd.Env = append(os.Environ(), partialHelperEnv+"="+mode+":"+target)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper: %v\n%s", err, stderr.String())
	}
	name := strings.TrimSpace(line)
	if !strings.HasSuffix(name, ".partial") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("helper wrote %q", name)
	}
	// Wait (bounded by counts, not by the clock's luck) until bytes land.
	for i := 0; i < 10000; i++ {
		if st, err := os.Stat(name); err == nil && st.Size() > 0 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	go io.Copy(io.Discard, out)
	return cmd, name
}

// TestSignalRemovesPartial: SIGINT or SIGTERM while Create's or WriteFile's
// temporary file is being written removes it, and the process dies of the
// signal as it would have; CreateKept's file is left to its command.
func TestSignalRemovesPartial(t *testing.T) {
	for _, c := range []struct {
		mode   string
		sig    syscall.Signal
		remove bool
		twice  bool // send the signal twice
	}{
		{"caught", syscall.SIGINT, true, false},
		{"stuck", syscall.SIGTERM, true, true},
		{"create", syscall.SIGINT, true, false},
		{"create", syscall.SIGTERM, true, false},
		{"writefile", syscall.SIGINT, true, false},
		{"writefile", syscall.SIGTERM, true, false},
		{"kept", syscall.SIGTERM, false, false},
	} {
		t.Run(fmt.Sprintf("%s/%v", c.mode, c.sig), func(t *testing.T) {
			dir := t.TempDir()
			target := filepath.Join(dir, "out.pcap")
			os.WriteFile(target, []byte("old"), 0o644)
			cmd, partial := startWriter(t, c.mode, target)
			watchdog := time.AfterFunc(time.Minute, func() { cmd.Process.Kill() }) // a bug must not hang the test
			defer watchdog.Stop()
			cmd.Process.Signal(c.sig)
			if c.twice {
				// The first one reached the command's handler before the
				// second is sent: it is caught and ignored, so the file
				// still grows.
				st0, _ := os.Stat(partial)
				for i := 0; i < 10000; i++ {
					if st, err := os.Stat(partial); err == nil && st0 != nil && st.Size() > st0.Size()+1<<20 {
						break
					}
					time.Sleep(time.Millisecond)
				}
				cmd.Process.Signal(c.sig)
			}
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) {
				t.Fatalf("helper ended with %v", err)
			}
			if c.mode == "caught" {
				if ee.ExitCode() != exit.CodeInterrupted {
					t.Errorf("helper ended with %v, want exit status %d from its own handler", err, exit.CodeInterrupted)
				}
			} else if ws, ok := ee.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != c.sig {
				t.Errorf("helper ended with %v, want death by %v", err, c.sig)
			}
			_, statErr := os.Stat(partial)
			if c.remove && statErr == nil {
				t.Errorf("%s left behind", partial)
			}
			if !c.remove && statErr != nil {
				t.Errorf("kept partial removed: %v", statErr)
			}
			if b, _ := os.ReadFile(target); string(b) != "old" {
				t.Errorf("target changed: %.10q", b)
			}
		})
	}
}

// TestStalePartialIsReported: after a writer is killed (SIGKILL, which no
// handler sees), the next Create of the same target says a stale partial
// is there, naming it; a partial still being written by a live process is
// not reported.
func TestStalePartialIsReported(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "big[1].pcap") // a glob character in the name
	var warn bytes.Buffer
	old := StaleWarnings
	StaleWarnings = &warn
	defer func() { StaleWarnings = old }()

	live, livePartial := startWriter(t, "create", target)
	f, err := Create(target)
	if err != nil {
		t.Fatal(err)
	}
	f.Abort()
	if warn.Len() != 0 {
		t.Errorf("a partial being written was reported as stale: %s", warn.String())
	}
	live.Process.Kill()
	live.Wait()
	if _, err := os.Stat(livePartial); err != nil {
		t.Fatalf("SIGKILL should leave the partial: %v", err)
	}
	f, err = Create(target)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Abort()
	msg := warn.String()
	if !strings.Contains(msg, livePartial) || !strings.Contains(msg, "left by a run that was killed") || strings.Count(msg, "\n") != 1 {
		t.Errorf("warning %q does not name the one stale partial %s", msg, livePartial)
	}
	if _, err := os.Stat(livePartial); err != nil {
		t.Errorf("the stale partial was removed (it may hold the only copy): %v", err)
	}
}
