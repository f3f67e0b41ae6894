package pipeline_test

import (
	"bytes"
	"encoding/hex"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/report"
	"github.com/bcwire/bcwire/session"
)

// legacyConnect is the connect request OpenBC's test client sends, in the
// legacy [type][len:u8][flags:u8] framing (issue 16 point 4; the bytes are
// quoted in ../shared/PROTOCOL.md): peer 0xFF, one message, type 0x03,
// length 8, flags 0x01, then a 5-byte payload that fits no stock layout.
const legacyConnect = "FF010308010000007F00"

// A session that starts with a legacy-framed connect is seen from its
// connect: the connect phase is at that frame, the anomaly is named there,
// and the session is not taken for one already under way when the capture
// started.
func TestLegacyConnectStartsTheSession(t *testing.T) {
	connect, err := hex.DecodeString(legacyConnect)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(connect, []byte{0xFF, 0x01, 0x03, 0x08, 0x01, 0x00, 0x00, 0x00, 0x7F, 0x00}) {
		t.Fatalf("connect bytes % X", connect)
	}
	server := netip.MustParseAddrPort("127.0.0.1:22101")
	client := netip.MustParseAddrPort("127.0.0.1:50123")
	start := time.Date(2026, 2, 1, 12, 0, 0, 0, time.UTC)

	// The server's answer in stock framing: the slot assignment and
	// checksum round 0, then the client's ACKs and its round-0 answer.
	req := &game.ChecksumRequest{Round: 0, Dir: "scripts/", Filter: "App.pyc"}
	reply := dissect.Datagram{Peer: 0x01, Messages: []dissect.Message{
		{Type: dissect.TypeConnectAck, Reliable: true, Ordered: true, Seq: 0, Payload: []byte{0x02}},
		{Type: dissect.TypeData, Reliable: true, Ordered: true, Seq: 0, Payload: req.Append(nil)},
	}}
	resp := &game.ChecksumResponse{Round: 0, DirHash: 0x2FCBAF4D}
	answer := dissect.Datagram{Peer: 0x02, Messages: []dissect.Message{
		{Type: dissect.TypeAck, Seq: 0, AckFlags: dissect.AckControl},
		{Type: dissect.TypeAck, Seq: 0},
		{Type: dissect.TypeData, Reliable: true, Ordered: true, Seq: 0, Payload: resp.Append(nil)},
	}}
	var pcap bytes.Buffer
	w, err := capture.NewWriter(&pcap, capture.PCAP, capture.Ethernet)
	if err != nil {
		t.Fatal(err)
	}
	for i, d := range []struct {
		src, dst netip.AddrPort
		plain    []byte
	}{
		{client, server, connect},
		{server, client, reply.Append(nil)},
		{client, server, answer.Append(nil)},
	} {
		wire := make([]byte, len(d.plain))
		dissect.Encrypt(wire, d.plain)
		if err := w.WriteUDP(start.Add(time.Duration(i)*20*time.Millisecond), d.src, d.dst, wire); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}

	rd, err := capture.NewReader(bytes.NewReader(pcap.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	var sessions []*session.Session
	bl := session.NewBuilder(session.Options{}, func(s *session.Session) { sessions = append(sessions, s) })
	if _, err := flow.Run(rd, flow.New(flow.Options{}), func(r *flow.Record) bool {
		if r.Frame == 1 && !flow.IsConnectRequest(r) {
			t.Errorf("frame 1 (%v, control %+v) is not taken for a connect request", r.Msg.Type, r.Control)
		}
		bl.Add(r)
		return true
	}); err != nil {
		t.Fatal(err)
	}
	bl.Finish()
	if len(sessions) != 1 {
		t.Fatalf("%d sessions, want 1", len(sessions))
	}
	s := sessions[0]
	if s.MidCapture || s.Phases.Connect == nil || !s.Phases.Connect.Equal(start) {
		t.Errorf("mid-capture %v, connect at %v; want a connect at %v", s.MidCapture, s.Phases.Connect, start)
	}
	if s.Slot != 2 || len(s.Checksums) != 1 || s.Checksums[0].Response == nil {
		t.Errorf("slot %d, checksum rounds %+v", s.Slot, s.Checksums)
	}
	var named bool
	for _, e := range s.Events {
		if e.Kind == session.EventNonStock && e.Frame == 1 && strings.Contains(e.Text, "legacy") {
			named = true
		}
	}
	if !named {
		t.Errorf("no non-stock event at frame 1 naming the legacy framing: %+v", s.Events)
	}

	var out bytes.Buffer
	tp := report.NewTimelinePrinter(&out, false, false)
	if err := tp.Session("crafted.pcap", s); err != nil {
		t.Fatal(err)
	}
	if err := tp.Close(); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"+00:00.000  connect request", "connect request in the legacy [type][len:u8][flags:u8] framing", "frame 1"} {
		if !strings.Contains(text, want) {
			t.Errorf("timeline lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "already under way") {
		t.Errorf("timeline takes the session for one under way before the capture:\n%s", text)
	}
}
