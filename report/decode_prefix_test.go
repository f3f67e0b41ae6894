package report

import (
	"fmt"
	"math/rand/v2"
	"net/netip"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
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

// The record times are written as time.RFC3339Nano writes them in UTC,
// for any nanoseconds (trailing zeros dropped) and across seconds.
func TestRecordTimesMatchRFC3339Nano(t *testing.T) {
	var c recordTimes
	rng := rand.New(rand.NewPCG(3, 0))
	base := time.Date(2026, 1, 10, 20, 0, 0, 0, time.UTC)
	for i := range 20000 {
		ns := rng.Int64N(1e9)
		switch i % 4 {
		case 1:
			ns -= ns % 1000 // microseconds
		case 2:
			ns = int64(rng.IntN(10)) * 1e8 // one digit, or none
		}
		tm := base.Add(time.Duration(rng.Int64N(5))*time.Second + time.Duration(ns))
		if got, want := string(c.append(nil, tm)), tm.UTC().Format(time.RFC3339Nano); got != want {
			t.Fatalf("%v: %s, want %s", tm, got, want)
		}
	}
}

// openingKey.of is keyOf(r) == k: a record differing from the key's in
// any one part (frame, time, its location, either address or port,
// direction) is not the key's, and the same record is.
func TestOpeningKeyOfMatchesKeyOf(t *testing.T) {
	base := flow.Record{Frame: 7, Time: time.Unix(100, 5), Src: netip.MustParseAddrPort("10.0.0.1:22101"),
		Dst: netip.MustParseAddrPort("10.0.1.10:50000"), Dir: game.ServerToClient}
	k := keyOf(&base)
	changes := []func(r *flow.Record){
		func(*flow.Record) {},
		func(r *flow.Record) { r.Frame++ },
		func(r *flow.Record) { r.Time = r.Time.Add(1) },
		func(r *flow.Record) { r.Time = r.Time.In(time.FixedZone("x", 0)) },
		func(r *flow.Record) { r.Src = netip.MustParseAddrPort("10.0.0.2:22101") },
		func(r *flow.Record) { r.Src = netip.MustParseAddrPort("10.0.0.1:22102") },
		func(r *flow.Record) { r.Dst = netip.MustParseAddrPort("[::ffff:10.0.1.10]:50000") },
		func(r *flow.Record) { r.Dir = game.ClientToServer },
		func(r *flow.Record) { r.MsgIndex, r.Peer = 3, 2 }, // not part of the opening
	}
	for i, change := range changes {
		r := base
		change(&r)
		if got, want := k.of(&r), keyOf(&r) == k; got != want {
			t.Errorf("change %d: of = %v, keyOf == %v", i, got, want)
		}
	}
}
