package game

import (
	"reflect"
	"testing"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/internal/fixture"
)

// decodeFast clears the message itself rather than calling reset: with
// every field filled, it must leave what reset and the header read leave.
func TestDecodeFastClearsLikeReset(t *testing.T) {
	// object 5, time 0, flags POS|FWD, position, has-hash bit clear, forward
	body := fixture.Unhex(t, "05 00 00 00 00 00 00 00 05 00 00 80 3F 00 00 00 40 00 00 40 40 20 01 02 03")
	for _, dir := range []Direction{ClientToServer, ServerToClient} {
		var got, want StateUpdate
		fixture.FillNonZero(t, reflect.ValueOf(&got).Elem())
		fixture.FillNonZero(t, reflect.ValueOf(&want).Elem())
		if !got.decodeFast(body, dir, &ShipRegistry{}) {
			t.Fatal("decodeFast did not take the message")
		}
		want.reset()
		want.dir = dir
		if _, _, ok := want.readHeaderFast(body, dissect.BitGroup{}); !ok {
			t.Fatal("readHeaderFast failed")
		}
		if !reflect.DeepEqual(&got, &want) {
			t.Errorf("dir %v: decodeFast left\n%+v\nreset and readHeaderFast\n%+v", dir, got, want)
		}
	}
}

// commonWarning, which Decode inlines, must give warning's answer whenever
// it gives one, and give one for the usual messages.
func TestCommonWarningMatchesWarning(t *testing.T) {
	spec := ShipByName("Galaxy")
	answered := 0
	for flags := range 256 {
		for _, dir := range []Direction{ClientToServer, ServerToClient} {
			for whyRaw := range uint8(3) {
				for openbc := range uint8(len(openbcWarnings)) {
					for _, undecoded := range []bool{false, true} {
						m := &StateUpdate{Flags: StateFlags(flags), dir: dir, whyRaw: whyRaw, openbc: openbc,
							SubsystemsUndecoded: undecoded, tried: spec}
						w, ok := m.commonWarning()
						if !ok {
							continue
						}
						answered++
						if want := m.warning(); w != want {
							t.Fatalf("%+v: commonWarning %q, warning %q", m, w, want)
						}
					}
				}
			}
		}
	}
	// Every flags byte without both round-robins, both directions, whyRaw
	// 0 and 1, openbc 0, either SubsystemsUndecoded.
	if want := 192 * 2 * 2 * 2; answered != want {
		t.Errorf("commonWarning answered %d cases, want %d", answered, want)
	}
}

// decodeFast runs the Decoder's StateUpdate fast path (DecodeStateUpdate)
// on m, the message body (after the opcode) sent in direction dir with the
// ships known to ships: it reports whether the fast path took it, and
// leaves m as the fast path did.
func (m *StateUpdate) decodeFast(body []byte, dir Direction, ships *ShipRegistry) bool {
	d := NewDecoder()
	d.su = m
	if ships != nil {
		d.Ships = *ships
	}
	var res Result
	return d.DecodeStateUpdate(&res, append([]byte{byte(OpStateUpdate)}, body...), dir)
}
