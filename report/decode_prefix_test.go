package report

import (
	"fmt"
	"net/netip"
	"testing"
)

// The line prefix is appended by hand for speed; it must stay what the
// fmt verbs it replaced wrote, for every kind of address and width.
func TestLinePrefixMatchesFmt(t *testing.T) {
	addrs := []netip.AddrPort{
		netip.MustParseAddrPort("10.0.0.1:22101"),
		netip.MustParseAddrPort("255.255.255.255:65535"),
		netip.MustParseAddrPort("[2001:db8::1]:22101"),
		netip.MustParseAddrPort("[2001:db8:aaaa:bbbb:cccc:dddd:eeee:ffff]:1"),
		netip.MustParseAddrPort("[fe80::1%eth0]:5"),
		{},
	}
	for _, a := range addrs {
		if got, want := string(appendPadded(nil, 21, appendAddr(nil, a))), fmt.Sprintf("%21s", a); got != want {
			t.Errorf("right-aligned %v: %q, fmt %q", a, got, want)
		}
	}
	for _, v := range []int{0, 7, 123456, 1234567, -5} {
		if got, want := string(appendPadded(nil, 6, fmt.Appendf(nil, "%d", v))), fmt.Sprintf("%6d", v); got != want {
			t.Errorf("%d: %q, fmt %q", v, got, want)
		}
	}
	for i := range 256 {
		if hexByteUpper[i] != fmt.Sprintf("%02X", i) || ackFlagsText[i] != fmt.Sprintf("%#02x", i) {
			t.Fatalf("byte %d: %q %q", i, hexByteUpper[i], ackFlagsText[i])
		}
	}
}
