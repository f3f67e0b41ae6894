//go:build unix

package flow

import (
	"syscall"
	"time"
)

// processCPU is the CPU time the test process has used (user and system,
// all threads). Unlike wall time it does not grow when other work on the
// machine takes the cores, so a bound on it tests the code, not the load.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
