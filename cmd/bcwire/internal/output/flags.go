package output

import "github.com/spf13/pflag"

// QuietUsage is what -q means in every command.
const QuietUsage = "print no summary, progress or log lines on stderr (damage and errors still are)"

// AddQuietFlag registers -q, --quiet.
func AddQuietFlag(f *pflag.FlagSet, quiet *bool) {
	f.BoolVarP(quiet, "quiet", "q", false, QuietUsage)
}

// AddForceFlag registers --force for a command whose -w refuses to replace
// an existing non-empty file (see Target.NoClobber).
func AddForceFlag(f *pflag.FlagSet, force *bool) {
	f.BoolVar(force, "force", false, "let -w replace an existing file")
}
