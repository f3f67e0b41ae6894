package measure_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"math"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/capture/capturetest"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/session/measure"
)

// FuzzBuilder feeds datagrams made of the fuzz input (as pipeline's
// FuzzPipeline does: length, direction and client, then the plaintext)
// through the tracker into the Builder: it never panics, its measures
// always encode as JSON, and they are the reference Builder's
// (reference_test.go, the plain form the Builder's faster one replaced).
func FuzzBuilder(f *testing.F) {
	for _, s := range []string{
		"0201321680010021012FCBAF4D0100A1E601854900931700",
		"020132086000000321",
		"FF010308010000007F00",
		"02013217800D00190D0000400201DF8711FFFF03400088D85C",
	} {
		b, _ := hex.DecodeString(s)
		f.Add(append([]byte{byte(len(b)), b[0] & 1}, b...))
		f.Add(append(append([]byte{byte(len(b)), 0}, b...), append([]byte{byte(len(b)), 3}, b...)...))
	}
	server := netip.MustParseAddrPort("10.0.0.1:22101")
	clients := []netip.AddrPort{netip.MustParseAddrPort("10.0.1.2:50000"), netip.MustParseAddrPort("10.0.1.3:50001")}
	f.Fuzz(func(t *testing.T, in []byte) {
		var buf bytes.Buffer
		w, err := capture.NewWriter(&buf, capture.PCAP, capture.Ethernet)
		if err != nil {
			t.Fatal(err)
		}
		ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := 0; len(in) >= 2 && i < 64; i++ {
			n, dir := int(in[0]), in[1]
			in = in[2:]
			n = min(n, len(in))
			plain := in[:n]
			in = in[n:]
			wire := make([]byte, len(plain))
			dissect.Encrypt(wire, plain)
			src, dst := clients[dir>>1&1], server
			if dir&1 == 1 {
				src, dst = dst, src
			}
			ts = ts.Add(time.Duration(dir) * 10 * time.Millisecond)
			if err := w.WriteUDP(ts, src, dst, wire); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		rd, err := capture.NewReader(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		b, ref := measure.NewBuilder(), measure.NewReferenceBuilder()
		if _, err := flow.Run(rd, flow.New(flow.Options{Servers: []netip.AddrPort{server}}), func(r *flow.Record) bool { b.Add(r); ref.Add(r); return true }); err != nil {
			t.Fatal(err)
		}
		m := b.Finish()
		got, err := json.Marshal(m)
		if err != nil {
			t.Fatalf("measures do not encode: %v", err)
		}
		if want, _ := json.Marshal(ref.Finish()); !bytes.Equal(got, want) {
			t.Fatalf("measures differ from the reference's:\n%s\nwant\n%s", got, want)
		}
		for _, c := range m.Cadence {
			if c.P50MS > c.P90MS || c.Intervals == 0 {
				t.Fatalf("cadence %+v", c)
			}
		}
	})
}

// TestBuilderMatchesReference: on every bundled capture, and on the
// OpenBC battle repeated (sessions that reconnect, relay entries that
// expire across copies; each copy's clients come from the same ports), the Builder's measures are the reference's.
func TestBuilderMatchesReference(t *testing.T) {
	files, _ := filepath.Glob("../../testdata/*/*.pcap*")
	files = slices.DeleteFunc(files, func(f string) bool { return strings.Contains(f, ".golden") })
	if len(files) < 5 {
		t.Fatalf("bundled captures: %v", files)
	}
	for _, f := range files {
		rd, err := capture.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		b, ref := measure.NewBuilder(), measure.NewReferenceBuilder()
		if _, err := flow.Run(rd, flow.New(flow.Options{}), func(r *flow.Record) bool { b.Add(r); ref.Add(r); return true }); err != nil {
			t.Fatal(err)
		}
		rd.Close()
		sameMeasures(t, f, b, ref)
	}
	recs := capturetest.LoadCapture(t, "testdata/openbc/networked-battle.pcap")
	b, ref := measure.NewBuilder(), measure.NewReferenceBuilder()
	tr := flow.New(flow.Options{})
	emit := func(r *flow.Record) { b.Add(r); ref.Add(r) }
	span := recs[len(recs)-1].Time.Sub(recs[0].Time) + 5*time.Second
	for c := range 3 {
		for _, d := range recs {
			tr.Datagram(d.Frame, d.Time.Add(time.Duration(c)*span), d.Src, d.Dst, d.Payload, emit)
		}
	}
	tr.Finish(emit)
	sameMeasures(t, "OpenBC battle x3", b, ref)
}

func sameMeasures(t *testing.T, name string, b *measure.Builder, ref *measure.ReferenceBuilder) {
	t.Helper()
	got, _ := json.Marshal(b.Finish())
	want, _ := json.Marshal(ref.Finish())
	if !bytes.Equal(got, want) {
		t.Errorf("%s: measures differ from the reference's:\n%s\nwant\n%s", name, got, want)
	}
}

// FuzzBuilderFlows feeds the tracker datagrams of up to 100 clients, with
// time steps from the fuzz input that include steps back, steps past
// Window and far-off times (a damaged capture's), straight into the
// tracker (no pcap, whose seconds are 32 bits): the Builder's measures are
// the reference's. More than 64 flows take the relay matrix past its
// per-flow bits, and far-off times past wallclock's near subtraction.
func FuzzBuilderFlows(f *testing.F) {
	msgs := [][]byte{}
	for _, s := range []string{
		"0201321680010021012FCBAF4D0100A1E601854900931700",
		"02013217800D00190D0000400201DF8711FFFF03400088D85C",
		"020132086000000321",
		"FF010308010000007F00",
		// StateUpdates: OpenBC's client's (families 0x1x, 0x0x), stock's
		// server's with subsystems (0x2x, 0x3x).
		"02013215001cffffff3f000000001cb5a9cc02027e5a48",
		"02013220001cffffff3fcdcccc3d0da12881420e794742b9aeeec120b3a8d005057e",
		"01013218001cffffff3f3477a4422002ff4364ffffffffffff64",
		"01013225001cffffff3f3477a7423eae60005b4fa65900002078894b02ff4364ffffffffffff64",
	} {
		b, _ := hex.DecodeString(s)
		msgs = append(msgs, b)
	}
	f.Add([]byte{0, 0, 1, 0, 1, 2, 0, 1, 1, 3, 1, 2})
	f.Add([]byte{5, 0, 1, 0, 5, 1, 2, 1, 4, 0, 1, 3, 5, 0, 1, 3, 6, 1, 2, 2, 7, 1, 2, 3, 6, 1, 2, 128 + 9, 7, 1, 2, 3, 5, 0, 1, 7, 4, 0, 1, 3})
	f.Add(bytes.Repeat([]byte{0, 0, 0, 3, 1, 1, 0, 1, 1, 2, 0, 6}, 40))
	f.Add([]byte{0, 0, 5, 0, 1, 1, 5, 9, 0, 0, 5, 10, 1, 1, 5, 11})
	f.Add([]byte{1, 0, 5, 128 + 11, 1, 1, 6, 2, 1, 0, 5, 3, 1, 1, 5, 4, 1, 0, 7, 128 + 12, 1, 1, 7, 5, 1, 0, 5, 128 + 9, 1, 1, 5, 1})
	steps := []time.Duration{0, time.Millisecond, 10 * time.Millisecond, 99 * time.Millisecond,
		time.Second, 2 * time.Second, 2*time.Second + 1, -time.Second, -3 * time.Second,
		1 << 33 * time.Second, -(1 << 33) * time.Second, math.MaxInt64, math.MinInt64}
	server := netip.MustParseAddrPort("10.0.0.1:22101")
	f.Fuzz(func(t *testing.T, in []byte) {
		b, ref := measure.NewBuilder(), measure.NewReferenceBuilder()
		emit := func(r *flow.Record) { b.Add(r); ref.Add(r) }
		tr := flow.New(flow.Options{Servers: []netip.AddrPort{server}})
		ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := 0; len(in) >= 4 && i < 400; i++ {
			msg, dir, client, step := msgs[in[0]%byte(len(msgs))], in[1], int(in[2])%100, in[3]
			in = in[4:]
			if s := steps[int(step)%len(steps)]; step >= 128 {
				ts = time.Unix(int64(s), int64(step)) // far-off, absolute
			} else {
				ts = ts.Add(s)
			}
			wire := make([]byte, len(msg))
			dissect.Encrypt(wire, msg)
			src, dst := netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 1, byte(client)}), uint16(50000+client)), server
			if dir&1 == 1 {
				src, dst = dst, src
			}
			tr.Datagram(i+1, ts, src, dst, wire, emit)
		}
		tr.Finish(emit)
		got, err := json.Marshal(b.Finish())
		if err != nil {
			t.Fatalf("measures do not encode: %v", err)
		}
		if want, _ := json.Marshal(ref.Finish()); !bytes.Equal(got, want) {
			t.Fatalf("measures differ from the reference's:\n%s\nwant\n%s", got, want)
		}
	})
}

