package game

import (
	"github.com/bcwire/bcwire/internal/fixture"
	"testing"
)

// FuzzEveryOpcode runs every opcode byte, registered or not, through the
// decoder in both directions: no panic, a message always, and an error-free,
// fully consumed decode re-encodes to exactly the input (see fuzzOne). The
// per-family targets beside it seed with real bytes; this one makes sure no
// opcode is left out.
func FuzzEveryOpcode(f *testing.F) {
	for op := range 256 {
		f.Add(uint8(op), []byte{})
		f.Add(uint8(op), []byte{0, 0, 0, 0, 1, 0, 0, 0})
	}
	for _, c := range realCases {
		b := fixture.Unhex(f, c.hex)
		f.Add(b[0], b[1:])
	}
	f.Fuzz(func(t *testing.T, op uint8, body []byte) {
		fuzzOne(t, Opcode(op), body)
	})
}
