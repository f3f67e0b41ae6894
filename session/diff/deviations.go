package diff

// Named protocol deviations: traffic that breaks a stock rule in a way
// that has a name, reported as one finding each that quotes the first
// instance's frame and bytes, instead of as decode damage. Each rule cites
// where the stock behaviour is documented.

import (
	"fmt"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
)

// transportDisconnectLegacy is the transport type some third-party peers
// send as their disconnect. Stock sends a graceful disconnect as 0x05
// (DisconnectMessage): OpenBC's docs/network-flows/disconnect-flow.md,
// "Transport type is 0x05, not 0x06 (corrected from earlier
// documentation)", verified in a stock-dedicated loopback trace.
const transportDisconnectLegacy = 0x06

// stockEventLength is the whole game message length (opcode included) of
// the event-forward opcodes whose stock event class has a fixed size:
// OpenBC's docs/wire-formats/event-forward-wire-format.md (base event 17
// bytes: opcode, class, code, source, related object; SubsystemControlEvent
// 0x0104 and CharEvent 0x0105 one value byte more, ObjPtrEvent 0x010C an
// object id more, StartFiringEvent 0x8128 eight bytes more).
var stockEventLength = map[game.Opcode]struct {
	n     int
	class string
}{
	game.OpStartFiring:        {25, "StartFiringEvent 0x8128: class, code, source, related object, 8 more bytes"},
	game.OpStopFiring:         {17, "SubsystemEvent 0x0101: class, code, source, related object"},
	game.OpSubsystemStatus:    {18, "SubsystemControlEvent 0x0104: class, code, source, related object, value"},
	game.OpRepairListPriority: {21, "ObjPtrEvent 0x010C: class, code, source, related object, object id"},
	game.OpSetPhaserLevel:     {18, "CharEvent 0x0105: class, code, source, related object, level"},
	game.OpTorpTypeChange:     {18, "CharEvent 0x0105: class, code, source, related object, torpedo type"},
}

// quote is the first instance of a deviation: its frame and bytes.
func quote(frame int, b []byte) string {
	const max = 48
	if len(b) > max {
		return fmt.Sprintf("frame %d: % X … (%d bytes)", frame, b[:max], len(b))
	}
	return fmt.Sprintf("frame %d: % X", frame, b)
}

func sideOf(r *flow.Record) string {
	if r.Dir == game.ClientToServer {
		return "client"
	}
	return "server"
}

// damagedDeviation reports a damaged datagram that is a named deviation:
// a disconnect sent as transport type 0x06. It reports whether it was one.
func (b *Builder) damagedDeviation(s *Session, r *flow.Record) bool {
	p := r.Raw
	// [peer][count][type]...: the first message's type.
	if r.Kind != flow.KindDamaged || len(p) < 3 || p[2] != transportDisconnectLegacy {
		return false
	}
	if r.Dir == game.ClientToServer && s.LegacyDisconnect == 0 {
		s.LegacyDisconnect = r.Frame
		if s.Disconnect.IsZero() {
			s.Disconnect = r.Time
			b.stopRates(s, r.Time)
		}
	}
	sev := Major
	if r.Dir == game.ClientToServer {
		sev = Minor
	}
	b.find(s, Finding{Key: "disconnect-0x06 " + r.Dir.String(), Kind: "disconnect-type", Phase: PhaseDisconnect, Severity: sev,
		Summary: fmt.Sprintf("disconnects sent as transport type 0x06 by the %s (%s); stock sends 0x05 (DisconnectMessage)", sideOf(r), r.Dir)},
		r.Frame, quote(r.Frame, p))
	return true
}

// eventLengthDeviation reports an event-forward message whose length is
// not its stock event class's. It reports whether it was one.
func (b *Builder) eventLengthDeviation(s *Session, r *flow.Record) bool {
	if r.Game == nil || r.Msg == nil || r.Msg.Type != dissect.TypeData || r.Msg.Fragment || len(r.Msg.Payload) == 0 {
		return false
	}
	p := r.Msg.Payload
	op := game.Opcode(p[0])
	want, ok := stockEventLength[op]
	if !ok || len(p) == want.n {
		return false
	}
	rel := "shorter"
	if len(p) > want.n {
		rel = "longer"
	}
	b.find(s, Finding{Key: fmt.Sprintf("event-length %s %d %s", op, len(p), r.Dir), Kind: "event-length", Phase: s.PhaseAt(r.Time),
		Severity: Major,
		Summary: fmt.Sprintf("%s (0x%02X) event-forward messages of %d bytes from the %s (%s), %s than stock's %d (%s)",
			op, uint8(op), len(p), sideOf(r), r.Dir, rel, want.n, want.class)},
		r.Frame, quote(r.Frame, p))
	return true
}

// legacyConnect reports a connect in the legacy [type][len:u8][flags:u8]
// framing, linked to the session's connect: the session has no stock
// connect request because this is its connect. It reports whether it was
// one.
func (b *Builder) legacyConnect(s *Session, r *flow.Record) bool {
	m := r.Msg
	if m == nil || !m.Legacy || r.Dir != game.ClientToServer || r.Peer != 0xFF ||
		(m.Type != dissect.TypeConnect && m.Type != dissect.TypeConnectAck) {
		return false
	}
	if s.LegacyConnect == 0 {
		s.LegacyConnect = r.Frame
		if s.Connect.IsZero() {
			s.Connect = r.Time
		}
	}
	b.find(s, Finding{Key: "legacy-connect", Kind: "legacy-connect", Phase: PhaseHandshake, Severity: Major,
		Summary: fmt.Sprintf("the client connects in the legacy [type][len:u8][flags:u8] framing (a %s message), so its session has no stock connect request", m.Type)},
		r.Frame, quote(r.Frame, m.Append(nil)))
	return true
}
