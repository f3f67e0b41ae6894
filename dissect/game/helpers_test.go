package game

// The helpers the tests of this package share.

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"github.com/bcwire/bcwire/internal/fixture"
	"math"
	"strings"
	"testing"
)

// realCase is a game message from real traffic (stock-trace hex quoted in
// seeds/001 or the OpenBC clean-room docs), with a check of every field
// against the values the source states. Opcode test files add theirs with
// addReal in a package-level var, e.g.
//
//	var _ = addReal(realCase{name: "...", source: "seeds/001 ...", dir: ServerToClient,
//		hex: "20 00 08 00 ...", check: func(t *testing.T, m Message) { ... }})
type realCase struct {
	name   string
	source string // where the bytes are quoted
	dir    Direction
	hex    string // the game message, opcode byte first; spaces allowed
	check  func(t *testing.T, m Message)
}

// isIllustration reports whether a case's bytes are a documented example
// written out by hand (a script's expected output) rather than captured
// traffic. Such cases are tested like the others but do not count as real
// bytes for the coverage rule.
func (c realCase) isIllustration() bool { return strings.Contains(c.source, "illustration") }

var realCases []realCase

func addReal(c realCase) bool { realCases = append(realCases, c); return true }

// Test helpers of the object-lifecycle files (prefix lc).

func lcAs[T Message](t *testing.T, m Message) T {
	t.Helper()
	v, ok := m.(T)
	if !ok {
		t.Fatalf("message is %T", m)
	}
	return v
}

func lcWant[T comparable](t *testing.T, what string, got, want T) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %v, want %v", what, got, want)
	}
}

func lcNear(t *testing.T, what string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol {
		t.Errorf("%s = %v, want %v ± %v", what, got, want, tol)
	}
}

// lcCheck is the fuzz and round-trip invariant: decoding never panics,
// String and JSON work, and a message that decoded without error or
// leftover bytes encodes back to the same bytes.
func lcCheck(t *testing.T, d *Decoder, msg []byte, dir Direction) Result {
	t.Helper()
	res := d.Decode(msg, dir)
	_ = res.Msg.String()
	if _, err := json.Marshal(res.Msg); err != nil {
		t.Fatalf("json of % X: %v", msg, err)
	}
	if res.Err == nil && len(res.Unparsed) == 0 {
		if got := res.Msg.Append(nil); !bytes.Equal(got, msg) {
			t.Fatalf("re-encoded\n% X\nwant\n% X\n(%s)", got, msg, res.Msg)
		}
	}
	return res
}

// lcDecodeClean decodes msg and fails on an error or leftover bytes.
func lcDecodeClean(t *testing.T, d *Decoder, msg []byte, dir Direction) Result {
	t.Helper()
	res := lcCheck(t, d, msg, dir)
	if res.Err != nil || len(res.Unparsed) > 0 {
		t.Fatalf("decode % X: err=%v unparsed=% X (%s)", msg, res.Err, res.Unparsed, res.Warning)
	}
	return res
}

// jsonDecoder returns a decoder that knows the ships of the real
// ObjCreate cases, so that their StateUpdates decode subsystems by name.
func jsonDecoder(t testing.TB) *Decoder {
	d := NewDecoder()
	for _, c := range realCases {
		if b := fixture.Unhex(t, c.hex); Opcode(b[0]) == OpObjCreate || Opcode(b[0]) == OpObjCreateTeam {
			d.Decode(b, c.dir)
		}
	}
	return d
}

// stateUpdateFuzzInput is the StateUpdate fuzz targets' input: a decoder
// that knows the object of body as a ship of species (when it names one),
// and the message.
func stateUpdateFuzzInput(species uint8, body []byte) (*Decoder, []byte) {
	d := NewDecoder()
	if spec := ShipBySpecies(Species(species)); spec != nil && len(body) >= 4 {
		d.Ships.Add(ObjectID(binary.LittleEndian.Uint32(body)), spec)
	}
	return d, append([]byte{byte(OpStateUpdate)}, body...)
}
