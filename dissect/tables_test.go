package dissect

import (
	"flag"
	"testing"

	"github.com/bcwire/bcwire/internal/gentab"
	"github.com/bcwire/bcwire/internal/golden"
)

var updateTables = flag.Bool("update", false, "rewrite tables_gen.go")

// TestGeneratedTables makes the direction component texts as their
// definitions say and compares them with tables_gen.go, which holds them
// as literals so that no command builds them at start-up (-update
// rewrites it).
func TestGeneratedTables(t *testing.T) {
	var text, js [256]string
	for i := range 256 {
		text[i] = string(AppendFixed(nil, float32(int8(i))/127, 2))
		js[i] = string(appendJSONFloat(nil, float32(int8(i))/127))
	}
	src := gentab.Source("dissect", "TestGeneratedTables (tables_test.go)",
		gentab.Strings("dirComponentText", "dirComponentText is each direction byte's component as text.", text[:]),
		gentab.Strings("dirComponentJSON", "dirComponentJSON is each direction byte's component as JSON.", js[:]))
	golden.Compare(t, "tables_gen.go", src, *updateTables)
}
