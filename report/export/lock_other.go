//go:build !unix

package export

import "os"

func lockTemp(*os.File) {}

// unlocked cannot tell without flock: nothing is reported stale.
func unlocked(*os.File) bool { return false }
