package report

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/olekukonko/tablewriter/tw"
)

// plainTable writes the bytes tablewriter writes, on the tables of stats
// and on random ones: cells of printable ASCII with spaces inside, empty
// cells, blank rows, cells wider than their headers and narrower.
func TestPlainTableMatchesTablewriter(t *testing.T) {
	render := func(plain bool, indent string, header []string, align []tw.Align, rows [][]string) (string, bool) {
		var out bytes.Buffer
		p := NewStatsPrinter(&out, false, false, true)
		did := true
		if plain {
			did = p.plainTable(indent, header, align, rows)
		} else {
			p.tablewriterTable(indent, header, align, rows)
		}
		p.Flush()
		return out.String(), did
	}
	check := func(t *testing.T, indent string, header []string, align []tw.Align, rows [][]string) {
		t.Helper()
		want, _ := render(false, indent, header, align, rows)
		got, did := render(true, indent, header, align, rows)
		if !did {
			t.Fatalf("plainTable declined header %q rows %q", header, rows)
		}
		if got != want {
			t.Fatalf("header %q rows %q:\n%s\nwant (tablewriter)\n%s", header, rows, got, want)
		}
	}
	L, R := tw.AlignLeft, tw.AlignRight
	check(t, "  ", []string{"OPCODE", "NAME", "COUNT", "BYTES", "SHARE", "PER MIN", "PER 15 MIN"},
		[]tw.Align{L, L, R, R, R, R, R}, [][]string{
			{"0x1C", "StateUpdate", "600", "16416", "93.6%", "1578.3", "23674.8"},
			{"0x03", "ObjCreateTeam", "1", "156", "0.2%", "-", "-"},
		})
	check(t, "  ", []string{"DIR", "KIND", "COUNT", "WHAT"}, []tw.Align{L, L, R, L}, [][]string{
		{"C->S", "disconnect-0x06", "1", "a disconnect sent as transport type 0x06, framed [0x06][len:u8]"},
	})
	check(t, "", []string{"KIND", "COUNT"}, []tw.Align{L, R}, [][]string{{"basic", "3"}, {"", ""}, {"info", "12"}})

	rng := rand.New(rand.NewPCG(1, 2))
	const chars = "abcXYZ019 -_.:%()[]|+*#'\"\\/<>"
	cell := func() string {
		var b strings.Builder
		for range rng.IntN(12) {
			b.WriteByte(chars[rng.IntN(len(chars))])
		}
		return strings.Trim(b.String(), " ")
	}
	for range 500 {
		cols := 1 + rng.IntN(6)
		header, align := make([]string, cols), make([]tw.Align, cols)
		for i := range header {
			if header[i] = strings.ToUpper(cell()); header[i] == "" {
				header[i] = "H"
			}
			align[i] = []tw.Align{L, R}[rng.IntN(2)]
		}
		rows := make([][]string, 1+rng.IntN(6))
		for i := range rows {
			rows[i] = make([]string, cols)
			for j := range rows[i] {
				if rng.IntN(4) > 0 {
					rows[i][j] = cell()
				}
			}
		}
		check(t, []string{"", "  ", "    "}[rng.IntN(3)], header, align, rows)
	}
}

// plainTable declines what it does not lay out as tablewriter does: color,
// cells beyond printable ASCII, spaces at a cell's ends, no rows.
func TestPlainTableDeclines(t *testing.T) {
	L := tw.AlignLeft
	for _, c := range []struct {
		color bool
		cell  string
	}{{true, "x"}, {false, "é"}, {false, " x"}, {false, "x "}, {false, "a\tb"}} {
		var out bytes.Buffer
		p := NewStatsPrinter(&out, false, c.color, true)
		if p.plainTable("", []string{"A"}, []tw.Align{L}, [][]string{{c.cell}}) {
			t.Errorf("color %v, cell %q: plainTable did it", c.color, c.cell)
		}
	}
	var out bytes.Buffer
	if NewStatsPrinter(&out, false, false, true).plainTable("", []string{"A"}, []tw.Align{L}, nil) {
		t.Error("a table without rows: plainTable did it")
	}
}
