// Package interrupt lets a command that reads or serves stop where it is on
// the first SIGINT or SIGTERM, print what it has and clean up, while a
// second signal still kills as usual.
package interrupt

import (
	"context"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// Catch makes the first SIGINT or SIGTERM close the returned channel
// instead of killing the process, so that a reading command can stop where
// it is and still print its summary or clean up its files; a second signal
// kills as usual. Call stop when done.
//
// While it is in place, the first signal is the command's: the partial
// files of output.Create are left to it (it aborts them itself); a second
// signal removes them before it kills (see Claim).
func Catch() (done <-chan struct{}, stop func()) {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	release := catching()
	go func() {
		<-ctx.Done()
		cancel() // restore the default action: a second signal kills
	}()
	return ctx.Done(), func() {
		cancel()
		release()
	}
}

// Closed reports whether done (which may be nil) is closed.
func Closed(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

var catchers struct {
	mu sync.Mutex
	// n counts the Catch handlers in place; claimed is set once one of
	// them has had its signal.
	n       int
	claimed bool
}

// catching notes a Catch handler until the returned release.
func catching() (release func()) {
	catchers.mu.Lock()
	catchers.n++
	catchers.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			catchers.mu.Lock()
			catchers.n--
			catchers.mu.Unlock()
		})
	}
}

// Claim is asked by another handler of the same signals (output's, which
// removes partial files) when one comes: true means the signal is a Catch
// handler's, the first since one was in place, and the asker should let it
// be; the next signal is the asker's.
func Claim() bool {
	catchers.mu.Lock()
	defer catchers.mu.Unlock()
	if catchers.n > 0 && !catchers.claimed {
		catchers.claimed = true
		return true
	}
	return false
}
