// Package exit holds the exit statuses every bcwire command shares, the
// error type that carries one to the root command, and --fail-on, which
// says when intact traffic exits 1 too.
package exit

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// Exit statuses, the same for every command.
const (
	CodeOK      = 0 // everything decoded cleanly / no differences
	CodeDamaged = 1 // input read, but some of it was damaged (or differences found)
	CodeUsage   = 2 // usage or I/O error
	// CodeInterrupted is the exit status of a command stopped by SIGINT or
	// SIGTERM after it printed what it had (128 + SIGINT, as shells report
	// a process the signal killed).
	CodeInterrupted = 130
)

// Error is an error that decides the process's exit status.
type Error struct {
	Code int
	Err  error
}

func (e *Error) Error() string { return e.Err.Error() }
func (e *Error) Unwrap() error { return e.Err }

// Usage wraps a usage error (exit 2).
func Usage(format string, args ...any) error {
	return &Error{Code: CodeUsage, Err: fmt.Errorf(format, args...)}
}

// IOError wraps an I/O error (exit 2), naming path once: an os error about
// path already names it (its text is kept without the wrappers that
// repeat the name); any other error gets the name prefixed once.
func IOError(path string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) && (pe.Path == path || path == "") {
		return &Error{Code: CodeUsage, Err: pe}
	}
	if path == "" || strings.HasPrefix(err.Error(), path+": ") {
		return &Error{Code: CodeUsage, Err: err}
	}
	return &Error{Code: CodeUsage, Err: fmt.Errorf("%s: %w", path, err)}
}