// TestBuilderManyFlows: 80 clients each send a message that the server
// copies twice to the 79 others; the first copy to each counts, the second
// is a copy of nothing (the flows past the 64 that have a bit in a relay
// entry are followed apart), as in the reference.
func TestBuilderManyFlows(t *testing.T) {
	msg, _ := hex.DecodeString("02013217800D00190D0000400201DF8711FFFF03400088D85C")
	wire := make([]byte, len(msg))
	dissect.Encrypt(wire, msg)
	server := netip.MustParseAddrPort("10.0.0.1:22101")
	client := func(i int) netip.AddrPort {
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 1, byte(i)}), uint16(50000+i))
	}
	b, ref := measure.NewBuilder(), measure.NewReferenceBuilder()
	emit := func(r *flow.Record) { b.Add(r); ref.Add(r) }
	tr := flow.New(flow.Options{Servers: []netip.AddrPort{server}})
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	frame := 0
	const n = 80
	for i := range n {
		frame++
		tr.Datagram(frame, ts, client(i), server, wire, emit)
		for j := range n {
			for range 2 {
				if j != i {
					frame++
					ts = ts.Add(time.Microsecond)
					tr.Datagram(frame, ts, server, client(j), wire, emit)
				}
			}
		}
		ts = ts.Add(3 * time.Second) // past Window: each message is matched alone
	}
	tr.Finish(emit)
	m := b.Finish()
	if len(m.Relay) != 1 || m.Relay[0].Messages != n || m.Relay[0].ToOthers != n*(n-1) || m.Relay[0].ToSender != 0 {
		t.Fatalf("relay matrix %+v, want %d messages, each copied to the %d others", m.Relay, n, n-1)
	}
	got, _ := json.Marshal(m)
	if want, _ := json.Marshal(ref.Finish()); !bytes.Equal(got, want) {
		t.Fatalf("measures differ from the reference's:\n%s\nwant\n%s", got, want)
	}
}

