package game

import (
	"strconv"
	"strings"
)

// ParseOpcode reads an opcode as people type it: its name in any case
// ("StateUpdate", "chat"), or its number in decimal or hex ("28", "0x1C").
func ParseOpcode(s string) (Opcode, bool) {
	if n, err := strconv.ParseUint(s, 0, 8); err == nil {
		return Opcode(n), true
	}
	for o, name := range opcodeNames {
		if strings.EqualFold(name, s) {
			return o, true
		}
	}
	return 0, false
}
