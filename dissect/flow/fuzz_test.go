package flow

import (
	"encoding/hex"
	"net/netip"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
)

func hexDecode(s string) ([]byte, error) { return hex.DecodeString(s) }

// FuzzTracker feeds arbitrary plaintext datagrams (encrypted first, as on the
// wire) through the whole pipeline: split, reassembly, game decoding. It
// must never panic, and every record must be well formed.
func FuzzTracker(f *testing.F) {
	for _, s := range []string{
		"01020306C0000002321B80000020000800736372697074732F07004170702E70796320",
		"0201321680010021012FCBAF4D0100A1E601854900931700",
		"0201320380",         // an empty game message
		"02013203000101",     // a data message shorter than its payload
		"020132086000000321", // fragment 0 of 3, unreliable
		"FF010308010000007F00",
		"02013217800D00190D0000400201DF8711FFFF03400088D85C",
	} {
		b, _ := hexDecode(s)
		f.Add(b)
	}
	server := netip.MustParseAddrPort("10.0.0.1:22101")
	client := netip.MustParseAddrPort("10.0.1.2:50000")
	f.Fuzz(func(t *testing.T, plain []byte) {
		tr := New(Options{MaxFragmentSets: 8, MaxFragmentBytes: 4096})
		wire := make([]byte, len(plain))
		dissect.Encrypt(wire, plain)
		check := func(r *Record) {
			if r.Kind == KindMessage && r.Msg == nil {
				t.Fatal("message record without a message")
			}
			if r.Game != nil && r.Game.Msg == nil {
				t.Fatal("game result without a message")
			}
		}
		src, dst := client, server
		if len(plain) > 0 && plain[0] == 1 {
			src, dst = server, client
		}
		// Twice, so reassembly and duplicate detection see repeats.
		tr.Datagram(1, time.Time{}, src, dst, wire, check)
		tr.Datagram(2, time.Time{}, src, dst, wire, check)
		tr.Finish(check)
	})
}
