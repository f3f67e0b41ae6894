package measure_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
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
