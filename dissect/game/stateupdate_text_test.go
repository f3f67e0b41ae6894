package game

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/dissect"
)

// refStateUpdateString is the fmt-based text form that appendString
// replaced (for speed: it is most of what `bcwire decode` prints); the
// tests hold the two byte for byte equal.
func refStateUpdateString(m *StateUpdate) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "object=%s time=%.3f flags=%s", refObjectID(m.Object), m.GameTime, m.Flags)
	f := m.Flags
	if f&StatePosition != 0 {
		fmt.Fprintf(&sb, " pos=%s", refVec3(m.Position))
		if m.HasHash {
			fmt.Fprintf(&sb, " hash=0x%04X", m.Hash)
		} else {
			sb.WriteString(" hash=none")
		}
	}
	if f&StateDelta != 0 {
		fmt.Fprintf(&sb, " delta=%s", refVec3(m.Delta.Vec()))
	}
	if f&StateForward != 0 {
		fmt.Fprintf(&sb, " fwd=%s", refVec3(m.Forward.Vec()))
	}
	if f&StateUp != 0 {
		fmt.Fprintf(&sb, " up=%s", refVec3(m.Up.Vec()))
	}
	if f&StateSpeed != 0 {
		fmt.Fprintf(&sb, " speed=%v", m.Speed)
	}
	if f&StateCloak != 0 {
		fmt.Fprintf(&sb, " cloaked=%t", m.Cloaked)
	}
	if f&StateSubsystems != 0 {
		fmt.Fprintf(&sb, " subsystems@%d", m.SubsystemStart)
		if m.SubsystemsUndecoded {
			fmt.Fprintf(&sb, " undecoded (%s)", m.subsystemNote())
			if len(m.SubsystemLeadBits) > 0 {
				fmt.Fprintf(&sb, " lead-bits=%v", m.SubsystemLeadBits)
			}
			fmt.Fprintf(&sb, " [% X]", m.SubsystemData)
		} else {
			sb.WriteString(" [")
			for i, s := range m.Subsystems {
				if i > 0 {
					sb.WriteByte(' ')
				}
				name := s.Name
				if name == "" {
					name = "#" + strconv.Itoa(s.Index)
				}
				fmt.Fprintf(&sb, "%q=%d", name, s.Condition)
				if len(s.Children) > 0 {
					sb.WriteByte('(')
					for i, c := range s.Children {
						if i > 0 {
							sb.WriteByte(',')
						}
						sb.WriteString(strconv.Itoa(int(c)))
					}
					sb.WriteByte(')')
				}
				switch s.Format {
				case SubsystemPowered, SubsystemShield:
					switch {
					case s.Off:
						fmt.Fprintf(&sb, " power=off/%d", s.Power)
					case s.HasPower:
						fmt.Fprintf(&sb, " power=%d", s.Power)
					default:
						sb.WriteString(" power=-")
					}
					if s.Format == SubsystemShield {
						fs := make([]string, len(s.Facings))
						for i, c := range s.Facings {
							fs[i] = strconv.Itoa(int(c))
						}
						sb.WriteString(" facings=" + strings.Join(fs, "/"))
					}
					if s.Extra != nil {
						fmt.Fprintf(&sb, " extra=% X", s.Extra)
					}
				case SubsystemPower:
					fmt.Fprintf(&sb, " battery=%d/%d", s.MainBattery, s.BackupBattery)
				}
			}
			sb.WriteByte(']')
		}
	}
	if f&StateWeapons != 0 {
		sb.WriteString(" weapons=[")
		for i, x := range m.Weapons {
			if i > 0 {
				sb.WriteByte(' ')
			}
			fmt.Fprintf(&sb, "%d:0x%02X", x.Index, x.Health)
		}
		sb.WriteByte(']')
	}
	return sb.String()
}

func refObjectID(id ObjectID) string {
	if s := id.Slot(); s >= 0 {
		return fmt.Sprintf("0x%08X(slot %d)", uint32(id), s)
	}
	return fmt.Sprintf("0x%08X", uint32(id))
}

