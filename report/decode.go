package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/internal/jsonenc"
	"github.com/fatih/color"
)

// DecodeFormat selects how `decode` prints records.
type DecodeFormat int

const (
	DecodeText    DecodeFormat = iota // one line per transport message
	DecodeVerbose                     // the line, then every field indented
	DecodeJSON                        // NDJSON, one object per transport message
)

// DecodePrinter writes flow records. It buffers: call Flush at the end.
type DecodePrinter struct {
	w        *bufio.Writer
	format   DecodeFormat
	color    bool
	clock    Clock // the time column (relative to the capture's first record by default)
	line     []byte
	fields   []byte       // -V: the JSON form whose members are printed
	jsonOpen jsonOpenings // JSON: the records' openings
	pal      palette
	// scratch holds a field while it is padded to its column.
	scratch []byte
	// With several captures, the file each line names (SetFile);
	// jsonFile is its `{"file":"NAME",` opening.
	file, jsonFile []byte
	// hexDump (-x) adds each datagram's bytes under its first message
	// shown; dumped is the last datagram dumped.
	hexDump bool
	// gameJSON is the record's game message JSON (PrintWithGameJSON).
	gameJSON []byte
	dumped   struct {
		frame int
		data  *byte
	}
	pool fmtPool // SetWorkers
	// The last text opening written, and the address pairs' texts (see
	// decode_prefix.go).
	lastText  lastOpening
	textPairs addrPairs
}

// PrintWithGameJSON is Print for a record whose game message's JSON form
// is already made (gameJSON, nil when it is not): a display filter that
// looked into fields.PATH made it, and JSON output need not make it again.
func (p *DecodePrinter) PrintWithGameJSON(r *flow.Record, gameJSON []byte) error {
	p.gameJSON = gameJSON
	err := p.Print(r)
	p.gameJSON = nil
	return err
}

// SetTimeFormat sets how the time column is written (tshark's -t).
func (p *DecodePrinter) SetTimeFormat(f TimeFormat) { p.clock.Format = f }

// SetHexDump makes every datagram's decrypted bytes follow its first
// message shown, in tshark -x's layout (text) or as "datagram" (JSON).
func (p *DecodePrinter) SetHexDump(on bool) { p.hexDump = on }

// SetFile starts the records of another capture: from now on every line
// and JSON object names file (when it is not empty), and times count from
// its first record.
func (p *DecodePrinter) SetFile(file string) {
	p.clock.Reset()
	p.file, p.jsonFile = nil, nil
	p.dumped.frame, p.dumped.data = 0, nil
	if file != "" {
		p.file = append([]byte(file), "  "...)
		p.jsonFile = append(jsonenc.String([]byte(`{"file":`), file), ',')
	}
}

// Observe takes note of a record that a filter may leave out, so that the
// time column counts from the capture's first record whatever is printed.
func (p *DecodePrinter) Observe(r *flow.Record) { p.clock.Observe(r) }

// newDatagram reports whether r's datagram is not the one dumped last.
func (p *DecodePrinter) newDatagram(r *flow.Record) bool {
	if len(r.Datagram) == 0 {
		return false
	}
	if p.dumped.frame == r.Frame && p.dumped.data == &r.Datagram[0] {
		return false
	}
	p.dumped.frame, p.dumped.data = r.Frame, &r.Datagram[0]
	return true
}

// appendAddr appends ap as its String method writes it (AppendTo writes
// nothing for the zero AddrPort, String "invalid AddrPort").
func appendAddr(b []byte, ap netip.AddrPort) []byte {
	if !ap.IsValid() {
		return append(b, ap.String()...)
	}
	return ap.AppendTo(b)
}

// appendPadded appends field right-aligned in width columns (runes), as
// fmt's %Nd and %Ns do.
func appendPadded(b []byte, width int, field []byte) []byte {
	for range width - utf8.RuneCount(field) {
		b = append(b, ' ')
	}
	return append(b, field...)
}

// hexByteUpper and ackFlagsText (tables_gen.go) are the texts of every
// byte value, made by fmt itself (TestGeneratedTables) so that they are
// exactly what the format verbs wrote: %02X for peer ids, %#02x for ACK
// flags.

type palette struct{ name, warn, err, dim func(a ...interface{}) string }

// NewDecodePrinter returns a printer writing to w.
func NewDecodePrinter(w io.Writer, format DecodeFormat, useColor bool) *DecodePrinter {
	p := &DecodePrinter{w: bufio.NewWriterSize(w, 64<<10), format: format, color: useColor}
	plain := func(a ...interface{}) string { return fmt.Sprint(a...) }
	p.pal = palette{plain, plain, plain, plain}
	if useColor {
		mk := func(attrs ...color.Attribute) func(a ...interface{}) string {
			c := color.New(attrs...)
			c.EnableColor()
			return c.SprintFunc()
		}
		p.pal = palette{mk(color.FgCyan, color.Bold), mk(color.FgYellow), mk(color.FgRed, color.Bold), mk(color.Faint)}
	}
	return p
}

