package diff

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
)

// TestNamedDeviations feeds a Builder the records of a session that
// deviates the way OpenBC's test client and server do (bytes as observed
// against OpenBC 52a8f62) and checks that each deviation is one named
// finding quoting its first instance, not decode damage.
func TestNamedDeviations(t *testing.T) {
	server := netip.MustParseAddrPort("127.0.0.1:22101")
	client := netip.MustParseAddrPort("127.0.0.1:40000")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	frame := 0
	rec := func(dir game.Direction, at time.Duration) *flow.Record {
		frame++
		r := &flow.Record{Kind: flow.KindMessage, Frame: frame, Time: t0.Add(at), Server: server, Client: client, Dir: dir, Peer: 0x02}
		if dir == game.ClientToServer {
			r.Src, r.Dst = client, server
		} else {
			r.Src, r.Dst, r.Peer = server, client, 0x01
		}
		return r
	}
	r := DefaultRules()
	b := NewBuilder("ours", &r)

	// A connect in the legacy [type][len][flags] framing.
	c := rec(game.ClientToServer, 0)
	c.Peer = 0xFF
	c.Msg = &dissect.Message{Type: dissect.TypeConnectAck, Legacy: true, LegacyFlags: 0x01, Payload: []byte{0, 0, 0, 0x7F, 0},
		NonStock: dissect.FormLegacyConnect}
	c.NonStock = &dissect.NonStock{Form: dissect.FormLegacyConnect}
	b.Add(c)
	// Keepalives, every one under sequence number 0 of the control
	// channel, which the connect answer used too.
	slot := uint8(0)
	ans := rec(game.ServerToClient, 10*time.Millisecond)
	ans.Msg = &dissect.Message{Type: dissect.TypeConnectAck, Reliable: true, Ordered: true, Seq: 0, Payload: []byte{2}}
	ans.Control = &dissect.Control{Kind: "slot-assignment", Slot: &slot}
	b.Add(ans)
	for i := range 3 {
		k := rec(game.ServerToClient, time.Duration(i+1)*time.Second)
		k.Msg = &dissect.Message{Type: dissect.TypePeerInfo, Reliable: true, Seq: 0, Payload: []byte{0, 127, 0, 0, 1}}
		k.Control = &dissect.Control{Kind: "peer-info", Slot: &slot, Addr: netip.MustParseAddr("127.0.0.1")}
		b.Add(k)
	}
	// A 10-byte SubsystemStatus (stock: 18).
	ss := rec(game.ClientToServer, 4*time.Second)
	ssBytes := []byte{0x0A, 0xFF, 0xFF, 0xFF, 0x3F, 0x00, 0x00, 0xD8, 0x8B, 0x45}
	ss.Msg = &dissect.Message{Type: dissect.TypeData, Reliable: true, Seq: 7, Payload: ssBytes}
	dec := game.NewDecoder()
	res := dec.Decode(ssBytes, game.ClientToServer)
	if res.NonStock == nil || res.NonStock.Form != dissect.FormEventLength {
		t.Fatalf("a 10-byte SubsystemStatus is not marked event-length: %+v", res.NonStock)
	}
	ss.Game, ss.Payload = &res, ssBytes
	ss.NonStock = res.NonStock
	b.Add(ss)
	// A disconnect as transport type 0x06, as the dissector splits it.
	dc := rec(game.ClientToServer, 5*time.Second)
	dc.Datagram = []byte{0x02, 0x01, 0x06, 0x02}
	var dg dissect.Datagram
	if err := dg.Parse(dc.Datagram); err != nil || len(dg.Messages) != 1 || dg.Messages[0].NonStock != dissect.FormDisconnect06 {
		t.Fatalf("the 0x06 disconnect does not split as disconnect-0x06: %v %+v", err, dg.Messages)
	}
	dc.Msg = &dg.Messages[0]
	dc.NonStock = &dissect.NonStock{Form: dissect.FormDisconnect06}
	b.Add(dc)

	capt := b.Finish()
	byKind := map[string]*Finding{}
	for _, f := range capt.Findings {
		byKind[f.Kind] = f
	}
	for _, kind := range []string{"damaged", "decode-error", "legacy-framing"} {
		if f := byKind[kind]; f != nil {
			t.Errorf("a named deviation filed as %s: %s %q", kind, f.Summary, f.Detail)
		}
	}
	check := func(kind string, phase Phase, summary, detail string) {
		t.Helper()
		f := byKind[kind]
		if f == nil {
			t.Errorf("no %s finding among %d", kind, len(capt.Findings))
			return
		}
		if f.Phase != phase || !strings.Contains(f.Summary, summary) || len(f.Detail) == 0 || f.Detail[0] != detail {
			t.Errorf("%s: phase %s, summary %q, detail %q; want %s, %q, %q", kind, f.Phase, f.Summary, f.Detail, phase, summary, detail)
		}
	}
	check("disconnect-type", PhaseDisconnect, "transport type 0x06 by the client (C->S); stock sends 0x05", "frame 7: 02 01 06 02")
	check("event-length", capt.Sessions[0].PhaseAt(ss.Time), "SubsystemStatus (0x0A) event-forward messages of 10 bytes from the client (C->S), shorter than stock's 18",
		"frame 6: 0A FF FF FF 3F 00 00 D8 8B 45")
	check("legacy-connect", PhaseHandshake, "connects in the legacy", fmt.Sprintf("frame 1: % X", c.Msg.Append(nil)))
	if len(capt.Sessions) != 1 {
		t.Fatalf("%d sessions, want 1", len(capt.Sessions))
	}
	s := capt.Sessions[0]
	if s.LegacyConnect != 1 || s.LegacyDisconnect != 7 || s.Connect.IsZero() {
		t.Errorf("session: legacy connect frame %d, legacy disconnect frame %d, connect %v", s.LegacyConnect, s.LegacyDisconnect, s.Connect)
	}
	if s.Keepalive == nil || s.Keepalives != 3 {
		t.Errorf("keepalives: first %v, %d counted, want 3 (one sequence number for all)", s.Keepalive, s.Keepalives)
	}
}

