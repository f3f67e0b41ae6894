// This file tests IPv4 reassembly: fragmentation on write, out-of-order,
// duplicated and overlapping fragments, the caps and the timeout, and the
// report of incomplete sets.

package capture

import (
	"bytes"
	"errors"
	"fmt"
	"net/netip"
	"testing"
	"time"
)

func TestWriterFragmentsAtMTU(t *testing.T) {
	for _, mtu := range []int{68, 576, 1500, 9000} {
		t.Run(fmt.Sprint("mtu ", mtu), func(t *testing.T) {
			var buf bytes.Buffer
			w, err := NewWriter(&buf, PCAP, RawIPv4)
			if err != nil {
				t.Fatal(err)
			}
			w.MTU = mtu
			pl := payload(3, 5000)
			if err := w.WriteUDP(t0, addrA, addrB, pl); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			chunk := (mtu - 20) &^ 7
			wantRecs := (5008 + chunk - 1) / chunk
			pkts, errs, r := readAll(t, buf.Bytes(), Options{})
			if len(errs) != 0 || len(pkts) != 1 {
				t.Fatalf("got %d packets, errors %v", len(pkts), errs)
			}
			if p := pkts[0]; p.Reassembled != (wantRecs > 1) || p.Frame != wantRecs || !bytes.Equal(p.Payload, pl) {
				t.Errorf("got frame %d reassembled %v, want frame %d", p.Frame, p.Reassembled, wantRecs)
			}
			want := Stats{Records: wantRecs, UDP: 1, FragmentsSeen: wantRecs, Reassembled: 1}
			if wantRecs == 1 {
				want.FragmentsSeen, want.Reassembled = 0, 0
			}
			if st := r.Stats(); st != want {
				t.Errorf("stats %+v, want %+v", st, want)
			}
		})
	}
}

func TestWriterRejects(t *testing.T) {
	var buf bytes.Buffer
	if _, err := NewWriter(&buf, PCAP, LinuxSLL2); err == nil {
		t.Error("unsupported link accepted")
	}
	if _, err := NewWriter(&buf, Format(9), Ethernet); err == nil {
		t.Error("unknown format accepted")
	}
	w, err := NewWriter(&buf, PCAPNG, Ethernet)
	if err != nil {
		t.Fatal(err)
	}
	v6 := netip.MustParseAddrPort("[2001:db8::1]:22101")
	if err := w.WriteUDP(t0, v6, addrB, nil); err == nil {
		t.Error("IPv6 address accepted")
	}
	if err := w.WriteUDP(t0, addrA, addrB, make([]byte, 65508)); err == nil {
		t.Error("oversized datagram accepted")
	}
	w.MTU = 67
	if err := w.WriteUDP(t0, addrA, addrB, nil); err == nil {
		t.Error("MTU below 68 accepted")
	}
	// IPv4-mapped IPv6 addresses are plain IPv4.
	w.MTU = 0
	mapped := netip.AddrPortFrom(netip.AddrFrom16(addrA.Addr().As16()), addrA.Port())
	if err := w.WriteUDP(t0, mapped, addrB, nil); err != nil {
		t.Errorf("IPv4-mapped address: %v", err)
	}
}

