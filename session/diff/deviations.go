package diff

// Named protocol deviations: traffic that breaks a stock rule in a way
// that has a name, reported as one finding each that quotes the first
// instance's frame and bytes, instead of as decode damage. What a
// deviation is, how it is recognised and the stock evidence are the
// dissector's registry (dissect.Forms): the records arrive marked
// (flow.Record.NonStock), and these rules only rank them.

import (
	"fmt"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
)

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

// disconnect06 reports a disconnect sent as transport type 0x06 (the
// registry's disconnect-0x06). It reports whether r was one.
func (b *Builder) disconnect06(s *Session, r *flow.Record) bool {
	if !marked(r, dissect.FormDisconnect06) {
		return false
	}
	p := r.Datagram
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
// not its stock event class's (the registry's event-length). It reports
// whether r was one.
func (b *Builder) eventLengthDeviation(s *Session, r *flow.Record) bool {
	if !marked(r, dissect.FormEventLength) || r.Game == nil || r.Msg.Type != dissect.TypeData || r.Msg.Fragment || len(r.Msg.Payload) == 0 {
		return false
	}
	p := r.Msg.Payload
	op := game.Opcode(p[0])
	want, ok := game.StockEventOf(op)
	if !ok {
		return false
	}
	rel := "shorter"
	if len(p) > want.Len {
		rel = "longer"
	}
	b.find(s, Finding{Key: fmt.Sprintf("event-length %s %d %s", op, len(p), r.Dir), Kind: "event-length", Phase: s.PhaseAt(r.Time),
		Severity: Major,
		Summary: fmt.Sprintf("%s (0x%02X) event-forward messages of %d bytes from the %s (%s), %s than stock's %d (%s)",
			op, uint8(op), len(p), sideOf(r), r.Dir, rel, want.Len, want.Fields)},
		r.Frame, quote(r.Frame, p))
	return true
}

// marked reports whether r carries the registry's form f.
func marked(r *flow.Record, f dissect.FormID) bool {
	return r.NonStock != nil && r.NonStock.Form == f && r.Msg != nil
}

// legacyConnect reports a connect in the legacy [type][len:u8][flags:u8]
// framing, linked to the session's connect: the session has no stock
// connect request because this is its connect. It reports whether it was
// one.
func (b *Builder) legacyConnect(s *Session, r *flow.Record) bool {
	m := r.Msg
	if !marked(r, dissect.FormLegacyConnect) || r.Dir != game.ClientToServer || r.Peer != 0xFF ||
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

// registryDeviation reports a message marked with one of the registry's
// forms that the rules above do not rank themselves: one finding per form
// and direction, quoting the first instance, ranked as other protocol
// anomalies are (major from the server, minor from a client). It reports
// whether r was one.
func (b *Builder) registryDeviation(s *Session, r *flow.Record) bool {
	ns := r.NonStock
	if ns == nil || r.Msg == nil {
		return false
	}
	switch ns.Form {
	case dissect.FormUnknown, dissect.FormDisconnect06, dissect.FormLegacyConnect, dissect.FormEventLength:
		return false
	}
	f := ns.Entry()
	sev := Major
	if r.Dir == game.ClientToServer {
		sev = Minor
	}
	p := r.Msg.Raw
	if r.Game != nil && len(r.Msg.Payload) > 0 && !r.Msg.Fragment {
		p = r.Msg.Payload
	}
	b.find(s, Finding{Key: "nonstock " + f.Name + " " + r.Dir.String(), Kind: f.Name, Phase: s.PhaseAt(r.Time), Severity: sev,
		Summary: fmt.Sprintf("%s, from the %s (%s) (non-stock %s; its stock evidence: bcwire decode -V)", f.What, sideOf(r), r.Dir, f.Name)},
		r.Frame, quote(r.Frame, p))
	return true
}
