package decodecmd

// decode's outputs as tshark users expect them: -T fields -e FIELD
// -E OPTION and -x (-w is the command's own flag).

import (
	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/report"
	display "github.com/bcwire/bcwire/report/filter"
	"github.com/spf13/pflag"
)

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
			return o, false, exit.Usage("-e and -E need -T fields")
		}
		return o, false, nil
	case "fields":
	default:
		return o, false, exit.Usage("-T %q: use -T fields (or json, text)", p.Format)
	}
	if len(p.Fields) == 0 {
		return o, false, exit.Usage("-T fields needs at least one -e FIELD (e.g. -e frame -e name)")
	}
	o.Fields = p.Fields
	for _, kv := range p.Options {
		if err := o.SetOption(kv); err != nil {
			return o, false, exit.Usage("%v", err)
		}
	}
	if _, err := display.NewExtractor(o.Fields); err != nil {
		return o, false, exit.Usage("%v", err)
	}
	return o, true, nil
}
