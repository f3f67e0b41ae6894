package dissect

import (
	"flag"
	"fmt"
	"strconv"
	"testing"

	"github.com/bcwire/bcwire/internal/gentab"
	"github.com/bcwire/bcwire/internal/golden"
)

var updateTables = flag.Bool("update", false, "rewrite tables_gen.go")

// TestGeneratedTables makes the direction components (their floats, texts
// and JSON) and the CF16 decades as their definitions say and compares
// them with tables_gen.go, which holds them as literals so that no command
// builds them at start-up (-update rewrites it). The floats are written
// as hexadecimal literals, which hold a float32 exactly.
func TestGeneratedTables(t *testing.T) {
	hexFloat := func(f float32) string { return strconv.FormatFloat(float64(f), 'x', -1, 32) }
	// word is s as a dirWord; Dir3's stores hold seven bytes and a
	// separator.
	word := func(s []byte, most int) string {
		if len(s) > most {
			t.Fatalf("direction component %s longer than %d bytes", s, most)
		}
		var w uint64
		for j := len(s) - 1; j >= 0; j-- {
			w = w<<8 | uint64(s[j])
		}
		return fmt.Sprintf("{%#016x, %d}", w, len(s))
	}
	var comp, text, js [256]string
	for i := range 256 {
		f := float32(int8(i)) / 127
		comp[i] = hexFloat(f)
		text[i] = word(AppendFixed(nil, f, 2), 7)
		js[i] = word(appendJSONFloat(nil, f), 7)
	}
	var decades []string
	lo, hi := float32(0), cf16Base
	for range 8 {
		decades = append(decades, fmt.Sprintf("{lo: %s, span: %s}", hexFloat(lo), hexFloat(hi-lo)))
		lo = hi
		hi = lo * cf16Mult
	}
	src := gentab.Source("dissect", "TestGeneratedTables (tables_test.go)",
		gentab.Table{Name: "dirComponent", Type: "float32", Doc: "dirComponent is each direction byte's component, byte/127 in float32.", Elems: comp[:]},
		gentab.Table{Name: "dirComponentText", Type: "dirWord", Doc: "dirComponentText is each direction byte's component as text, in a word.", Elems: text[:]},
		gentab.Table{Name: "dirComponentJSON", Type: "dirWord", Doc: "dirComponentJSON is each direction byte's component as JSON, in a word.", Elems: js[:]},
		gentab.Table{Name: "cf16Decades", Type: "cf16Decade", Doc: "cf16Decades are the bottom and span of each CF16 scale, in float32.", Elems: decades})
	golden.Compare(t, "tables_gen.go", src, *updateTables)
}
