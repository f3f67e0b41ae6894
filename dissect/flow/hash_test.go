package flow_test

import (
	"testing"

	"github.com/bcwire/bcwire/dissect/capture/capturetest"
	"github.com/bcwire/bcwire/dissect/flow"
)

// MessageHash must tell apart messages that differ in one byte or in
// length, on both sides of its 16-to-32-byte case and including the bytes
// its overlapping words read twice.
func TestMessageHashDistinct(t *testing.T) {
	seen := map[uint64][]byte{}
	add := func(b []byte) {
		h := flow.MessageHash(b)
		if o, ok := seen[h]; ok && string(o) != string(b) {
			t.Fatalf("% X and % X both hash to %x", o, b, h)
		}
		seen[h] = append([]byte(nil), b...)
	}
	for n := range 80 {
		b := make([]byte, n)
		add(b)
		for i := range n {
			for _, v := range []byte{1, 0x80, 0xFF} {
				b[i] = v
				add(b)
				b[i] = 0
			}
		}
	}
}

// PayloadHash, remembered per message on a Tracker's records, is always
// MessageHash of the record's own payload: asked twice, or not asked on one
// message and asked on the next, it never gives another message's hash.
func TestPayloadHashIsTheRecordsOwn(t *testing.T) {
	recs := capturetest.LoadCapture(t, "testdata/openbc/networked-battle.pcap")
	tr := flow.New(flow.Options{})
	n, asked := 0, 0
	emit := func(r *flow.Record) {
		n++
		if n%3 == 0 {
			return // the next record must not see this one's hash
		}
		want := flow.MessageHash(r.Payload)
		for range 2 {
			if got := r.PayloadHash(); got != want {
				t.Fatalf("record %d (frame %d): PayloadHash %x, MessageHash of its payload %x", n, r.Frame, got, want)
			}
		}
		if r.Payload != nil {
			asked++
		}
	}
	for _, d := range recs {
		tr.Datagram(d.Frame, d.Time, d.Src, d.Dst, d.Payload, emit)
	}
	tr.Finish(emit)
	if asked < 1000 {
		t.Fatalf("%d records with a payload asked, want the battle's thousands", asked)
	}
	// A record built by hand, its payload changed between calls.
	r := flow.Record{Payload: []byte("0123456789abcdefXYZ")}
	h1 := r.PayloadHash()
	r.Payload = []byte("0123456789abcdefXYW")
	if h2 := r.PayloadHash(); h2 == h1 || h2 != flow.MessageHash(r.Payload) {
		t.Fatalf("hand-built record: hash %x after the payload changed, was %x", h2, h1)
	}
}
