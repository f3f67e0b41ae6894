package report

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"time"

	"github.com/bcwire/bcwire/session"
	"github.com/bcwire/bcwire/session/measure"
	"github.com/fatih/color"
	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/pkg/twcache"
	"github.com/olekukonko/tablewriter/pkg/twwidth"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// StatsPrinter writes `bcwire stats` output: opcode statistics per
// direction, transport-type counts and GameSpy counts, for each session as
// it ends and for the whole input at the end. It streams, so a capture with
// many sessions does not make it hold them all. Call Session for each
// session, then Totals once.
//
// The text form is a set of tables (colored when Color is set); the JSON
// form is one object:
//
//	{"sessions":[{"file","server","client","slot","name","start","end","duration_s",
//	              "opcodes":[…],"transport":[…],"nonstock":[…] when any}, …],
//	 "files":[…], "start", "end", "duration_s", "session_count",
//	 "datagrams":[{"dir","count","damaged"}], "lost", "unplaced",
//	 "opcodes":[{"dir","opcode","hex","name","count","bytes","share","byte_share","per_min","per_15min"}],
//	 "transport":[{"dir","type","hex","name","count","bytes"}],
//	 "gamespy":[{"kind","count"}],
//	 "nonstock":[{"dir","name","count","what","evidence"}] (only when there are non-stock messages)}
//
// Rows come in a fixed order (direction, then opcode or type number; GameSpy
// kinds by name), so the output of a capture never changes.
type StatsPrinter struct {
	w            *bufio.Writer
	json         bool
	color        bool
	perSession   bool
	sessions     int
	pal          palette
	sectionColor func(a ...interface{}) string
	jsonBuf      []byte // one session's JSON, reused
	// One session's rows, reused: each session's are written out
	// before the next session's are built.
	opcodeRows    []session.OpcodeRow
	transportRows []session.TransportRow
	nonStockRows  []session.NonStockRow
	memo          *rowMemo // the JSON of row parts that repeat
	measures      []FileMeasures

	// One table and its buffer serve every table printed: a new
	// tablewriter.Table allocates a 10,240-entry cache map (about 1.2 MB),
	// which per session was most of what text stats allocated.
	tbl    *tablewriter.Table
	tblBuf bytes.Buffer
	// plainTable's column widths and line, reused.
	widths []int
	line   []byte
}

// NewStatsPrinter returns a printer writing to w: JSON when asJSON, else text
// (colored when useColor). perSession adds each session's own tables.
func NewStatsPrinter(w io.Writer, asJSON, useColor, perSession bool) *StatsPrinter {
	p := &StatsPrinter{w: bufio.NewWriterSize(w, 64<<10), json: asJSON, color: useColor && !asJSON, perSession: perSession}
	p.pal = newPalette(p.color)
	p.sectionColor = p.pal.name
	return p
}

// newPalette is the decode printer's palette, shared by the reports.
func newPalette(useColor bool) palette {
	plain := func(a ...interface{}) string { return fmt.Sprint(a...) }
	if !useColor {
		return palette{plain, plain, plain, plain}
	}
	mk := func(attrs ...color.Attribute) func(a ...interface{}) string {
		c := color.New(attrs...)
		c.EnableColor()
		return c.SprintFunc()
	}
	return palette{mk(color.FgCyan, color.Bold), mk(color.FgYellow), mk(color.FgRed, color.Bold), mk(color.Faint)}
}

// sessionStatsJSON is one session's entry in the JSON form.
type sessionStatsJSON struct {
	File      string                 `json:"file"`
	Server    string                 `json:"server"`
	Client    string                 `json:"client"`
	Slot      int                    `json:"slot"`
	Name      string                 `json:"name"`
	Start     time.Time              `json:"start"`
	End       time.Time              `json:"end"`
	Duration  float64                `json:"duration_s"`
	EndReason session.EndReason      `json:"end_reason"`
	Opcodes   []session.OpcodeRow    `json:"opcodes"`
	Transport []session.TransportRow `json:"transport"`
	NonStock  []session.NonStockRow  `json:"nonstock,omitempty"`
}

type datagramsJSON struct {
	Dir     string `json:"dir"`
	Count   int    `json:"count"`
	Damaged int    `json:"damaged"`
}

type totalsJSON struct {
	Files        []string               `json:"files"`
	Start        *time.Time             `json:"start"`
	End          *time.Time             `json:"end"`
	Duration     float64                `json:"duration_s"`
	SessionCount int                    `json:"session_count"`
	Datagrams    []datagramsJSON        `json:"datagrams"`
	Lost         int                    `json:"lost"`
	Unplaced     int                    `json:"unplaced"`
	Opcodes      []session.OpcodeRow    `json:"opcodes"`
	Transport    []session.TransportRow `json:"transport"`
	GameSpy      []session.GameSpyRow   `json:"gamespy"`
	Measures     []FileMeasures         `json:"measures,omitempty"`
	NonStock     []session.NonStockRow  `json:"nonstock,omitempty"`
}

