package report

import (
	"flag"
	"fmt"
	"strconv"
	"testing"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/internal/gentab"
	"github.com/bcwire/bcwire/internal/golden"
)

var updateTables = flag.Bool("update", false, "rewrite tables_gen.go")

// TestGeneratedTables makes the byte-indexed texts as their definitions say
// and compares them with tables_gen.go, which holds them as literals so
// that no command builds them at start-up (-update rewrites it). The
// names come from dissect and game: a renamed type or opcode shows here.
func TestGeneratedTables(t *testing.T) {
	var dir, typ, op, hex, flags [256]string
	for i := range 256 {
		dir[i] = strconv.Quote(game.Direction(i).String())
		typ[i] = strconv.Quote(dissect.TransportType(i).String())
		op[i] = strconv.Quote(game.Opcode(i).String())
		hex[i] = fmt.Sprintf("%02X", i)
		flags[i] = fmt.Sprintf("%#02x", i)
	}
	src := gentab.Source("report", "TestGeneratedTables (tables_test.go)",
		gentab.Strings("dirNameJSON", "dirNameJSON is each game.Direction's name, quoted.", dir[:]),
		gentab.Strings("transportNameJSON", "transportNameJSON is each dissect.TransportType's name, quoted.", typ[:]),
		gentab.Strings("opcodeNameJSON", "opcodeNameJSON is each game.Opcode's name, quoted.", op[:]),
		gentab.Strings("hexByteUpper", "hexByteUpper is each byte as %02X.", hex[:]),
		gentab.Strings("ackFlagsText", "ackFlagsText is each byte as %#02x.", flags[:]))
	golden.Compare(t, "tables_gen.go", src, *updateTables)
}