func refVec3(v dissect.Vec3) string { return fmt.Sprintf("(%.2f, %.2f, %.2f)", v.X, v.Y, v.Z) }

// stateUpdateFrom fills a StateUpdate from arbitrary bytes: every flag,
// odd floats (NaN, infinities, -0, huge), names with quotes and non-ASCII.
func stateUpdateFrom(b []byte) *StateUpdate {
	next := func(n int) []byte {
		out := make([]byte, n)
		k := copy(out, b)
		b = b[k:]
		return out
	}
	u32 := func() uint32 { return binary.LittleEndian.Uint32(next(4)) }
	f32 := func() float32 { return math.Float32frombits(u32()) }
	dir := func() dissect.Dir3 { d := next(3); return dissect.Dir3{int8(d[0]), int8(d[1]), int8(d[2])} }
	m := &StateUpdate{Object: ObjectID(u32()), GameTime: f32(), Flags: StateFlags(next(1)[0])}
	m.Position = dissect.Vec3{X: f32(), Y: f32(), Z: f32()}
	h := next(3)
	m.HasHash, m.Hash = h[0]&1 != 0, binary.LittleEndian.Uint16(h[1:])
	m.Delta = dissect.CV4{Dir: dir(), Mag: dissect.CF16(binary.LittleEndian.Uint16(next(2)))}
	m.Forward, m.Up = dir(), dir()
	m.Speed = dissect.CF16(binary.LittleEndian.Uint16(next(2)))
	c := next(3)
	m.Cloaked, m.SubsystemStart, m.SubsystemsUndecoded = c[0]&1 != 0, c[1], c[2]&1 != 0
	if m.SubsystemsUndecoded {
		m.SubsystemData = next(int(c[2] >> 4))
		for _, x := range next(int(c[2]>>1) & 7) {
			m.SubsystemLeadBits = append(m.SubsystemLeadBits, x&1 != 0)
		}
	}
	names := []string{"", "Hull", `Quote "x"`, "Überschild", "\x00\x7f"}
	for range int(next(1)[0] & 7) {
		s := next(8)
		ss := SubsystemState{Index: int(s[0]), Name: names[int(s[1])%len(names)], Condition: s[2],
			Format: SubsystemFormat(s[3] % 5), HasPower: s[4]&1 != 0, Power: s[5], MainBattery: s[6], BackupBattery: s[7],
			Off: s[4]&2 != 0}
		ss.Children = next(int(s[4] >> 5))
		if ss.Format == SubsystemShield {
			ss.Facings = next(int(s[3]>>5) % 7)
		}
		if s[4]&4 != 0 {
			ss.Extra = next(int(s[3]>>6) % 3)
		}
		m.Subsystems = append(m.Subsystems, ss)
	}
	for range int(next(1)[0] & 7) {
		w := next(2)
		m.Weapons = append(m.Weapons, WeaponHealth{Index: w[0], Health: w[1]})
	}
	return m
}

func TestStateUpdateStringMatchesFmt(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for range 20000 {
		b := make([]byte, 120)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		// Now and then, well-known float bits.
		if rng.IntN(4) == 0 {
			special := []uint32{0x7FC00000, 0x7F800000, 0xFF800000, 0x80000000, 0x7F7FFFFF, 0x00000001}
			binary.LittleEndian.PutUint32(b[4:], special[rng.IntN(len(special))])
		}
		m := stateUpdateFrom(b)
		if got, want := m.String(), refStateUpdateString(m); got != want {
			t.Fatalf("String() =\n  %s\nfmt reference\n  %s", got, want)
		}
	}
}

func FuzzStateUpdateStringMatchesFmt(f *testing.F) {
	f.Add(make([]byte, 120))
	f.Add([]byte("\xff\xff\xff\x3f\x00\x00\xc0\x7f\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m := stateUpdateFrom(b)
		if got, want := m.String(), refStateUpdateString(m); got != want {
			t.Fatalf("String() =\n  %s\nfmt reference\n  %s", got, want)
		}
	})
}