// FileMeasures are one capture's wire measures (session/measure), as
// `stats --json` lists them.
type FileMeasures struct {
	File string `json:"file"`
	*measure.Measures
}

// Measures sets the captures' measures the JSON totals list.
func (p *StatsPrinter) Measures(m []FileMeasures) { p.measures = m }

// Session writes one session's statistics (nothing in text mode without
// perSession).
func (p *StatsPrinter) Session(file string, s *session.Session) error {
	p.sessions++
	if p.json {
		if p.sessions == 1 {
			p.w.WriteString("{\"sessions\":[\n")
		} else {
			p.w.WriteString(",\n")
		}
		c := &s.Traffic
		p.rows(c)
		v := sessionStatsJSON{File: file, Server: s.Server.String(), Client: s.Client.String(), Slot: s.Slot,
			Name: s.Name, Start: s.Start, End: sessionEnd(s), Duration: seconds(s.Duration()), EndReason: s.EndReason,
			Opcodes: nonNilRows(p.opcodeRows), Transport: nonNilRows(p.transportRows), NonStock: p.nonStockRows}
		if p.memo == nil {
			p.memo = new(rowMemo)
		}
		b, ok := appendSessionStats(p.jsonBuf[:0], &v, p.memo)
		if !ok {
			return p.writeJSON(v)
		}
		p.jsonBuf = b
		_, err := p.w.Write(b)
		return err
	}
	if !p.perSession {
		return nil
	}
	title := fmt.Sprintf("Session %s on %s", s.Client, s.Server)
	if s.Slot >= 0 {
		title += fmt.Sprintf("  slot %d", s.Slot)
	}
	if s.Name != "" {
		title += fmt.Sprintf("  %q", s.Name)
	}
	fmt.Fprintf(p.w, "%s\n", p.sectionColor(title))
	fmt.Fprintf(p.w, "  %s: %s - %s (%s), %s\n", file, clock(s.Start), clock(sessionEnd(s)),
		roundDur(s.Duration()), endText(s))
	p.counts(&s.Traffic, "  ")
	_, err := p.w.Write([]byte{'\n'})
	return err
}

// rows builds c's rows into the printer's slices.
func (p *StatsPrinter) rows(c *session.Counts) {
	p.opcodeRows = c.AppendOpcodeRows(p.opcodeRows[:0])
	p.transportRows = c.AppendTransportRows(p.transportRows[:0])
	p.nonStockRows = c.AppendNonStockRows(p.nonStockRows[:0])
}

func sessionEnd(s *session.Session) time.Time {
	if s.Phases.End != nil {
		return *s.Phases.End
	}
	return s.LastSeen
}

func endText(s *session.Session) string {
	switch s.EndReason {
	case session.EndOpen:
		return "still open when the capture ended"
	case session.EndDisconnect:
		if s.EndBy != "" {
			return "ended: disconnect by the " + s.EndBy
		}
	}
	return "ended: " + string(s.EndReason)
}

// Totals writes the statistics of everything and ends the output; sessions
// is the number of sessions found.
func (p *StatsPrinter) Totals(files []string, c *session.Counts, sessions int) error {
	if p.json {
		if p.sessions == 0 {
			p.w.WriteString("{\"sessions\":[")
		} else {
			p.w.WriteString("\n")
		}
		v := totalsJSON{Files: files, Duration: seconds(c.Duration()), SessionCount: sessions, Measures: p.measures,
			Lost: c.Lost, Unplaced: c.Unplaced,
			Opcodes: nonNilRows(c.OpcodeRows()), Transport: nonNilRows(c.TransportRows()), GameSpy: c.GameSpyRows(),
			NonStock: c.NonStockRows()}
		if !c.First.IsZero() {
			v.Start, v.End = &c.First, &c.Last
		}
		for d, dir := range session.Dirs {
			v.Datagrams = append(v.Datagrams, datagramsJSON{Dir: dir.String(), Count: c.Datagrams[d], Damaged: c.Damaged[d]})
		}
		// The totals object's fields follow the sessions array. (Encode
		// writes nothing when it fails.)
		enc := json.NewEncoder(&totalsWriter{w: p.w})
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			return err
		}
		return p.Flush()
	}
	title := fmt.Sprintf("Total: %d file(s), %d session(s)", len(files), sessions)
	fmt.Fprintf(p.w, "%s\n", p.sectionColor(title))
	if c.First.IsZero() {
		fmt.Fprintf(p.w, "  no traffic\n")
	} else {
		fmt.Fprintf(p.w, "  %s - %s (%s)\n", clock(c.First), clock(c.Last), roundDur(c.Duration()))
	}
	fmt.Fprintf(p.w, "  datagrams: %d C->S, %d S->C; damaged: %d C->S, %d S->C", c.Datagrams[0], c.Datagrams[1], c.Damaged[0], c.Damaged[1])
	if c.Lost > 0 {
		fmt.Fprintf(p.w, "; %s", p.pal.err(fmt.Sprintf("%d incomplete fragment sets", c.Lost)))
	}
	if c.Unplaced > 0 {
		fmt.Fprintf(p.w, "; %s", p.pal.err(fmt.Sprintf("%d damaged capture records", c.Unplaced)))
	}
	if n := c.NonStockTotal(); n > 0 {
		fmt.Fprintf(p.w, "; non-stock (intact): %d messages", n)
	}
	p.w.WriteString("\n")
	p.counts(c, "  ")
	if rows := c.GameSpyRows(); len(rows) > 0 {
		fmt.Fprintf(p.w, "  GameSpy datagrams\n")
		var cells [][]string
		for _, r := range rows {
			cells = append(cells, []string{r.Kind, strconv.Itoa(r.Count)})
		}
		p.table("  ", []string{"KIND", "COUNT"}, []tw.Align{tw.AlignLeft, tw.AlignRight}, cells)
	}
	return p.Flush()
}