// TestBuilderHandBuiltRecords: a record whose Payload is not its message's
// (built by hand, without the Tracker's Payload) is matched by its
// message's own bytes, not by the record's payload hash: the OpenBC
// battle's measures are the same with every record's Payload left out.
func TestBuilderHandBuiltRecords(t *testing.T) {
	recs := capturetest.LoadCapture(t, "testdata/openbc/networked-battle.pcap")
	b, bare := measure.NewBuilder(), measure.NewBuilder()
	tr := flow.New(flow.Options{})
	emit := func(r *flow.Record) {
		c := *r // (before r's hash is asked for, which c would carry)
		c.Payload = nil
		bare.Add(&c)
		b.Add(r)
	}
	for _, d := range recs {
		tr.Datagram(d.Frame, d.Time, d.Src, d.Dst, d.Payload, emit)
	}
	tr.Finish(emit)
	m := b.Finish()
	if len(m.Relay) == 0 {
		t.Fatal("no relay matrix on the battle")
	}
	got, _ := json.Marshal(bare.Finish())
	if want, _ := json.Marshal(m); !bytes.Equal(got, want) {
		t.Fatalf("without Payload:\n%s\nwant\n%s", got, want)
	}
}

// TestBuilderManyShips: StateUpdates of two families for more ships than
// the Builder keeps lanes for; past maxLanes the updates are counted as
// dropped, and still in the flag-family mix, as in the reference.
func TestBuilderManyShips(t *testing.T) {
	var msgs [][]byte
	for _, s := range []string{
		"02013215001cffffff3f000000001cb5a9cc02027e5a48",                       // family 0x1x
		"02013220001cffffff3fcdcccc3d0da12881420e794742b9aeeec120b3a8d005057e", // family 0x0x
	} {
		b, _ := hex.DecodeString(s)
		msgs = append(msgs, b)
	}
	server := netip.MustParseAddrPort("10.0.0.1:22101")
	client := netip.MustParseAddrPort("10.0.1.2:50000")
	b, ref := measure.NewBuilder(), measure.NewReferenceBuilder()
	emit := func(r *flow.Record) { b.Add(r); ref.Add(r) }
	tr := flow.New(flow.Options{Servers: []netip.AddrPort{server}})
	ts := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	frame := 0
	for ship := range 3000 {
		for i := range 3 {
			msg := slices.Clone(msgs[(ship+i)%2])
			obj := uint32(0x3FFFFFFF) + uint32(ship)
			msg[6], msg[7], msg[8], msg[9] = byte(obj), byte(obj>>8), byte(obj>>16), byte(obj>>24)
			wire := make([]byte, len(msg))
			dissect.Encrypt(wire, msg)
			frame++
			ts = ts.Add(time.Millisecond)
			tr.Datagram(frame, ts, client, server, wire, emit)
		}
	}
	tr.Finish(emit)
	m := b.Finish()
	if m.LanesDropped == 0 || len(m.Lanes) != 8192 {
		t.Fatalf("%d lanes, %d updates dropped: want 8192 kept and the rest dropped", len(m.Lanes), m.LanesDropped)
	}
	if fam := m.FlagFamilies["C->S"]; fam["0x1x"]+fam["0x0x"] != 9000 {
		t.Fatalf("flag families %v, want 9000 updates", fam)
	}
	got, _ := json.Marshal(m)
	if want, _ := json.Marshal(ref.Finish()); !bytes.Equal(got, want) {
		t.Fatalf("measures differ from the reference's")
	}
}
