package report

import "github.com/olekukonko/tablewriter/tw"

// plainTable writes what table writes for a pipe (no color) when every
// cell is printable ASCII without spaces at its ends, and reports whether
// it did: borderless rows, each cell padded by one space either side to
// its column's widest cell and aligned in it, a line of dashes under the
// header, lines trimmed on the right and blank ones left out. tablewriter
// made and measured several strings and contexts per cell: text stats
// spent most of its time and nearly all of its allocations there (45 MB
// on OpenBC battle x40, 350 KB a session). TestPlainTableMatchesTablewriter
// holds the two to the same bytes.
func (p *StatsPrinter) plainTable(indent string, header []string, align []tw.Align, rows [][]string) bool {
	if p.color || len(align) != len(header) || len(rows) == 0 {
		return false // (with no rows tablewriter draws no line under the header)
	}
	for _, a := range align {
		if a != tw.AlignLeft && a != tw.AlignRight {
			return false
		}
	}
	widths := p.widths[:0]
	for i, h := range header {
		if !plainCell(h) {
			return false
		}
		w := len(h)
		for _, row := range rows {
			if len(row) != len(header) || !plainCell(row[i]) {
				return false
			}
			w = max(w, len(row[i]))
		}
		widths = append(widths, w)
	}
	p.widths = widths
	p.plainRow(indent, header, align)
	b := append(p.line[:0], indent...)
	for _, w := range widths {
		for range w + 2 {
			b = append(b, '-')
		}
	}
	p.line = append(b, '\n')
	p.w.Write(p.line)
	for _, row := range rows {
		p.plainRow(indent, row, align)
	}
	return true
}

// plainRow writes one row of plainTable (nothing if it is blank).
func (p *StatsPrinter) plainRow(indent string, cells []string, align []tw.Align) {
	b := append(p.line[:0], indent...)
	start := len(b)
	for i, c := range cells {
		pad := p.widths[i] - len(c)
		b = append(b, ' ')
		if align[i] == tw.AlignRight {
			b = appendSpaces(b, pad)
			b = append(b, c...)
		} else {
			b = append(b, c...)
			b = appendSpaces(b, pad)
		}
		b = append(b, ' ')
	}
	for len(b) > start && b[len(b)-1] == ' ' {
		b = b[:len(b)-1]
	}
	p.line = b
	if len(b) == start {
		return // table skips blank lines
	}
	p.w.Write(append(b, '\n'))
}

func appendSpaces(b []byte, n int) []byte {
	for range n {
		b = append(b, ' ')
	}
	return b
}

// plainCell reports whether c is printable ASCII with no space at either
// end (tablewriter trims those).
func plainCell(c string) bool {
	for i := 0; i < len(c); i++ {
		if c[i] < 0x20 || c[i] > 0x7E {
			return false
		}
	}
	return len(c) == 0 || c[0] != ' ' && c[len(c)-1] != ' '
}