func TestIsConfig(t *testing.T) {
	for p, want := range map[string]bool{
		"Settings.map": true, "Settings.friendly_fire": true, "MISSION_INIT.frag_limit": true,
		"gamespy.hostname": true, "gamespy.players": true,
		"Settings.player_slot": false, "MISSION_INIT.player_limit": false, "ChecksumRequest.dir": false,
		"gamespy.gamename": false,
	} {
		if IsConfig(p) != want {
			t.Errorf("IsConfig(%q) = %v, want %v", p, !want, want)
		}
	}
}

// TestFragmentedTriggerAcks: a client that sent its checksum response in
// fragments is ACKed once per fragment; against a client that sent it
// whole, only whether the server ACKs compares.
func TestFragmentedTriggerAcks(t *testing.T) {
	r := DefaultRules()
	x := &context{r: &r, background: map[game.Opcode]bool{}, missing: map[game.Opcode]bool{}}
	req := &game.ChecksumRequest{Round: 3, Dir: "scripts/mainmenu", Filter: "*.pyc"}
	ack := Msg{Type: dissect.TypeAck, Frame: 2}
	data := Msg{Type: dissect.TypeData, Reliable: true, Frame: 2, Game: req}
	step := func(fragment bool, reply ...Msg) *Step {
		return &Step{Key: "checksum 2", Phase: PhaseHandshake, Answered: true,
			Trigger: Msg{Type: dissect.TypeData, Fragment: fragment, Frame: 1}, Reply: reply}
	}
	for _, c := range []struct {
		name string
		o, s *Step
		want int
	}{
		{"whole against fragmented", step(false, ack, data), step(true, ack, ack, ack, data), 0},
		{"both fragmented, fewer ACKs", step(true, ack, data), step(true, ack, ack, ack, data), 1},
		{"whole against fragmented, no ACK", step(false, data), step(true, ack, ack, data), 1},
	} {
		col := &collector{r: &r, diffs: map[string]*Difference{}}
		x.compareStep(col, 1, c.o, c.s)
		if len(col.diffs) != c.want {
			var got []string
			for _, d := range col.diffs {
				got = append(got, d.Summary)
			}
			t.Errorf("%s: %d differences %q, want %d", c.name, len(col.diffs), got, c.want)
		}
	}
}

// TestRegistryDeviations: a message the dissector marked with another of
// the registry's forms is one finding of that form's name, ranked major
// from the server and minor from a client, not a decode error.
func TestRegistryDeviations(t *testing.T) {
	server := netip.MustParseAddrPort("127.0.0.1:22101")
	client := netip.MustParseAddrPort("127.0.0.1:40000")
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := DefaultRules()
	b := NewBuilder("ours", &r)
	dec := game.NewDecoder()
	for i, c := range []struct {
		dir     game.Direction
		payload []byte
	}{
		// StateUpdate: position, forward, up and speed flagged; the speed cut off.
		{game.ClientToServer, []byte{0x1C, 0xFF, 0xFF, 0xFF, 0x3F, 0x00, 0x00, 0x20, 0x41, 0x1E, 0x7F, 0x00, 0x00, 0x7F, 0x00, 0x00, 0x00, 0x7F, 0x50, 0x42, 0x00, 0x54}},
		// DeletePlayerUI aimed at slot 0's ship.
		{game.ServerToClient, []byte{0x17, 0x66, 0x08, 0x00, 0x00, 0xF1, 0x00, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF, 0x3F, 0x02}},
	} {
		res := dec.Decode(c.payload, c.dir)
		if res.NonStock == nil {
			t.Fatalf("% X is not marked", c.payload)
		}
		rec := &flow.Record{Kind: flow.KindMessage, Frame: i + 1, Time: t0.Add(time.Duration(i) * time.Second), Server: server, Client: client, Dir: c.dir,
			Msg: &dissect.Message{Type: dissect.TypeData, Payload: c.payload, Raw: c.payload}, Game: &res, Payload: c.payload, NonStock: res.NonStock}
		b.Add(rec)
	}
	capt := b.Finish()
	byKind := map[string]*Finding{}
	for _, f := range capt.Findings {
		byKind[f.Kind] = f
	}
	if f := byKind["decode-error"]; f != nil {
		t.Errorf("a registry form filed as decode-error: %s", f.Summary)
	}
	if f := byKind["stateupdate-short"]; f == nil || f.Severity != Minor {
		t.Errorf("stateupdate-short finding %+v, want minor (from a client)", f)
	}
	if f := byKind["deleteplayer-at-ship"]; f == nil || f.Severity != Major || len(f.Detail) == 0 || !strings.HasPrefix(f.Detail[0], "frame 2: 17 66 08") {
		t.Errorf("deleteplayer-at-ship finding %+v, want major (from the server) quoting frame 2", f)
	}
}
