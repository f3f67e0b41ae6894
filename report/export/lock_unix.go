//go:build unix

package export

import (
	"os"
	"syscall"
)

// lockTemp takes the flock that marks f as being written; the kernel
// releases it when the process ends, however it ends.
func lockTemp(f *os.File) {
	_ = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
}

// unlocked reports whether no process holds f's lock: its writer is gone.
func unlocked(f *os.File) bool {
	return syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB) == nil
}