// Flush writes out buffered output (waiting for the workers, with
// SetWorkers).
func (p *DecodePrinter) Flush() error {
	if err := p.drain(); err != nil {
		return err
	}
	return p.w.Flush()
}

// Print writes one record.
func (p *DecodePrinter) Print(r *flow.Record) error {
	p.clock.Observe(r)
	if p.pool.workers > 1 && !p.hexDump {
		return p.printLater(r)
	}
	if r.Lazy {
		r = p.decodeLazy(r)
	}
	p.line = p.appendRecord(p.line[:0], r)
	_, err := p.w.Write(p.line)
	return err
}

// appendRecord appends r's text (one line, or more with -V and -x) or its
// JSON line.
func (p *DecodePrinter) appendRecord(b []byte, r *flow.Record) []byte {
	if p.format == DecodeJSON {
		if p.jsonFile != nil {
			start := len(b)
			b = append(b, p.jsonFile...)
			b = appendRecordJSON(b, r, &p.jsonOpen, p.gameJSON)
			n := start + len(p.jsonFile)
			b = append(b[:n], b[n+1:]...) // the record's own '{'
		} else {
			b = appendRecordJSON(b, r, &p.jsonOpen, p.gameJSON)
		}
		if p.hexDump && p.newDatagram(r) {
			b = appendHexMember(b[:len(b)-1], "datagram", r.Datagram)
			b = append(b, '}')
		}
		return append(b, '\n')
	}
	b = append(b, p.file...)
	b = p.appendText(b, r)
	b = append(b, '\n')
	if p.format == DecodeVerbose {
		b = p.appendFields(b, r)
		b = appendNonStockLines(b, r.NonStock)
	}
	if p.hexDump && p.newDatagram(r) {
		b = AppendHexDump(b, r.Datagram)
	}
	return b
}

// appendText builds the one-line form:
//
//	frame  time  src -> dst  dir  peer  msg  transport  [game message]
func (p *DecodePrinter) appendText(b []byte, r *flow.Record) []byte {
	if !r.Src.IsValid() {
		// Damage in the capture file itself: there is no packet to take a
		// time or addresses from.
		b = append(b, fmt.Sprintf("%6d %*s %21s    %-21s %s ", r.Frame, p.clock.Width(), "-", "-", "", "-")...)
	} else {
		b = p.appendTextOpening(b, r)
	}
	switch r.Kind {
	case flow.KindGameSpy:
		g := r.GameSpy
		if r.Master != nil {
			// The master's TCP list protocol: its own text form.
			b = append(b, p.pal.name("gamespy-master")...)
			b = append(append(b, ' '), strings.TrimPrefix(r.Master.String(), "master ")...)
			break
		}
		b = append(b, p.pal.name("gamespy")...)
		if g.Query {
			b = append(b, " query "...)
			b = append(b, g.Kind...)
		} else {
			b = append(b, " reply"...)
			if g.QueryID != "" {
				b = append(b, " queryid="...)
				b = append(b, g.QueryID...)
			}
			for _, f := range g.Fields {
				b = append(b, ' ')
				b = append(b, f.Key...)
				b = append(b, '=')
				b = strconv.AppendQuote(b, f.Value)
			}
		}
	case flow.KindDamaged:
		if r.Raw == nil { // the capture record itself
			b = append(b, p.pal.err("DAMAGED capture record")...)
			break
		}
		b = append(b, fmt.Sprintf("peer=%02X ", r.Peer)...)
		b = append(b, p.pal.err("DAMAGED")...)
		b = append(b, fmt.Sprintf(" after %d of %d messages", r.MsgIndex, r.MsgCount)...)
	case flow.KindLost:
		b = append(b, p.pal.err("LOST")...)
	default:
		b = p.appendMessage(b, r)
	}
	if r.NonStock != nil {
		b = append(b, "  "...)
		if p.color {
			b = append(b, p.pal.warn("("+r.NonStock.String()+")")...)
		} else { // without fmt.Sprint and the strings: nothing allocated
			b = append(r.NonStock.AppendText(append(b, '(')), ')')
		}
	}
	if r.Warning != "" {
		b = append(b, "  "...)
		b = p.appendStyled(b, p.pal.warn, "warning: ", r.Warning)
	}
	if r.Err != nil {
		b = append(b, "  "...)
		b = p.appendStyled(b, p.pal.err, "error: ", r.Err.Error())
	}
	return b
}

// stringAppender is a message whose String form can be appended to a
// buffer without making the string (the common StateUpdate).
type stringAppender interface{ AppendString([]byte) []byte }

// appendStyled appends the concatenation of parts, through style when the
// output is colored; plain output skips style's fmt.Sprint, which cost an
// allocation per line.
func (p *DecodePrinter) appendStyled(b []byte, style func(a ...interface{}) string, parts ...string) []byte {
	if !p.color {
		for _, s := range parts {
			b = append(b, s...)
		}
		return b
	}
	return append(b, style(strings.Join(parts, ""))...)
}

