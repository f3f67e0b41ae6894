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
	var dir, peer, typ, typ0, typ1, op, opFields, hex, flags [256]string
	for i := range 256 {
		dir[i] = strconv.Quote(game.Direction(i).String())
		peer[i] = `,"peer":` + strconv.Itoa(i) + `,"msg":`
		typ[i] = `,"type":` + strconv.Itoa(i) + `,"type_name":` + strconv.Quote(dissect.TransportType(i).String())
		typ0[i] = typ[i] + `,"reliable":false`
		typ1[i] = typ[i] + `,"reliable":true`
		op[i] = `,"opcode":` + strconv.Itoa(i) + `,"name":` + strconv.Quote(game.Opcode(i).String())
		opFields[i] = op[i] + fieldsKey
		hex[i] = fmt.Sprintf("%02X", i)
		flags[i] = fmt.Sprintf("%#02x", i)
	}
	src := gentab.Source("report", "TestGeneratedTables (tables_test.go)",
		gentab.Strings("dirNameJSON", "dirNameJSON is each game.Direction's name, quoted.", dir[:]),
		gentab.Strings("peerMemberJSON", `peerMemberJSON is ,"peer":P,"msg": for each peer byte P.`, peer[:]),
		gentab.Strings("typeMemberJSON", `typeMemberJSON is ,"type":T,"type_name": and dissect.TransportType T's name, quoted.`, typ[:]),
		gentab.Strings("typeReliableJSON0", `typeReliableJSON0 is typeMemberJSON and ,"reliable":false.`, typ0[:]),
		gentab.Strings("typeReliableJSON1", `typeReliableJSON1 is typeMemberJSON and ,"reliable":true.`, typ1[:]),
		gentab.Strings("opcodeMemberJSON", `opcodeMemberJSON is ,"opcode":O,"name": and game.Opcode O's name, quoted.`, op[:]),
		gentab.Strings("opcodeFieldsJSON", `opcodeFieldsJSON is opcodeMemberJSON and ,"fields":.`, opFields[:]),
		gentab.Strings("hexByteUpper", "hexByteUpper is each byte as %02X.", hex[:]),
		gentab.Strings("ackFlagsText", "ackFlagsText is each byte as %#02x.", flags[:]))
	golden.Compare(t, "tables_gen.go", src, *updateTables)
}
