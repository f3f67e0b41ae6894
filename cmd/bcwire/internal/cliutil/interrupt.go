package cliutil

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// ExitInterrupted is the exit status of a command stopped by SIGINT or
// SIGTERM after it printed what it had (128 + SIGINT, as shells report a
// process the signal killed).
const ExitInterrupted = 130

// CatchInterrupt makes the first SIGINT or SIGTERM close the returned
// channel instead of killing the process, so that a reading command can
// stop where it is and still print its summary or clean up its files; a
// second signal kills as usual. Call stop when done.
//
// While it is in place, the first signal is the command's: the partial
// files of Create are left to it (it aborts them itself); a second signal
// removes them before it kills (see partial.go).
func CatchInterrupt() (done <-chan struct{}, stop func()) {
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

// IsClosed reports whether done (which may be nil) is closed.
func IsClosed(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}
