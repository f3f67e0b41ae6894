//go:build !unix

package root

import "errors"

// execve is not available here: runFull runs bcwire-full as a child.
func execve(string, []string) error { return errors.ErrUnsupported }