// totalsWriter writes the totals object an Encoder writes to it as the
// fields that follow the sessions array: "]," in place of its "{", and
// without the newline that ends it (the only one: encoding/json escapes
// those in strings). The object goes straight to the output: through a
// buffer of its own as well (marshalJSON) the buffers grew by 344 KB on
// battle x100 (with the measures), 256 KB now.
type totalsWriter struct {
	w       *bufio.Writer
	started bool
}

func (t *totalsWriter) Write(b []byte) (int, error) {
	n := len(b)
	if !t.started && len(b) > 0 {
		t.started = true
		t.w.WriteString("],")
		b = b[1:]
	}
	_, err := t.w.Write(bytes.TrimRight(b, "\n"))
	return n, err
}

// Flush writes out buffered output.
func (p *StatsPrinter) Flush() error { return p.w.Flush() }

func (p *StatsPrinter) writeJSON(v any) error {
	b, err := marshalJSON(v)
	if err != nil {
		return err
	}
	_, err = p.w.Write(b)
	return err
}

// marshalJSON is json.Marshal without HTML escaping ("C->S" stays readable).
func marshalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

func nonNilRows[T any](rows []T) []T {
	if rows == nil {
		return []T{}
	}
	return rows
}

// counts writes the opcode and transport tables of c.
func (p *StatsPrinter) counts(c *session.Counts, indent string) {
	p.rows(c)
	rows := p.opcodeRows
	for d, dir := range session.Dirs {
		n, bytes := c.GameMessages(d)
		if n == 0 {
			continue
		}
		fmt.Fprintf(p.w, "%sGame messages %s: %d messages, %d bytes\n", indent, dirWords(dir.String()), n, bytes)
		var cells [][]string
		for _, r := range rows {
			if r.Dir != dir.String() {
				continue
			}
			cells = append(cells, []string{r.Hex, r.Name, strconv.Itoa(r.Count), strconv.Itoa(r.Bytes),
				percent(r.Share), rate(r.PerMinute), rate(r.Per15Min)})
		}
		p.table(indent, []string{"OPCODE", "NAME", "COUNT", "BYTES", "SHARE", "PER MIN", "PER 15 MIN"},
			[]tw.Align{tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight, tw.AlignRight}, cells)
	}
	trows := p.transportRows
	if len(trows) == 0 {
		return
	}
	fmt.Fprintf(p.w, "%sTransport messages\n", indent)
	var cells [][]string
	for _, r := range trows {
		cells = append(cells, []string{r.Dir, r.Hex, r.Name, strconv.Itoa(r.Count), strconv.Itoa(r.Bytes)})
	}
	p.table(indent, []string{"DIR", "TYPE", "NAME", "COUNT", "BYTES"},
		[]tw.Align{tw.AlignLeft, tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignRight}, cells)
	p.nonStock(indent)
}

// nonStock writes the table of the non-stock messages (intact, not in
// stock's form) of the counts p.rows built, by direction and registry
// form; nothing when there are none.
func (p *StatsPrinter) nonStock(indent string) {
	rows := p.nonStockRows
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(p.w, "%sNon-stock messages (intact, not in stock's form; not damage)\n", indent)
	var cells [][]string
	for _, r := range rows {
		cells = append(cells, []string{r.Dir, r.Name, strconv.Itoa(r.Count), r.What})
	}
	p.table(indent, []string{"DIR", "KIND", "COUNT", "WHAT"},
		[]tw.Align{tw.AlignLeft, tw.AlignLeft, tw.AlignRight, tw.AlignLeft}, cells)
}

