package report

import (
	"bufio"
	"fmt"
	"io"
	"strings"

	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/report/filter"
)

// FieldsOptions are tshark's -T fields settings: the -e fields and the -E
// options.
type FieldsOptions struct {
	Fields    []string
	Header    bool   // -E header=y: a first line naming the fields
	Separator string // -E separator=C: between fields (default tab)
}

// SetOption applies one -E KEY=VALUE: header=y|n, separator=C (/t is a
// tab and /s a space, as in tshark).
func (o *FieldsOptions) SetOption(kv string) error {
	key, val, ok := strings.Cut(kv, "=")
	if !ok {
		return fmt.Errorf("-E %q: want KEY=VALUE (header=y, separator=,)", kv)
	}
	switch key {
	case "header":
		switch val {
		case "y", "yes", "true":
			o.Header = true
		case "n", "no", "false":
			o.Header = false
		default:
			return fmt.Errorf("-E %q: header is y or n", kv)
		}
	case "separator":
		switch val {
		case "/t":
			val = "\t"
		case "/s":
			val = " "
		}
		if val == "" {
			return fmt.Errorf("-E %q: the separator is empty", kv)
		}
		o.Separator = val
	default:
		return fmt.Errorf("-E %q: bcwire knows header and separator", kv)
	}
	return nil
}

// FieldsPrinter writes the chosen fields of each record on a line (-T
// fields). It buffers: call Flush at the end.
type FieldsPrinter struct {
	w     *bufio.Writer
	ext   *filter.Extractor
	opts  FieldsOptions
	clock Clock
	ctx   filter.Context
	line  []byte
	began bool // the header is written
}

// NewFieldsPrinter checks the field names and returns a printer writing
// to w.
func NewFieldsPrinter(w io.Writer, o FieldsOptions, tf TimeFormat) (*FieldsPrinter, error) {
	if len(o.Fields) == 0 {
		return nil, fmt.Errorf("-T fields needs at least one -e FIELD")
	}
	ext, err := filter.NewExtractor(o.Fields)
	if err != nil {
		return nil, err
	}
	if o.Separator == "" {
		o.Separator = "\t"
	}
	return &FieldsPrinter{w: bufio.NewWriterSize(w, 64<<10), ext: ext, opts: o, clock: Clock{Format: tf}}, nil
}

// SetFile starts the records of another capture.
func (p *FieldsPrinter) SetFile(name string) {
	p.ctx.File = name
	p.clock.Reset()
}

// Observe takes note of a record that may be filtered out, for the times.
func (p *FieldsPrinter) Observe(r *flow.Record) { p.clock.Observe(r) }

// Print writes r's line.
func (p *FieldsPrinter) Print(r *flow.Record) error {
	p.clock.Observe(r)
	b := p.line[:0]
	if !p.began {
		p.began = true
		if p.opts.Header {
			b = append(b, strings.Join(p.ext.Names(), p.opts.Separator)...)
			b = append(b, '\n')
		}
	}
	p.ctx.Start = p.clock.Start()
	p.ext.Next()
	for i := range p.opts.Fields {
		if i > 0 {
			b = append(b, p.opts.Separator...)
		}
		if p.ext.IsTime(i) {
			if !r.Time.IsZero() {
				b = p.clock.Append(b, r)
			}
			continue
		}
		b = p.ext.Append(b, i, r, &p.ctx)
	}
	b = append(b, '\n')
	p.line = b
	_, err := p.w.Write(b)
	return err
}

// Flush writes out buffered output.
func (p *FieldsPrinter) Flush() error { return p.w.Flush() }
