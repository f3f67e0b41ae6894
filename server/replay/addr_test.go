package replay

import (
	"bytes"
	"encoding/binary"
	"net/netip"
	"testing"

	"github.com/bcwire/bcwire/dissect"
)

// The decrypted stock bytes quoted in PROTOCOL.md.
var (
	// Client connect: peer 0xFF, one message, type 0x03, reliable+ordered,
	// seq 0, then IPv4 10.10.10.239 and port 0x5F0A (big-endian).
	stockConnect = []byte{0xFF, 0x01, 0x03, 0x0F, 0xC0, 0x00, 0x00, 0x0A, 0x0A, 0x0A, 0xEF, 0x5F, 0x0A, 0x00, 0x00, 0x00, 0x00}
	// Server keepalive message (type 0x00, length 22: slot 2, client IPv4,
	// "Cady2" in UTF-16LE), here in a datagram from the server (peer 0x01).
	stockKeepalive = append([]byte{0x01, 0x01}, 0x00, 0x16, 0xC0, 0x01, 0x00, 0x02, 0x0A, 0x0A, 0x0A, 0xEF,
		0x43, 0x00, 0x61, 0x00, 0x64, 0x00, 0x79, 0x00, 0x32, 0x00, 0x00, 0x00)
)

var stockClient = netip.MustParseAddrPort("10.10.10.239:24330") // 0x5F0A = 24330

func datagramOf(plain []byte, dir uint8) *Datagram {
	d := &Datagram{Plain: plain, Wire: make([]byte, len(plain))}
	dissect.Encrypt(d.Wire, plain)
	d.Fields = clientFields(plain, stockClient)
	return d
}

func TestAddressFieldsOfStockBytes(t *testing.T) {
	d := datagramOf(stockConnect, 0)
	if len(d.Fields) != 2 || d.Fields[0] != (AddrField{Offset: 7, Name: "connect-request ip"}) ||
		d.Fields[1] != (AddrField{Offset: 11, Port: true, Name: "connect-request port"}) {
		t.Fatalf("connect fields %+v, want ip at 7 and port at 11", d.Fields)
	}
	k := datagramOf(stockKeepalive, 0)
	if len(k.Fields) != 1 || k.Fields[0] != (AddrField{Offset: 8, Name: "peer-info ip"}) {
		t.Fatalf("keepalive fields %+v, want ip at 8", k.Fields)
	}
	// A field holding someone else's address is not the client's.
	if f := clientFields(stockKeepalive, netip.MustParseAddrPort("10.0.0.9:24330")); len(f) != 0 {
		t.Errorf("fields %+v for another client", f)
	}
	// A disconnect [slot][ipv4] carries it too.
	disc := []byte{0x02, 0x01, 0x05, 0x0A, 0xC0, 0x03, 0x00, 0x02, 0x0A, 0x0A, 0x0A, 0xEF}
	if f := clientFields(disc, stockClient); len(f) != 1 || f[0].Offset != 8 || f[0].Name != "disconnect ip" {
		t.Errorf("disconnect fields %+v", f)
	}
}

func TestRewriteChangesOnlyTheAddress(t *testing.T) {
	live := netip.MustParseAddrPort("127.0.0.1:41234")
	d := datagramOf(stockConnect, 0)
	wire, plain, changed := Rewrite(d, live)
	want := append([]byte(nil), stockConnect...)
	copy(want[7:], []byte{127, 0, 0, 1})
	binary.BigEndian.PutUint16(want[11:], 41234)
	if !bytes.Equal(plain, want) {
		t.Fatalf("plain % X\nwant  % X", plain, want)
	}
	dec := make([]byte, len(wire))
	dissect.Decrypt(dec, wire)
	if !bytes.Equal(dec, want) || wire[0] != 0xFF {
		t.Fatalf("re-encrypted datagram decrypts to % X", dec)
	}
	if bytes.Equal(wire, d.Wire) {
		t.Fatal("wire bytes unchanged")
	}
	if len(changed) != 2 || changed[0].String() != "connect-request ip 10.10.10.239 -> 127.0.0.1" ||
		changed[1].String() != "connect-request port 24330 -> 41234" {
		t.Fatalf("changed %v", changed)
	}
	if !bytes.Equal(d.Plain, stockConnect) {
		t.Fatal("Rewrite modified the script")
	}

	k := datagramOf(stockKeepalive, 0)
	_, kp, kc := Rewrite(k, live)
	wantK := append([]byte(nil), stockKeepalive...)
	copy(wantK[8:], []byte{127, 0, 0, 1})
	if !bytes.Equal(kp, wantK) || len(kc) != 1 || kc[0].Field != "peer-info ip" {
		t.Fatalf("keepalive % X changed %v", kp, kc)
	}

	// The same address: nothing to rewrite, the captured bytes go out.
	w2, _, c2 := Rewrite(d, stockClient)
	if len(c2) != 0 || !bytes.Equal(w2, d.Wire) {
		t.Fatalf("rewrite to the captured address changed %v", c2)
	}
}

func TestMaskedIgnoresAnyAddress(t *testing.T) {
	other := append([]byte(nil), stockConnect...)
	copy(other[7:], []byte{192, 168, 1, 5, 0x12, 0x34})
	if !bytes.Equal(masked(other), masked(stockConnect)) {
		t.Fatal("datagrams differing only in the address do not match")
	}
	seq := append([]byte(nil), stockConnect...)
	seq[5] = 1 // sequence number
	if bytes.Equal(masked(seq), masked(stockConnect)) {
		t.Fatal("masking hid a sequence number")
	}
	// Damaged input does not panic and masks nothing.
	for n := range stockKeepalive {
		_ = masked(stockKeepalive[:n])
	}
}
