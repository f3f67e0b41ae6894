package output

// The temporary files of AtomicFile, when the process is interrupted or
// was killed.
//
// SIGINT and SIGTERM: a command writing a file with Create (decode -w,
// synth -w, every -o document) does not stop to finish it, so its partial
// file would stay behind, hidden and possibly large. While any such file is
// open, a handler removes them all on either signal and then lets the
// signal kill the process as it would have (exit status 130 or 143 in a
// shell). Files made with CreateKept are left to their command, which
// completes them when it stops (live -w, serve -w).
//
// SIGKILL cannot be caught: the partial stays. Each AtomicFile holds an
// exclusive flock on its temporary file, which the kernel releases when
// the process dies; the next Create for the same target finds the
// partials beside it and reports those nobody holds as stale.

import (
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/interrupt"
)

var partials struct {
	mu   sync.Mutex
	open map[*AtomicFile]bool
	sig  chan os.Signal
}

// track registers f for removal on SIGINT and SIGTERM, starting the handler
// with the first file.
func track(f *AtomicFile) {
	partials.mu.Lock()
	defer partials.mu.Unlock()
	if partials.open == nil {
		partials.open = map[*AtomicFile]bool{}
	}
	partials.open[f] = true
	if partials.sig == nil {
		partials.sig = make(chan os.Signal, 2) // a second signal may come before the first is read
		signal.Notify(partials.sig, os.Interrupt, syscall.SIGTERM)
		go removeOnSignal(partials.sig)
	}
}

// untrack takes f off the list once committed or aborted; it returns the
// unlock to defer, so that a signal cannot remove f halfway through its
// rename. When no file is left, the handler stops: the signals go back to
// their default action (or the command's own handler).
func untrack(f *AtomicFile) func() {
	if f.kept {
		return func() {}
	}
	partials.mu.Lock() // held for good by the handler once a signal came
	return func() {
		delete(partials.open, f)
		if len(partials.open) == 0 && partials.sig != nil {
			signal.Stop(partials.sig)
			close(partials.sig)
			partials.sig = nil
		}
		partials.mu.Unlock()
	}
}

func removeOnSignal(c chan os.Signal) {
	var sig os.Signal
	for {
		var ok bool
		if sig, ok = <-c; !ok {
			return
		}
		partials.mu.Lock()
		if interrupt.Claim() {
			// The command catches this one to stop where it is and
			// clean up; the next one is for us.
			partials.mu.Unlock()
			continue
		}
		break // holding the lock
	}
	// The lock is never released: no Commit renames after this.
	for f := range partials.open {
		os.Remove(f.Name())
	}
	// Die of the signal, as without this handler: the default action is
	// back once no handler wants it.
	signal.Reset(os.Interrupt, syscall.SIGTERM)
	dieOf(sig)
	select {} // the signal ends the process; nothing else may run on
}

// StaleWarnings receives the notes about partial files left by killed runs
// (standard error; tests replace it).
var StaleWarnings io.Writer = os.Stderr

// warnStale reports the partial files of target base in dir that no
// process is writing: a run writing it was killed (SIGKILL, a crash, a
// power cut). They are not removed: one may hold the only copy of a long
// capture (live -w flushes its partial every second).
func warnStale(dir, base string) {
	names, _ := filepath.Glob(filepath.Join(dir, "."+globEscape(base)+".*.partial"))
	for _, name := range names {
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		free := unlocked(f)
		var size int64
		if st, err := f.Stat(); err == nil {
			size = st.Size()
		}
		f.Close() // releases the test lock
		if free {
			fmt.Fprintf(StaleWarnings, "bcwire: warning: %s (%d bytes) is a partial %s left by a run that was killed before it finished; it holds what that run wrote so far: remove it, or keep what you need of it\n",
				name, size, filepath.Join(dir, base))
		}
	}
}

// globEscape quotes the glob metacharacters of a file name.
func globEscape(s string) string {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '*', '?', '[', '\\':
			out = append(out, '\\')
		}
		out = append(out, s[i])
	}
	return string(out)
}
