package jsonenc

import (
	"flag"
	"fmt"
	"strconv"
	"testing"

	"github.com/bcwire/bcwire/internal/gentab"
	"github.com/bcwire/bcwire/internal/golden"
)

var updateTables = flag.Bool("update", false, "rewrite tables_gen.go")

// TestGeneratedTables makes the digit tables as their definitions say and
// compares them with tables_gen.go, which holds them as literals so that
// no command builds them at start-up (-update rewrites it).
func TestGeneratedTables(t *testing.T) {
	var pairs []string
	for v := range 100 {
		pairs = append(pairs, fmt.Sprintf("%#04x", uint16(DigitPairs[2*v])|uint16(DigitPairs[2*v+1])<<8))
	}
	var small []string
	for v := range 1000 {
		s := strconv.Itoa(v)
		var w uint32
		for i := len(s) - 1; i >= 0; i-- {
			w = w<<8 | uint32(s[i])
		}
		small = append(small, fmt.Sprintf("%#08x", w|uint32(len(s))<<24))
	}
	src := gentab.Source("jsonenc", "TestGeneratedTables (tables_test.go)",
		gentab.Table{Name: "PairWords", Type: "uint16", Doc: "PairWords is each two-digit decimal's digits in a little-endian word.", Elems: pairs},
		gentab.Table{Name: "smallDecimals", Type: "uint32", Doc: "smallDecimals is each of 0 to 999 in decimal, in a word with its length on top.", Elems: small})
	golden.Compare(t, "tables_gen.go", src, *updateTables)
}
