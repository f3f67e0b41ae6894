package game_test

import (
	"io"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
)

// A StateUpdate copied with CopyTo keeps its JSON and text forms after
// the decoder has decoded many more messages into the original and the
// decoded bytes were overwritten, on the battle and on OpenBC's battle
// (undecoded subsystems, lead bits, weapons, OpenBC's forms).
func TestStateUpdateCopyToOwnsItsBytes(t *testing.T) {
	for _, path := range []string{
		filepath.Join("..", "..", "testdata", "pcaps", "battle.pcap"),
		filepath.Join("..", "..", "testdata", "openbc", "networked-battle.pcap"),
	} {
		rd, err := capture.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		// A ring of copies, each checked when its slot comes round again.
		type kept struct {
			su         game.StateUpdate
			json, text string
		}
		var ring [16]kept
		n, undecoded := 0, 0
		tr := flow.New(flow.Options{})
		for {
			p, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			tr.Datagram(p.Frame, p.Time, p.Src, p.Dst, p.Payload, func(r *flow.Record) {
				if r.Game == nil {
					return
				}
				su, ok := r.Game.Msg.(*game.StateUpdate)
				if !ok {
					return
				}
				k := &ring[n%len(ring)]
				if n >= len(ring) {
					if j, s := string(k.su.AppendJSON(nil)), k.su.String(); j != k.json || s != k.text {
						t.Fatalf("%s: a copy changed:\n%s\n%s\nwas\n%s\n%s", path, j, s, k.json, k.text)
					}
				}
				k.json, k.text = string(su.AppendJSON(nil)), su.String()
				su.CopyTo(&k.su)
				if su.SubsystemsUndecoded {
					undecoded++
				}
				// The decoded bytes are overwritten, as a reused buffer is.
				for i := range r.Msg.Payload {
					r.Msg.Payload[i] ^= 0x5A
				}
				n++
			})
		}
		rd.Close()
		if n < 1000 {
			t.Fatalf("%s: only %d StateUpdates", path, n)
		}
		t.Logf("%s: %d StateUpdates copied, %d with undecoded subsystems", path, n, undecoded)
	}
}

// Copying into a copy's storage allocates nothing.
func TestStateUpdateCopyToAllocatesNothing(t *testing.T) {
	src := &game.StateUpdate{Flags: game.StateSubsystems | game.StateWeapons,
		Subsystems:          []game.SubsystemState{{Name: "Hull", Children: []uint8{1, 2}, Facings: []uint8{3}}, {Extra: []uint8{4}}},
		Weapons:             []game.WeaponHealth{{Index: 1, Health: 2}},
		SubsystemData:       []byte{5, 6},
		SubsystemLeadBits:   []bool{true},
		SubsystemsUndecoded: true}
	var dst game.StateUpdate
	src.CopyTo(&dst)
	if allocs := testing.AllocsPerRun(100, func() { src.CopyTo(&dst) }); allocs != 0 {
		t.Errorf("%v allocations a copy", allocs)
	}
	if j, w := string(dst.AppendJSON(nil)), string(src.AppendJSON(nil)); j != w {
		t.Errorf("copy %s\nof %s", j, w)
	}
	if !reflect.DeepEqual(dst.Subsystems, src.Subsystems) || !reflect.DeepEqual(dst.SubsystemLeadBits, src.SubsystemLeadBits) {
		t.Errorf("copy %+v\nof %+v", dst, *src)
	}
}

// CopyTo knows every field of StateUpdate and SubsystemState that refers
// to memory: a new one must be taught to it (copied, or known read-only).
func TestStateUpdateCopyToKnowsEveryReference(t *testing.T) {
	refs := func(v any) []string {
		var names []string
		ty := reflect.TypeOf(v)
		for i := range ty.NumField() {
			switch ty.Field(i).Type.Kind() {
			case reflect.Slice, reflect.Pointer, reflect.Map, reflect.Interface, reflect.Chan, reflect.Func, reflect.UnsafePointer:
				names = append(names, ty.Field(i).Name)
			}
		}
		return names
	}
	if got, want := refs(game.StateUpdate{}), []string{"Subsystems", "Class", "SubsystemData", "SubsystemLeadBits", "Weapons", "tried", "childBuf"}; !slices.Equal(got, want) {
		t.Errorf("StateUpdate's reference fields are %v, CopyTo knows %v", got, want)
	}
	if got, want := refs(game.SubsystemState{}), []string{"Children", "ChildNames", "Facings", "Extra", "forms"}; !slices.Equal(got, want) {
		t.Errorf("SubsystemState's reference fields are %v, CopyTo knows %v", got, want)
	}
}
