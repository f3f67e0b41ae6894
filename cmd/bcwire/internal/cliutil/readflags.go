package cliutil

// The flags of the commands that read captures as tshark users expect:
// -r FILE (repeatable, "-" for standard input) beside positional files,
// -Y EXPR (a display filter) and -t FORMAT (the time column); and decode's
// outputs: -T fields -e FIELD -E OPTION, -x and -w FILE.

import (
	"strings"

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
		return nil, Usage("standard input (-) can be read only once")
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
		return nil, Usage("-Y: %v", err)
	}
	return f, nil
}

// TimeFormat reads -t.
func (r *ReadFlags) TimeFormat() (report.TimeFormat, error) {
	tf, err := report.ParseTimeFormat(r.Time)
	if err != nil {
		return 0, Usage("%v", err)
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

// PrintFlags are decode's tshark-like outputs.
type PrintFlags struct {
	Format  string   // -T: text (default), json, fields
	Fields  []string // -e FIELD
	Options []string // -E KEY=VALUE
	Hex     bool     // -x
	Write   string   // -w FILE
}

// AddPrintFlags registers -T, -e, -E and -x (-w is the command's, as every
// command that writes a capture has it).
func AddPrintFlags(f *pflag.FlagSet, p *PrintFlags) {
	f.StringVarP(&p.Format, "output-format", "T", "", "fields: print the -e fields of each message on a line; json: one JSON array of the messages, as tshark's (--json writes one object a line); text: the default")
	f.StringArrayVarP(&p.Fields, "field", "e", nil, "with -T fields: print `FIELD` (repeatable; names as -Y takes them, e.g. frame, time, name, fields.text)")
	f.StringArrayVarP(&p.Options, "fields-option", "E", nil, "with -T fields: header=y prints the field names first; separator=C (/t tab, /s space)")
	f.BoolVarP(&p.Hex, "hex-dump", "x", false, "add each datagram's decrypted bytes in hex and ASCII under its first message shown")
}

// FieldsOptions checks -T, -e and -E. fields is false for any -T but
// fields; -e and -E then are usage errors.
func (p *PrintFlags) FieldsOptions() (o report.FieldsOptions, fields bool, err error) {
	switch p.Format {
	case "", "text", "json":
		if len(p.Fields)+len(p.Options) > 0 {
			return o, false, Usage("-e and -E need -T fields")
		}
		return o, false, nil
	case "fields":
	default:
		return o, false, Usage("-T %q: use -T fields (or json, text)", p.Format)
	}
	if len(p.Fields) == 0 {
		return o, false, Usage("-T fields needs at least one -e FIELD (e.g. -e frame -e name)")
	}
	o.Fields = p.Fields
	for _, kv := range p.Options {
		if err := o.SetOption(kv); err != nil {
			return o, false, Usage("%v", err)
		}
	}
	if _, err := filter.NewExtractor(o.Fields); err != nil {
		return o, false, Usage("%v", err)
	}
	return o, true, nil
}
