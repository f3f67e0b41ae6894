//go:build !unix

package output

import "os"

// Without flock a partial in use cannot be told from a stale one, so none
// is reported.
func lockPartial(*os.File)   {}
func unlocked(*os.File) bool { return false }
func dieOf(os.Signal)        { os.Exit(130) }