func (p *DecodePrinter) appendMessage(b []byte, r *flow.Record) []byte {
	m := r.Msg
	b = append(b, "peer="...)
	b = append(b, hexByteUpper[r.Peer]...)
	b = jsonenc.Int(append(b, ' '), int64(r.MsgIndex+1))
	b = jsonenc.Int(append(b, '/'), int64(r.MsgCount))
	b = append(append(b, ' '), m.Type.String()...)
	if m.Type == dissect.TypeAck {
		b = jsonenc.Uint(append(b, " seq="...), uint64(m.Seq))
		b = append(append(b, " flags="...), ackFlagsText[m.AckFlags]...)
		if m.AckFlags&dissect.AckFragment != 0 {
			b = append(b, fmt.Sprintf(" frag=%d", m.AckFragIndex)...)
		}
		return append(b, " ("+m.AckChannel().String()+")"...)
	}
	if m.Reliable {
		b = jsonenc.Uint(append(b, " R seq="...), uint64(m.Seq))
	} else {
		b = append(b, " U"...)
	}
	if m.Ordered {
		b = append(b, " O"...)
	}
	if m.Fragment {
		if m.HasTotal() {
			b = append(b, fmt.Sprintf(" frag=0/%d", m.FragTotal)...)
		} else {
			b = append(b, fmt.Sprintf(" frag=%d", m.FragIndex)...)
		}
		if r.DuplicateFragment {
			b = append(b, " (duplicate)"...)
		}
	}
	switch {
	case r.Game != nil:
		g := r.Game.Msg
		b = append(b, "  "...)
		b = p.appendStyled(b, p.pal.name, g.Opcode().String())
		if a, ok := g.(stringAppender); ok {
			n := len(b)
			if b = a.AppendString(append(b, ' ')); len(b) == n+1 {
				b = b[:n] // an empty String form: no separator
			}
		} else if s := g.String(); s != "" {
			b = append(b, ' ')
			b = append(b, s...)
		}
		if r.Reassembled > 0 {
			b = append(b, fmt.Sprintf(" [reassembled from %d fragments]", r.Reassembled)...)
		}
		if len(r.Game.Unparsed) > 0 {
			b = append(b, fmt.Sprintf(" unparsed=%X", r.Game.Unparsed)...)
		}
	case r.Control != nil:
		b = r.Control.AppendString(append(b, "  "...))
	}
	return b
}

// appendFields writes the message's fields one per line, indented, in the
// JSON form's key order (for -V): each top-level member of the JSON object
// as `key: value`.
func (p *DecodePrinter) appendFields(b []byte, r *flow.Record) []byte {
	var v any
	switch {
	case r.Game != nil:
		v = r.Game.Msg
	case r.Control != nil:
		v = r.Control
	case r.Master != nil:
		v = r.Master
	case r.GameSpy != nil:
		v = r.GameSpy
	case r.Kind == flow.KindDamaged:
		return append(b, fmt.Sprintf("         raw: %X\n", r.Raw)...)
	default:
		return b
	}
	var ok bool
	if p.fields, ok = appendJSON(p.fields[:0], v); !ok {
		_, err := json.Marshal(v) // for its error message
		return append(b, fmt.Sprintf("         (fields: %v)\n", err)...)
	}
	return appendMembers(b, p.fields)
}

// appendNonStockLines writes -V's lines for a non-stock mark: the
// registry's name and what it is, and the stock evidence.
func appendNonStockLines(b []byte, n *dissect.NonStock) []byte {
	if n == nil {
		return b
	}
	f := n.Entry()
	b = append(append(append(append(b, "         nonstock: "...), f.Name...), " - "...), f.What...)
	b = append(append(append(b, "\n         evidence: "...), f.Evidence...), '\n')
	if f.By != "" {
		b = append(append(append(b, "         by: "...), f.By...), '\n')
	}
	return b
}

// appendMembers writes each top-level member of the JSON object obj as an
// indented `key: value` line, the value as it stands in obj.
func appendMembers(b, obj []byte) []byte {
	if len(obj) < 2 || obj[0] != '{' {
		return append(append(append(b, "         "...), obj...), '\n')
	}
	for i := 1; i < len(obj) && obj[i] == '"'; {
		keyEnd := jsonenc.SkipValue(obj, i)
		valStart := keyEnd + 1 // after the colon
		valEnd := jsonenc.SkipValue(obj, valStart)
		b = append(b, "         "...)
		b = appendKey(b, obj[i:keyEnd])
		b = append(b, ": "...)
		b = append(b, obj[valStart:valEnd]...)
		b = append(b, '\n')
		i = valEnd + 1 // after the comma
	}
	return b
}

// appendKey appends the text of key, a JSON string with its quotes.
func appendKey(b, key []byte) []byte {
	if bytes.IndexByte(key, '\\') < 0 {
		return append(b, key[1:len(key)-1]...)
	}
	var s string // escapes: none of the encoders writes them in a key
	_ = json.Unmarshal(key, &s)
	return append(b, s...)
}
