package game

import (
	"fmt"
	"math"
	"strconv"
	"testing"

	"github.com/bcwire/bcwire/internal/gentab"
	"github.com/bcwire/bcwire/internal/golden"
)

// TestGeneratedTables makes the package's byte-indexed text tables as their
// definitions say and compares them with tables_gen.go, which holds them
// as literals so that no command builds them at start-up (-update rewrites
// it).
func TestGeneratedTables(t *testing.T) {
	var flagsText, flagsJSON, pct, fraction, condition, opcode [256]string
	for i := range 256 {
		flagsText[i] = string(StateFlags(i).appendNames(nil))
		flagsJSON[i] = string(StateFlags(i).appendJSONForm(nil))
		pct[i] = strconv.Itoa(i*100/255) + "%"
		fraction[i] = strconv.FormatFloat(math.Round(float64(i)/255*1000)/1000, 'f', -1, 64)
		condition[i] = string(appendUint(nil, uint64(i))) + `,"fraction":` + fraction[i]
		switch o, n := Opcode(i), opcodeNames[Opcode(i)]; {
		case n != "":
			opcode[i] = n
		case o >= MaxMessageTypes:
			opcode[i] = fmt.Sprintf("custom(%#02x)", uint8(o))
		default:
			opcode[i] = fmt.Sprintf("unknown(%#02x)", uint8(o))
		}
	}
	var start []string
	for e := range 256 {
		k := -1
		if e != 0 && e != 255 {
			h := math.Ldexp(1, e-127-24)
			for j, p := range shortPow10 {
				if h*p > 0.5 {
					k = j
					break
				}
			}
		}
		start = append(start, strconv.Itoa(k))
	}
	var ships, shipsText [maxPlayerSlots]string
	for s := range ships {
		ships[s] = string(PlayerObjectID(s).appendJSONLong(nil))
		shipsText[s] = string(PlayerObjectID(s).appendStringLong(nil))
	}
	src := gentab.Source("game", "TestGeneratedTables (tables_test.go)",
		gentab.Table{Name: "shortStart", Type: "int8", Doc: "shortStart is appendShortF32's first level for each biased float32 exponent.", Elems: start},
		gentab.Strings("playerShipJSON", "playerShipJSON is ObjectID.AppendJSON of each player slot's ship.", ships[:]),
		gentab.Strings("playerShipText", "playerShipText is ObjectID.AppendString of each player slot's ship.", shipsText[:]),
		gentab.Strings("stateFlagsText", "stateFlagsText is StateFlags.String of each flags byte (appendNames).", flagsText[:]),
		gentab.Strings("stateFlagsJSON", "stateFlagsJSON is StateFlags.AppendJSON of each flags byte (appendJSONForm).", flagsJSON[:]),
		gentab.Strings("pctText", "pctText is each condition byte as a whole percentage of 255, rounded down.", pct[:]),
		gentab.Strings("conditionFraction", "conditionFraction is each condition byte as a fraction of 255, rounded to\nthree decimals, in JSON.", fraction[:]),
		gentab.Strings("conditionJSON", "conditionJSON is each condition byte's JSON and its fraction's.", condition[:]),
		gentab.Strings("opcodeText", "opcodeText is Opcode.String of each byte.", opcode[:]),
	)
	golden.Compare(t, "tables_gen.go", src, *update)
}