func dirWords(dir string) string {
	if dir == "C->S" {
		return "client to server"
	}
	return "server to client"
}

// table renders one table, each line indented: a light box with colored
// headers for a terminal, borderless ASCII for pipes and golden files. It
// streams the rows with widths measured here: a batch Render measures and
// lays out every cell twice over (contexts, merges, width normalising).
func (p *StatsPrinter) table(indent string, header []string, align []tw.Align, rows [][]string) {
	if p.plainTable(indent, header, align, rows) {
		return
	}
	p.tablewriterTable(indent, header, align, rows)
}

// tablewriterTable is table by tablewriter.
func (p *StatsPrinter) tablewriterTable(indent string, header []string, align []tw.Align, rows [][]string) {
	if p.tbl == nil {
		p.tbl = p.newTable()
	}
	t := p.tbl
	p.tblBuf.Reset()
	t.Options(tablewriter.WithHeaderAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithRowAlignmentConfig(tw.CellAlignment{PerColumn: align}),
		tablewriter.WithColumnWidths(p.columnWidths(header, rows)))
	err := t.Start()
	if err == nil {
		t.Header(toAny(header)...)
		for _, row := range rows {
			if err = t.Append(row); err != nil {
				break
			}
		}
		if cerr := t.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		fmt.Fprintf(&p.tblBuf, "(table: %v)\n", err)
	}
	for _, line := range bytes.SplitAfter(p.tblBuf.Bytes(), []byte{'\n'}) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		p.w.WriteString(indent)
		p.w.Write(bytes.TrimRight(line, " \n"))
		p.w.WriteByte('\n')
	}
}

// newTable makes the printer's one table: colored, with light borders and
// bold headers for a terminal, borderless ASCII for pipes and golden files.
func (p *StatsPrinter) newTable() *tablewriter.Table {
	// The renderer measures every padded cell it formats, a new string
	// each time, so the width cache mostly misses and evicts: measuring
	// short ASCII directly costs a few more instructions but less time
	// than its locked map and LRU list. (Only stats draws tables, so this
	// process-wide setting changes nothing else.)
	twwidth.SetCacheCapacity(0)
	var r tw.Renderer
	if p.color {
		r = renderer.NewColorized(renderer.ColorizedConfig{
			Header: renderer.Tint{FG: renderer.Colors{color.FgCyan, color.Bold}},
			Column: renderer.Tint{FG: renderer.Colors{color.Reset}},
			Border: renderer.Tint{FG: renderer.Colors{color.Faint}}, Separator: renderer.Tint{FG: renderer.Colors{color.Faint}},
			Symbols: tw.NewSymbols(tw.StyleLight),
		})
	} else {
		r = renderer.NewBlueprint(tw.Rendition{
			Borders: tw.BorderNone,
			Symbols: tw.NewSymbols(tw.StyleASCII),
			Settings: tw.Settings{
				Separators: tw.Separators{BetweenColumns: tw.Off, BetweenRows: tw.Off},
				Lines:      tw.Lines{ShowHeaderLine: tw.On},
			},
		})
	}
	return tablewriter.NewTable(&p.tblBuf, tablewriter.WithRenderer(r),
		tablewriter.WithStreaming(tw.StreamConfig{Enable: true}),
		tablewriter.WithHeaderAutoFormat(tw.Off),
		tablewriter.WithRowAutoWrap(tw.WrapNone),
		// Cells are strings: the stringer cache is never used, and the
		// default one is a 1.2 MB map.
		tablewriter.WithStringerCacheCustom(twcache.NewLRU[reflect.Type, reflect.Value](1)),
	)
}

// columnWidths is each column's widest cell plus its one-space padding on
// either side: streaming tables are told their widths instead of measuring
// every cell a second time.
func (p *StatsPrinter) columnWidths(header []string, rows [][]string) tw.Mapper[int, int] {
	widths := tw.NewMapper[int, int]()
	for i, h := range header {
		w := twwidth.Width(h)
		for _, row := range rows {
			w = max(w, twwidth.Width(row[i]))
		}
		widths.Set(i, w+2)
	}
	return widths
}

func toAny(s []string) []any {
	a := make([]any, len(s))
	for i, v := range s {
		a[i] = v
	}
	return a
}

func percent(f float64) string { return strconv.FormatFloat(f*100, 'f', 1, 64) + "%" }

func rate(f float64) string {
	if f == 0 {
		return "-"
	}
	return strconv.FormatFloat(f, 'f', 1, 64)
}

func seconds(d time.Duration) float64 { return math.Round(d.Seconds()*1e3) / 1e3 }

func roundDur(d time.Duration) string { return d.Round(time.Millisecond).String() }

// clock shows a capture time in UTC to the millisecond.
func clock(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05.000 UTC") }
