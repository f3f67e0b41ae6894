// Package gctune sets a command's garbage collector target, which the
// user's GOGC overrides.
package gctune

import (
	"os"
	"runtime/debug"
)

// Percent sets the collector's target to percent (as GOGC=percent would)
// unless the environment sets GOGC.
func Percent(percent int) {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(percent)
	}
}
