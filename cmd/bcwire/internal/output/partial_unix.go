//go:build unix

package output

import (
	"os"
	"syscall"
)

// lockPartial takes the flock that marks f as being written.
func lockPartial(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// unlocked reports whether no process holds f's lock: its writer is gone.
// (It takes the lock; closing f releases it.)
func unlocked(f *os.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}

// dieOf sends sig to the process again, now with its default action.
func dieOf(sig os.Signal) {
	if s, ok := sig.(syscall.Signal); ok {
		_ = syscall.Kill(os.Getpid(), s)
	}
}
