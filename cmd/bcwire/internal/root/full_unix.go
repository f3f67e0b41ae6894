//go:build unix

package root

import (
	"os"
	"syscall"
)

// execve replaces the process with path run with args; it returns only on
// failure.
func execve(path string, args []string) error {
	return syscall.Exec(path, append([]string{path}, args...), os.Environ())
}
