package pipeline_test

import (
	"bytes"
	"encoding/hex"
	"net/netip"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/report"
	"github.com/bcwire/bcwire/session"
)

// FuzzPipeline feeds whole datagrams through the whole pipeline: the input
// is split into datagrams ([len:u8][dir:u8][plaintext]...), encrypted,
// written to a pcap, read back, followed by Run and by RunParallel, built
// into sessions and printed. Nothing may panic, and the two runners must
// agree byte for byte.
func FuzzPipeline(f *testing.F) {
	for _, s := range []string{
		"01020306C0000002321B80000020000800736372697074732F07004170702E70796320",
		"0201321680010021012FCBAF4D0100A1E601854900931700",
		"020132086000000321",
		"FF010308010000007F00",
		"02013217800D00190D0000400201DF8711FFFF03400088D85C",
	} {
		b, _ := hex.DecodeString(s)
		f.Add(append([]byte{byte(len(b)), b[0] & 1}, b...))
	}
	f.Add([]byte{5, 0, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 3, 1, 1, 0x32, 0})
	server := netip.MustParseAddrPort("10.0.0.1:22101")
	clients := []netip.AddrPort{netip.MustParseAddrPort("10.0.1.2:50000"), netip.MustParseAddrPort("10.0.1.3:50001")}
	f.Fuzz(func(t *testing.T, in []byte) {
		var buf bytes.Buffer
		w, err := capture.NewWriter(&buf, capture.PCAP, capture.Ethernet)
		if err != nil {
			t.Fatal(err)
		}
		w.MTU = 200 // larger datagrams go as IPv4 fragments
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
		run := func(workers int) string {
			rd, err := capture.NewReader(bytes.NewReader(buf.Bytes()))
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			dp := report.NewDecodePrinter(&out, report.DecodeJSON, false)
			sp := report.NewStatsPrinter(&out, true, false, true)
			bl := session.NewBuilder(session.Options{}, func(s *session.Session) {
				if err := sp.Session("fuzz", s); err != nil {
					t.Fatal(err)
				}
			})
			emit := func(r *flow.Record) bool {
				if r.Kind == flow.KindMessage && r.Msg == nil {
					t.Fatal("message record without a message")
				}
				if err := dp.Print(r); err != nil {
					t.Fatal(err)
				}
				bl.Add(r)
				return true
			}
			tr := flow.New(flow.Options{MaxFragmentSets: 4, MaxFragmentBytes: 2048, MaxFlows: 2, MaxServers: 2})
			if workers == 0 {
				_, err = flow.Run(rd, tr, emit)
			} else {
				_, err = flow.RunParallel(rd, tr, workers, emit)
			}
			if err != nil {
				t.Fatal(err)
			}
			bl.Finish()
			dp.Flush()
			if err := sp.Totals([]string{"fuzz"}, bl.Totals(), bl.Emitted()); err != nil {
				t.Fatal(err)
			}
			return out.String()
		}
		if a, b := run(0), run(2); a != b {
			t.Fatalf("Run and RunParallel differ:\n%s\n---\n%s", a, b)
		}
	})
}
