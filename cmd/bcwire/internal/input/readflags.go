package input

// The flags of the commands that read captures as tshark users expect:
// -r FILE (repeatable, "-" for standard input) beside positional files,
// -Y EXPR (a display filter) and -t FORMAT (the time column).

import (
	"strings"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/report"
	"github.com/bcwire/bcwire/report/filter"
	"github.com/spf13/pflag"
)

// ReadFlags are -r, -Y and (for the commands with a time column) -t.
type ReadFlags struct {
	Reads  []string // -r FILE
	Filter string   // -Y EXPR
	Time   string   // -t FORMAT
}

// AddReadFlags registers -r and -Y, and -t when withTime.
func AddReadFlags(f *pflag.FlagSet, r *ReadFlags, withTime bool) {
	f.StringArrayVarP(&r.Reads, "read", "r", nil, "read the capture `FILE` (repeatable; - reads standard input); gzip and zstd captures are read as they are")
	AddFilterFlags(f, r, withTime)
}

// AddFilterFlags registers -Y, and -t when withTime (live, which reads no
// file).
func AddFilterFlags(f *pflag.FlagSet, r *ReadFlags, withTime bool) {
	f.StringVarP(&r.Filter, "display-filter", "Y", "", "only the messages `EXPR` holds for, e.g. 'name == \"CHAT\" and fields.text contains \"gg\"' (fields as decode --json names them)")
	if withTime {
		f.StringVarP(&r.Time, "time-format", "t", "r", "the time column: "+report.TimeFormatNames)
	}
}

// Inputs are the positional files and the -r files, in that order. Standard
// input can be read once.
func (r *ReadFlags) Inputs(args []string) ([]string, error) {
	files := append(append([]string(nil), args...), r.Reads...)
	stdin := 0
	for _, f := range files {
		if f == capture.Stdin {
			stdin++
		}
	}
	if stdin > 1 {
		return nil, exit.Usage("standard input (-) can be read only once")
	}
	return files, nil
}

// CompileFilter compiles -Y; nil when none was given. A bad expression is a
// usage error that shows the column.
func (r *ReadFlags) CompileFilter() (*filter.Filter, error) {
	if strings.TrimSpace(r.Filter) == "" {
		return nil, nil
	}
	f, err := filter.Compile(r.Filter)
	if err != nil {
		return nil, exit.Usage("-Y: %v", err)
	}
	return f, nil
}

// TimeFormat reads -t.
func (r *ReadFlags) TimeFormat() (report.TimeFormat, error) {
	tf, err := report.ParseTimeFormat(r.Time)
	if err != nil {
		return 0, exit.Usage("%v", err)
	}
	return tf, nil
}

// FileName is how a record names its file when several are read: the path
// as given, "-" as stdin.
func FileName(path string) string {
	if path == capture.Stdin {
		return "stdin"
	}
	return path
}
