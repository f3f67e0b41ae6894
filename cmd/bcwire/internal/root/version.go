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

// version is what `bcwire --version` prints: what the go command recorded
// and nothing it did not. The module version is a tag, a pseudo-version
// (which names the commit) or "(devel)" (a `go run`, or a build from a
// checkout without VCS stamping); the commit, its time and whether the tree
// had uncommitted changes come when the build was stamped. An unstamped
// build says it is a development build rather than that something is
// missing.
func version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(built without module information)"
	}
	return versionOf(bi.Main.Version, bi.GoVersion, bi.Settings)
}

func versionOf(modVersion, goVersion string, settings []debug.BuildSetting) string {
	v := modVersion
	if v == "" || v == "(devel)" {
		v = "development build"
	}
	var rev, at string
	dirty := false
	for _, s := range settings {
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
	if rev != "" && !strings.Contains(v, shortRev(rev)) {
		if dirty {
			rev += " with uncommitted changes"
		}
		parts = append(parts, "commit "+rev)
	} else if dirty {
		parts = append(parts, "with uncommitted changes")
	}
	if at != "" {
		parts = append(parts, at)
	}
	return strings.Join(parts, ", ") + " (" + goVersion + ")"
}

// shortRev is the commit prefix a pseudo-version carries.
func shortRev(rev string) string {
	if len(rev) > 12 {
		return rev[:12]
	}
	return rev
}
