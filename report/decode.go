package report

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strconv"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
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
	w      *bufio.Writer
	format DecodeFormat
	color  bool
	start  time.Time // time of the first record, for relative timestamps
	line   []byte
	pal    palette
}

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

// Flush writes out buffered output.
func (p *DecodePrinter) Flush() error { return p.w.Flush() }

// Print writes one record.
func (p *DecodePrinter) Print(r *flow.Record) error {
	if p.start.IsZero() && !r.Time.IsZero() {
		p.start = r.Time
	}
	if p.format == DecodeJSON {
		p.line = AppendRecordJSON(p.line[:0], r)
		p.line = append(p.line, '\n')
		_, err := p.w.Write(p.line)
		return err
	}
	p.line = p.appendText(p.line[:0], r)
	p.line = append(p.line, '\n')
	if p.format == DecodeVerbose {
		p.line = p.appendFields(p.line, r)
	}
	_, err := p.w.Write(p.line)
	return err
}

// appendText builds the one-line form:
//
//	frame  time  src -> dst  dir  peer  msg  transport  [game message]
func (p *DecodePrinter) appendText(b []byte, r *flow.Record) []byte {
	if !r.Src.IsValid() {
		// Damage in the capture file itself: there is no packet to take a
		// time or addresses from.
		b = append(b, fmt.Sprintf("%6d %11s %21s    %-21s %s ", r.Frame, "-", "-", "", "-")...)
	} else {
		b = append(b, fmt.Sprintf("%6d %11.6f %21s -> %-21s %s ", r.Frame, r.Time.Sub(p.start).Seconds(),
			r.Src, r.Dst, r.Dir)...)
	}
	switch r.Kind {
	case flow.KindGameSpy:
		g := r.GameSpy
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
	if r.Warning != "" {
		b = append(b, "  "...)
		b = append(b, p.pal.warn("warning: "+r.Warning)...)
	}
	if r.Err != nil {
		b = append(b, "  "...)
		b = append(b, p.pal.err("error: "+r.Err.Error())...)
	}
	return b
}

func (p *DecodePrinter) appendMessage(b []byte, r *flow.Record) []byte {
	m := r.Msg
	b = append(b, fmt.Sprintf("peer=%02X %d/%d %s", r.Peer, r.MsgIndex+1, r.MsgCount, m.Type)...)
	if m.Type == dissect.TypeAck {
		b = append(b, fmt.Sprintf(" seq=%d flags=%#02x", m.Seq, m.AckFlags)...)
		if m.AckFlags&dissect.AckFragment != 0 {
			b = append(b, fmt.Sprintf(" frag=%d", m.AckFragIndex)...)
		}
		return append(b, " ("+m.AckChannel().String()+")"...)
	}
	if m.Reliable {
		b = append(b, fmt.Sprintf(" R seq=%d", m.Seq)...)
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
		b = append(b, p.pal.name(g.Opcode().String())...)
		if s := g.String(); s != "" {
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
		b = append(b, "  "...)
		b = append(b, r.Control.String()...)
	}
	return b
}

// appendFields writes the game message's fields one per line, indented, in
// the JSON form's key order (for -V).
func (p *DecodePrinter) appendFields(b []byte, r *flow.Record) []byte {
	var v any
	switch {
	case r.Game != nil:
		v = r.Game.Msg
	case r.Control != nil:
		v = r.Control
	case r.GameSpy != nil:
		v = r.GameSpy
	case r.Kind == flow.KindDamaged:
		return append(b, fmt.Sprintf("         raw: %X\n", r.Raw)...)
	default:
		return b
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return append(b, fmt.Sprintf("         (fields: %v)\n", err)...)
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil {
		return append(b, "         "+string(raw)+"\n"...)
	}
	keys := jsonKeyOrder(raw)
	for _, k := range keys {
		b = append(b, fmt.Sprintf("         %s: %s\n", k, obj[k])...)
	}
	return b
}

// jsonKeyOrder returns the top-level keys of a JSON object in document
// order (encoding/json keeps struct field order; a map would lose it).
func jsonKeyOrder(raw []byte) []string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	var keys []string
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			break
		}
		k, _ := t.(string)
		keys = append(keys, k)
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			break
		}
	}
	if len(keys) == 0 {
		var m map[string]any
		_ = json.Unmarshal(raw, &m)
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
	}
	return keys
}

