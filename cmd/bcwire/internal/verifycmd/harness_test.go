package verifycmd_test

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/verifycmd"
)

// These tests play verify against the real serve command, and read the
// capture with stats and diff. A command imports no other command, tests
// included: verify runs in process, the others in a bcwire-full built
// once for the package's tests (serve, export and live are linked there
// only), as a user runs them.

const corpus = "../../../../testdata/pcaps/"

var full struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

func TestMain(m *testing.M) {
	code := m.Run()
	if full.dir != "" {
		os.RemoveAll(full.dir)
	}
	os.Exit(code)
}

// bcwireFull is the path of a bcwire-full built from this tree.
func bcwireFull(t *testing.T) string {
	t.Helper()
	full.once.Do(func() {
		if full.dir, full.err = os.MkdirTemp("", "verifycmd-test-"); full.err != nil {
			return
		}
		full.bin = filepath.Join(full.dir, "bcwire-full")
		out, err := exec.Command("go", "build", "-o", full.bin, "github.com/bcwire/bcwire/cmd/bcwire/bcwire-full").CombinedOutput()
		if err != nil {
			full.err = errors.New("go build bcwire-full: " + err.Error() + "\n" + string(out))
		}
	})
	if full.err != nil {
		t.Fatal(full.err)
	}
	return full.bin
}

// run runs `bcwire args...`: verify in process, as root would (an error
// printed after "bcwire:", its exit status), any other command in
// bcwire-full.
func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	if len(args) == 0 || args[0] != "verify" {
		cmd := exec.Command(bcwireFull(t), args...)
		cmd.Stdout, cmd.Stderr = &out, &errb
		err := cmd.Run()
		var ee *exec.ExitError
		switch {
		case err == nil:
		case errors.As(err, &ee):
			code = ee.ExitCode()
		default:
			t.Fatalf("bcwire-full %v: %v", args, err)
		}
		return out.String(), errb.String(), code
	}
	cmd := verifycmd.NewCmdVerify(&iostreams.IOStreams{Out: &out, Err: &errb}, nil)
	cmd.SetArgs(args[1:])
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.Execute()
	var ee *exit.Error
	switch {
	case err == nil:
	case errors.As(err, &ee):
		code = ee.Code
		errb.WriteString("bcwire: " + err.Error() + "\n")
	default:
		code = exit.CodeUsage
		errb.WriteString("bcwire: " + err.Error() + "\n")
	}
	return out.String(), errb.String(), code
}

// server is a bcwire-full serve running in the background.
type server struct {
	cmd      *exec.Cmd
	mu       sync.Mutex
	out, err bytes.Buffer
	done     chan struct{}
	code     int
}

func (s *server) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err.Write(p)
}

// startServe starts `bcwire-full serve args...` on a loopback port 0 and
// returns once it has said, on stderr, the address it listens on (found by
// listening); stop interrupts it (SIGINT, as Ctrl-C does) and returns its
// output and exit status; exited waits up to d for it to end by itself.
func startServe(t *testing.T, listening *regexp.Regexp, args ...string) (addr string, stop func() (stdout, stderr string, code int), exited func(d time.Duration) bool) {
	t.Helper()
	s := &server{done: make(chan struct{})}
	s.cmd = exec.Command(bcwireFull(t), append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	s.cmd.Stdout = &s.out
	pipe, err := s.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			line := sc.Text()
			s.Write([]byte(line + "\n"))
			if m := listening.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		io.Copy(s, pipe)
	}()
	go func() {
		<-copied // Wait closes the pipe: read it all first
		err := s.cmd.Wait()
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			s.code = ee.ExitCode()
		} else if err != nil {
			s.code = -1
		}
		close(s.done)
	}()
	exited = func(d time.Duration) bool {
		select {
		case <-s.done:
			return true
		case <-time.After(d):
			return false
		}
	}
	stop = func() (string, string, int) {
		select {
		case <-s.done:
		default:
			_ = s.cmd.Process.Signal(os.Interrupt)
		}
		if !exited(30 * time.Second) {
			_ = s.cmd.Process.Kill()
			<-s.done
			t.Fatal("serve did not return within 30s of SIGINT")
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.out.String(), s.err.String(), s.code
	}
	t.Cleanup(func() { stop() })
	select {
	case addr = <-found:
	case <-s.done:
		_, errs, code := stop()
		t.Fatalf("serve ended at once: exit %d\n%s", code, errs)
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not start listening within 30s")
	}
	return addr, stop, exited
}

// replayServer runs `serve --replay file --timing asap args...`.
func replayServer(t *testing.T, file string, args ...string) (addr string, stop func() (string, string, int), exited func(d time.Duration) bool) {
	t.Helper()
	return startServe(t, regexp.MustCompile(`^replaying .* on (\S+) \(timing`), append([]string{"--replay", file, "--timing", "asap"}, args...)...)
}

// nativeServer runs `serve -w write` (the native server); stop ends it and
// waits until the capture is written.
func nativeServer(t *testing.T, write string) (addr string, stop func()) {
	t.Helper()
	addr, stopServe, _ := startServe(t, regexp.MustCompile(`msg=serving addr=(\S+)`), "--write", write, "--stop-after", "5m")
	return addr, func() {
		if _, errs, code := stopServe(); code != 0 {
			t.Errorf("serve: exit %d\n%s", code, errs)
		}
	}
}

// noLeaks fails the test when it leaves goroutines running. os/signal's
// watcher, started once per process by the commands' Ctrl-C handling and
// never stopped, is started first so that it is not counted.
func noLeaks(t *testing.T) {
	c := make(chan os.Signal, 1)
	signal.Notify(c, os.Interrupt)
	signal.Stop(c)
	before := runtime.NumGoroutine()
	t.Cleanup(func() {
		deadline := time.Now().Add(2 * time.Second)
		for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if n := runtime.NumGoroutine(); n > before {
			buf := make([]byte, 1<<16)
			t.Errorf("%d goroutines left (was %d):\n%s", n, before, buf[:runtime.Stack(buf, true)])
		}
	})
}
