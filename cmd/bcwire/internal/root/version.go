package root

import (
	"runtime/debug"
	"strings"
)

// buildCommit names the commit when the go command could not record it
// (a build with -buildvcs=false, or from a copy without .git):
//
//	go build -ldflags "-X github.com/bcwire/bcwire/cmd/bcwire/internal/root.buildCommit=$(git rev-parse HEAD)" ./cmd/bcwire
var buildCommit string

// version is what `bcwire --version` prints: the module version (a tag, or
// "(devel)" for a build from a checkout), the commit it was built from and
// whether the tree had uncommitted changes, as the go command recorded them.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown (built without module information)"
	}
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, at string
	dirty := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.time":
			at = s.Value
		case "vcs.modified":
			dirty = s.Value == "true"
		}
	}
	parts := []string{v}
	if rev == "" {
		rev = buildCommit
	}
	if rev != "" {
		if dirty {
			rev += "-dirty"
		}
		parts = append(parts, "commit "+rev)
	} else {
		parts = append(parts, "commit unknown")
	}
	if at != "" {
		parts = append(parts, at)
	}
	return strings.Join(parts, ", ") + " (" + bi.GoVersion + ")"
}