// AppendRecordJSON appends the NDJSON object for r (without newline).
func AppendRecordJSON(b []byte, r *flow.Record) []byte {
	b = append(b, `{"frame":`...)
	b = strconv.AppendInt(b, int64(r.Frame), 10)
	b = append(b, `,"time":`...)
	b = strconv.AppendQuote(b, r.Time.UTC().Format(time.RFC3339Nano))
	b = append(b, `,"src":`...)
	b = strconv.AppendQuote(b, r.Src.String())
	b = append(b, `,"dst":`...)
	b = strconv.AppendQuote(b, r.Dst.String())
	b = append(b, `,"dir":`...)
	b = strconv.AppendQuote(b, r.Dir.String())
	switch r.Kind {
	case flow.KindGameSpy:
		gs, _ := json.Marshal(r.GameSpy)
		b = append(b, `,"gamespy":`...)
		b = append(b, gs...)
	case flow.KindDamaged:
		b = append(b, `,"peer":`...)
		b = strconv.AppendInt(b, int64(r.Peer), 10)
		b = append(b, `,"msg":`...)
		b = strconv.AppendInt(b, int64(r.MsgIndex), 10)
		b = append(b, `,"raw":"`...)
		b = hex.AppendEncode(b, r.Raw)
		b = append(b, '"')
	case flow.KindMessage:
		b = appendMessageJSON(b, r)
	}
	if r.Warning != "" {
		b = append(b, `,"warning":`...)
		b = strconv.AppendQuote(b, r.Warning)
	}
	if r.Err != nil {
		b = append(b, `,"error":`...)
		b = strconv.AppendQuote(b, r.Err.Error())
	}
	return append(b, '}')
}

func appendMessageJSON(b []byte, r *flow.Record) []byte {
	m := r.Msg
	b = append(b, `,"peer":`...)
	b = strconv.AppendInt(b, int64(r.Peer), 10)
	b = append(b, `,"msg":`...)
	b = strconv.AppendInt(b, int64(r.MsgIndex), 10)
	b = append(b, `,"type":`...)
	b = strconv.AppendInt(b, int64(m.Type), 10)
	b = append(b, `,"type_name":`...)
	b = strconv.AppendQuote(b, m.Type.String())
	if m.Type == dissect.TypeAck {
		b = append(b, `,"seq":`...)
		b = strconv.AppendInt(b, int64(m.Seq), 10)
		b = append(b, `,"ack_flags":`...)
		b = strconv.AppendInt(b, int64(m.AckFlags), 10)
		if m.AckFlags&dissect.AckFragment != 0 {
			b = append(b, `,"ack_fragment":`...)
			b = strconv.AppendInt(b, int64(m.AckFragIndex), 10)
		}
		return b
	}
	b = append(b, `,"reliable":`...)
	b = strconv.AppendBool(b, m.Reliable)
	if m.Ordered {
		b = append(b, `,"ordered":true`...)
	}
	if m.Reliable {
		b = append(b, `,"seq":`...)
		b = strconv.AppendInt(b, int64(m.Seq), 10)
	}
	if m.Fragment {
		b = append(b, `,"fragment":{"index":`...)
		b = strconv.AppendInt(b, int64(m.FragIndex), 10)
		if m.HasTotal() {
			b = append(b, `,"total":`...)
			b = strconv.AppendInt(b, int64(m.FragTotal), 10)
		}
		if r.DuplicateFragment {
			b = append(b, `,"duplicate":true`...)
		}
		b = append(b, '}')
	}
	if m.Legacy {
		b = append(b, `,"legacy_header":true`...)
	}
	switch {
	case r.Game != nil:
		g := r.Game.Msg
		b = append(b, `,"opcode":`...)
		b = strconv.AppendInt(b, int64(g.Opcode()), 10)
		b = append(b, `,"name":`...)
		b = strconv.AppendQuote(b, g.Opcode().String())
		if r.Reassembled > 0 {
			b = append(b, `,"reassembled":`...)
			b = strconv.AppendInt(b, int64(r.Reassembled), 10)
		}
		if fields, err := json.Marshal(g); err == nil {
			b = append(b, `,"fields":`...)
			b = append(b, fields...)
		}
		if len(r.Game.Unparsed) > 0 {
			b = append(b, `,"unparsed":"`...)
			b = hex.AppendEncode(b, r.Game.Unparsed)
			b = append(b, '"')
		}
	case r.Control != nil:
		if c, err := json.Marshal(r.Control); err == nil {
			b = append(b, `,"control":`...)
			b = append(b, c...)
		}
		if len(r.Control.Extra) > 0 {
			b = append(b, `,"unparsed":"`...)
			b = hex.AppendEncode(b, r.Control.Extra)
			b = append(b, '"')
		}
	}
	return b
}