// fragFile writes IPv4 packets as raw records of a RawIPv4 pcap, one
// millisecond apart.
func fragFile(t *testing.T, packets [][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, PCAP, RawIPv4)
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range packets {
		if err := w.WriteRaw(t0.Add(time.Duration(i)*time.Millisecond), p); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReassemblyOrders(t *testing.T) {
	pl := payload(9, 3000)
	f := ipv4Fragments(addrA, addrB, 0x4242, pl, 808) // 4 fragments: 808*3 + 584
	if len(f) != 4 {
		t.Fatalf("%d fragments", len(f))
	}
	whole := ipv4UDP(addrA, addrB, 0x4242, pl)[20:] // the full IP payload
	// overlapping pieces at 8-byte offsets, each consistent with the datagram.
	piece := func(lo, hi int) []byte {
		return ipv4Fragment(addrA, addrB, 0x4242, lo, hi < len(whole), whole[lo:hi])
	}
	tests := []struct {
		name  string
		order [][]byte
	}{
		{"in order", [][]byte{f[0], f[1], f[2], f[3]}},
		{"reversed", [][]byte{f[3], f[2], f[1], f[0]}},
		{"shuffled", [][]byte{f[2], f[0], f[3], f[1]}},
		{"duplicates", [][]byte{f[1], f[1], f[0], f[3], f[0], f[2]}},
		{"overlaps", [][]byte{piece(0, 1000), piece(800, 2400), piece(16, 64), piece(2000, len(whole))}},
		{"last first then overlap", [][]byte{piece(1600, len(whole)), piece(0, 808), piece(8, 1600)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pkts, errs, r := readAll(t, fragFile(t, tc.order), Options{})
			if len(errs) != 0 || len(pkts) != 1 {
				t.Fatalf("got %d packets, errors %v", len(pkts), errs)
			}
			p := pkts[0]
			if !p.Reassembled || p.Src != addrA || p.Dst != addrB || !bytes.Equal(p.Payload, pl) {
				t.Fatalf("bad reassembly: %d bytes, reassembled %v", len(p.Payload), p.Reassembled)
			}
			// The datagram completes at the last fragment that fills a gap.
			if p.Frame > len(tc.order) || !p.Time.Equal(t0.Add(time.Duration(p.Frame-1)*time.Millisecond)) {
				t.Errorf("frame %d time %v", p.Frame, p.Time)
			}
			st := r.Stats()
			if st.FragmentsSeen != p.Frame || st.Reassembled != 1 || st.FragmentsIncomplete != 0 || st.FragmentsEvicted != 0 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

func TestReassemblyInterleaved(t *testing.T) {
	// Same ID from two sources, and two IDs between the same pair, all
	// interleaved: four independent datagrams.
	a := ipv4Fragments(addrA, addrB, 1, payload(1, 2000), 1000)
	b := ipv4Fragments(addrC, addrB, 1, payload(2, 2000), 1000)
	c := ipv4Fragments(addrA, addrB, 2, payload(3, 2000), 1000)
	d := ipv4UDP(addrA, addrB, 3, []byte("unfragmented"))
	order := [][]byte{a[0], b[1], c[0], d, b[0], a[2], c[2], c[1], a[1], b[2]}
	pkts, errs, r := readAll(t, fragFile(t, order), Options{})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	var got []string
	for _, p := range pkts {
		got = append(got, fmt.Sprintf("%d:%v:%d", p.Frame, p.Src.Addr(), len(p.Payload)))
	}
	want := "4:10.0.0.1:12 8:10.0.0.1:2000 9:10.0.0.1:2000 10:172.16.1.9:2000"
	if s := fmt.Sprint(got); s != "["+want+"]" {
		t.Errorf("got %s, want [%s]", s, want)
	}
	if !bytes.Equal(pkts[1].Payload, payload(3, 2000)) || !bytes.Equal(pkts[2].Payload, payload(1, 2000)) ||
		!bytes.Equal(pkts[3].Payload, payload(2, 2000)) {
		t.Error("payloads mixed up between sets")
	}
	if st := r.Stats(); st.FragmentsSeen != 9 || st.Reassembled != 3 || st.UDP != 4 {
		t.Errorf("stats %+v", st)
	}
}

func TestFragmentSetCap(t *testing.T) {
	// Three datagrams start; with room for two sets, the oldest (x) is
	// evicted, y and z complete, and x's second fragment starts a set that
	// is still incomplete at the end.
	x := ipv4Fragments(addrA, addrB, 1, payload(1, 1500), 800)
	y := ipv4Fragments(addrA, addrB, 2, payload(2, 1500), 800)
	z := ipv4Fragments(addrA, addrB, 3, payload(3, 1500), 800)
	file := fragFile(t, [][]byte{x[0], y[0], z[0], z[1], y[1], x[1]})
	pkts, errs, r := readAll(t, file, Options{MaxFragmentSets: 2})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if len(pkts) != 2 || pkts[0].Frame != 4 || pkts[1].Frame != 5 ||
		!bytes.Equal(pkts[0].Payload, payload(3, 1500)) || !bytes.Equal(pkts[1].Payload, payload(2, 1500)) {
		t.Fatalf("got %+v", pkts)
	}
	want := Stats{Records: 6, UDP: 2, FragmentsSeen: 6, Reassembled: 2, FragmentsEvicted: 1, FragmentsIncomplete: 1}
	if st := r.Stats(); st != want {
		t.Errorf("stats %+v, want %+v", st, want)
	}
	inc := r.Incomplete()
	wantInc := FragmentSetInfo{Src: addrA.Addr(), Dst: addrB.Addr(), Proto: 17, ID: 1, FirstFrame: 6,
		FirstTime: t0.Add(5 * time.Millisecond), Fragments: 1, Bytes: 708, TotalLen: 1508}
	if len(inc) != 1 || inc[0] != wantInc {
		t.Errorf("incomplete %+v, want %+v", inc, wantInc)
	}
}

func TestFragmentByteCap(t *testing.T) {
	// Each first fragment buffers 1600 bytes; a 4000-byte cap holds two.
	var first, rest [][]byte
	for id := range uint16(3) {
		f := ipv4Fragments(addrA, addrB, id, payload(int(id), 2000), 1600)
		first, rest = append(first, f[0]), append(rest, f[1])
	}
	file := fragFile(t, append(first, rest[2], rest[1]))
	pkts, errs, r := readAll(t, file, Options{MaxFragmentBytes: 4000})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	if len(pkts) != 2 || !bytes.Equal(pkts[0].Payload, payload(2, 2000)) || !bytes.Equal(pkts[1].Payload, payload(1, 2000)) {
		t.Fatalf("got %d packets", len(pkts))
	}
	if st := r.Stats(); st.FragmentsEvicted != 1 || st.FragmentsIncomplete != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestFragmentTimeoutAndIncomplete(t *testing.T) {
	// 2992 bytes + the UDP header: three fragments of 1000 bytes.
	f := ipv4Fragments(addrA, addrB, 77, payload(1, 2992), 1000)
	g := ipv4Fragments(addrC, addrB, 78, payload(2, 2992), 1000)
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, PCAPNG, RawIPv4)
	w.WriteRaw(t0, f[0])                             // frame 1: set f starts
	w.WriteRaw(t0.Add(10*time.Second), g[0])         // frame 2: set g starts
	w.WriteRaw(t0.Add(10*time.Second), g[2])         // frame 3
	w.WriteRaw(t0.Add(31*time.Second), f[1])         // frame 4: f expired first, so this starts a new set
	w.WriteRaw(t0.Add(31*time.Second), f[2])         // frame 5
	w.WriteRaw(t0.Add(31*time.Second), []byte{0x45}) // frame 6: damaged
	w.Flush()
	pkts, errs, r := readAll(t, buf.Bytes(), Options{})
	if len(pkts) != 0 || len(errs) != 1 || errs[0].Frame != 6 {
		t.Fatalf("got %+v, %v", pkts, errs)
	}
	st := r.Stats()
	want := Stats{Records: 6, Damaged: 1, FragmentsSeen: 5, FragmentsEvicted: 1, FragmentsExpired: 1, FragmentsIncomplete: 2}
	if st != want {
		t.Errorf("stats %+v, want %+v", st, want)
	}
	inc := r.Incomplete()
	if len(inc) != 2 {
		t.Fatalf("incomplete %+v", inc)
	}
	wantG := FragmentSetInfo{Src: addrC.Addr(), Dst: addrB.Addr(), Proto: 17, ID: 78, FirstFrame: 2,
		FirstTime: t0.Add(10 * time.Second), Fragments: 2, Bytes: 2000, TotalLen: 3000}
	wantF := FragmentSetInfo{Src: addrA.Addr(), Dst: addrB.Addr(), Proto: 17, ID: 77, FirstFrame: 4,
		FirstTime: t0.Add(31 * time.Second), Fragments: 2, Bytes: 2000, TotalLen: 3000}
	if inc[0] != wantG || inc[1] != wantF {
		t.Errorf("incomplete:\n got %+v\n     %+v\nwant %+v\n     %+v", inc[0], inc[1], wantG, wantF)
	}

	// A negative timeout disables expiry: f completes.
	pkts, _, r = readAll(t, buf.Bytes(), Options{FragmentTimeout: -1})
	if len(pkts) != 1 || pkts[0].Frame != 5 || r.Stats().FragmentsIncomplete != 1 {
		t.Errorf("without timeout: %+v %+v", pkts, r.Stats())
	}
}

func TestFragmentDamage(t *testing.T) {
	f := ipv4Fragments(addrA, addrB, 5, payload(1, 3000), 1000)
	whole := ipv4UDP(addrA, addrB, 5, payload(1, 3000))[20:]
	tests := []struct {
		name    string
		packets [][]byte
		bad     int // frame of the damaged fragment
	}{
		{"two different ends", [][]byte{f[3], ipv4Fragment(addrA, addrB, 5, 2000, false, whole[2000:2500])}, 2},
		{"data past the end", [][]byte{f[3], ipv4Fragment(addrA, addrB, 5, 2504, true, make([]byte, 600))}, 2},
		{"end before data", [][]byte{f[2], ipv4Fragment(addrA, addrB, 5, 1000, false, whole[1000:1500])}, 2},
		{"past 64 KiB", [][]byte{ipv4Fragment(addrA, addrB, 5, 8191*8, true, make([]byte, 100))}, 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, errs, r := readAll(t, fragFile(t, tc.packets), Options{})
			if len(errs) != 1 || errs[0].Frame != tc.bad || !errors.Is(errs[0], ErrFragment) {
				t.Fatalf("got errors %v", errs)
			}
			if st := r.Stats(); st.Damaged != 1 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// TestReassembledUDPDamage: a reassembled datagram whose UDP length is wrong
// is reported at the completing frame.
func TestReassembledUDPDamage(t *testing.T) {
	whole := ipv4UDP(addrA, addrB, 5, payload(1, 3000))[20:]
	whole[4], whole[5] = 0xff, 0xff
	pkts, errs, _ := readAll(t, fragFile(t, [][]byte{
		ipv4Fragment(addrA, addrB, 5, 0, true, whole[:1600]),
		ipv4Fragment(addrA, addrB, 5, 1600, false, whole[1600:]),
	}), Options{})
	if len(pkts) != 0 || len(errs) != 1 || errs[0].Frame != 2 || !errors.Is(errs[0], ErrUDPHeader) {
		t.Fatalf("got %+v, %v", pkts, errs)
	}
}
