// This file tests reading: Writer→Reader round trips, both pcap magics and
// byte orders, pcapng interfaces and blocks, every link type, skipped
// traffic, and damaged records.

package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

type sent struct {
	t        time.Time
	src, dst netip.AddrPort
	payload  []byte
}

// roundTripInput is a mix of sizes: empty, tiny, typical game traffic, just
// under and over the MTU (fragmented), and the largest UDP/IPv4 datagram.
func roundTripInput() []sent {
	sizes := []int{0, 1, 37, 512, 1472, 1473, 4000, 65507}
	var in []sent
	for i, n := range sizes {
		src, dst := addrA, addrB
		if i%2 == 1 {
			src, dst = addrB, addrC
		}
		in = append(in, sent{t0.Add(time.Duration(i)*time.Second + time.Duration(i*1234567)), src, dst, payload(i, n)})
	}
	return in
}

func writeCapture(t *testing.T, format Format, link LinkType, in []sent) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, format, link)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range in {
		if err := w.WriteUDP(s.t, s.src, s.dst, s.payload); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestRoundTrip(t *testing.T) {
	in := roundTripInput()
	for _, format := range []Format{PCAP, PCAPNG} {
		for _, link := range []LinkType{Ethernet, LinuxSLL, Loopback, RawIPv4} {
			t.Run(fmt.Sprintf("%v/%v", format, link), func(t *testing.T) {
				file := writeCapture(t, format, link, in)
				if again := writeCapture(t, format, link, in); !bytes.Equal(file, again) {
					t.Fatal("writer output is not deterministic")
				}
				pkts, errs, r := readAll(t, file, Options{})
				if len(errs) > 0 {
					t.Fatalf("unexpected damage: %v", errs[0])
				}
				if len(pkts) != len(in) {
					t.Fatalf("got %d packets, want %d", len(pkts), len(in))
				}
				frame, frags := 0, 0
				for i, p := range pkts {
					want := in[i]
					// Each datagram takes one record per fragment; the
					// packet is reported at its last record.
					n := 1
					if 28+len(want.payload) > defaultMTU {
						n = (8 + len(want.payload) + 1479) / 1480
						frags += n
					}
					frame += n
					if p.Frame != frame {
						t.Errorf("packet %d: frame %d, want %d", i, p.Frame, frame)
					}
					if !p.Time.Equal(want.t) || p.Src != want.src || p.Dst != want.dst || !bytes.Equal(p.Payload, want.payload) {
						t.Errorf("packet %d: got %v %v->%v (%d bytes), want %v %v->%v (%d bytes)",
							i, p.Time, p.Src, p.Dst, len(p.Payload), want.t, want.src, want.dst, len(want.payload))
					}
					if p.Reassembled != (n > 1) {
						t.Errorf("packet %d: Reassembled = %v", i, p.Reassembled)
					}
				}
				st := r.Stats()
				want := Stats{Records: frame, UDP: len(in), FragmentsSeen: frags, Reassembled: 3}
				if st != want {
					t.Errorf("stats %+v, want %+v", st, want)
				}
				if r.Format() != format {
					t.Errorf("Format() = %v", r.Format())
				}
				if ifc, ok := r.Interface(0); !ok || ifc.LinkType != link {
					t.Errorf("Interface(0) = %+v, %v", ifc, ok)
				}
			})
		}
	}
}

func TestOpen(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.pcapng")
	if err := os.WriteFile(good, writeCapture(t, PCAPNG, Ethernet, roundTripInput()[:2]), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := Open(good)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2; i++ {
		if p, err := r.Next(); err != nil || p.Frame != i {
			t.Fatalf("Next = %v, %v", p, err)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("want io.EOF, got %v", err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Fatalf("Next after EOF: want io.EOF, got %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}

	for name, content := range map[string][]byte{
		"text":        []byte("this is not a capture file at all"),
		"empty":       nil,
		"short":       {0xd4, 0xc3},
		"pcap-header": {0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0},
		"ng-badorder": {0x0a, 0x0d, 0x0d, 0x0a, 28, 0, 0, 0, 1, 2, 3, 4},
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, content, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := Open(p); err == nil {
			t.Errorf("%s: Open succeeded", name)
		}
	}
	if _, err := Open(filepath.Join(dir, "missing")); err == nil {
		t.Error("Open of a missing file succeeded")
	}
}

func TestClassicMagics(t *testing.T) {
	ts := time.Date(2024, 3, 1, 12, 0, 1, 123456789, time.UTC)
	for _, order := range []byteOrder{binary.LittleEndian, binary.BigEndian} {
		for _, nanos := range []bool{false, true} {
			t.Run(fmt.Sprintf("%v/nanos=%v", order, nanos), func(t *testing.T) {
				file := newPcap(order, nanos, Ethernet, 65535).
					record(ts, ethernet(etherTypeIPv4, ipv4UDP(addrA, addrB, 1, []byte("hello")))).
					buf
				pkts, errs, _ := readAll(t, file, Options{})
				if len(errs) != 0 || len(pkts) != 1 {
					t.Fatalf("got %d packets, %d errors", len(pkts), len(errs))
				}
				want := ts
				if !nanos {
					want = ts.Truncate(time.Microsecond)
				}
				if !pkts[0].Time.Equal(want) || string(pkts[0].Payload) != "hello" {
					t.Errorf("got %v %q, want %v", pkts[0].Time, pkts[0].Payload, want)
				}
			})
		}
	}
}

func TestLinkTypes(t *testing.T) {
	udp := ipv4UDP(addrA, addrB, 7, []byte("bridge"))
	// IPv4 with one 4-byte option (IHL 6): a no-op padded by end-of-options.
	withOpts := append([]byte(nil), udp...)
	withOpts = append(withOpts[:20:20], append([]byte{1, 1, 1, 0}, udp[20:]...)...)
	withOpts[0] = 0x46
	binary.BigEndian.PutUint16(withOpts[2:4], uint16(len(withOpts)))
	binary.BigEndian.PutUint16(withOpts[10:12], 0)
	binary.BigEndian.PutUint16(withOpts[10:12], ipv4Checksum(withOpts[:24]))
	ipv6 := append([]byte{0x60}, make([]byte, 47)...)
	le, be := binary.LittleEndian, binary.BigEndian

	tests := []struct {
		name  string
		link  LinkType
		frame []byte
		want  bool  // a UDP packet comes out
		stat  Stats // expected counters besides Records
	}{
		{"ethernet", Ethernet, ethernet(etherTypeIPv4, udp), true, Stats{UDP: 1}},
		{"ethernet padded", Ethernet, ethernet(etherTypeIPv4, append(bytes.Clone(udp), 0, 0, 0, 0, 0, 0)), true, Stats{UDP: 1}},
		{"802.1Q", Ethernet, ethernet(etherTypeIPv4, udp, etherTypeVLAN), true, Stats{UDP: 1}},
		{"802.1ad+802.1Q", Ethernet, ethernet(etherTypeIPv4, udp, etherTypeQinQ, etherTypeVLAN), true, Stats{UDP: 1}},
		{"three tags", Ethernet, ethernet(etherTypeIPv4, udp, etherTypeQinQOld, etherTypeQinQ, etherTypeVLAN), true, Stats{UDP: 1}},
		{"IPv4 options", Ethernet, ethernet(etherTypeIPv4, withOpts), true, Stats{UDP: 1}},
		{"ethernet IPv6", Ethernet, ethernet(0x86dd, ipv6), false, Stats{NonIPv4: 1}},
		{"ethernet ARP", Ethernet, ethernet(0x0806, make([]byte, 28)), false, Stats{NonIPv4: 1}},
		{"VLAN IPv6", Ethernet, ethernet(0x86dd, ipv6, etherTypeVLAN), false, Stats{NonIPv4: 1}},
		{"802.3 LLC", Ethernet, ethernet(46, make([]byte, 46)), false, Stats{NonIPv4: 1}},
		{"TCP", Ethernet, ethernet(etherTypeIPv4, ipv4Proto(6, make([]byte, 20))), false, Stats{NonUDP: 1}},
		{"ICMP", RawIPv4, ipv4Proto(1, make([]byte, 8)), false, Stats{NonUDP: 1}},
		{"SLL", LinuxSLL, append([]byte{0, 0, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0, 8, 0}, udp...), true, Stats{UDP: 1}},
		{"SLL VLAN", LinuxSLL, append([]byte{0, 0, 0, 1, 0, 6, 1, 2, 3, 4, 5, 6, 0, 0, 0x81, 0, 0, 5, 8, 0}, udp...), true, Stats{UDP: 1}},
		{"SLL2", LinuxSLL2, sll2(etherTypeIPv4, udp), true, Stats{UDP: 1}},
		{"SLL2 IPv6", LinuxSLL2, sll2(0x86dd, ipv6), false, Stats{NonIPv4: 1}},
		{"null LE", Loopback, null(le, afINET, udp), true, Stats{UDP: 1}},
		{"null BE", Loopback, null(be, afINET, udp), true, Stats{UDP: 1}},
		{"null IPv6 (BSD)", Loopback, null(le, 24, ipv6), false, Stats{NonIPv4: 1}},
		{"null IPv6 (macOS)", Loopback, null(be, 30, ipv6), false, Stats{NonIPv4: 1}},
		{"loop", Loop, null(be, afINET, udp), true, Stats{UDP: 1}},
		{"raw 101", Raw, udp, true, Stats{UDP: 1}},
		{"raw 101 IPv6", Raw, ipv6, false, Stats{NonIPv4: 1}},
		{"raw 12", RawDLT12, udp, true, Stats{UDP: 1}},
		{"raw 14", RawDLT14, udp, true, Stats{UDP: 1}},
		{"ipv4 228", RawIPv4, udp, true, Stats{UDP: 1}},
		{"ipv6 229", RawIPv6, ipv6, false, Stats{NonIPv4: 1}},
		{"802.11", 105, make([]byte, 40), false, Stats{UnknownLink: 1}},
	}
	for _, tc := range tests {
		for _, format := range []Format{PCAP, PCAPNG} {
			t.Run(tc.name+"/"+format.String(), func(t *testing.T) {
				var file []byte
				if format == PCAP {
					file = newPcap(le, false, tc.link, 65535).record(t0, tc.frame).buf
				} else {
					file = newNg(be).idb(tc.link, 0).epb(0, uint64(t0.UnixMicro()), tc.frame).buf
				}
				pkts, errs, r := readAll(t, file, Options{})
				if len(errs) > 0 {
					t.Fatalf("unexpected damage: %v", errs[0])
				}
				if tc.want {
					if len(pkts) != 1 {
						t.Fatalf("got %d packets, want 1", len(pkts))
					}
					p := pkts[0]
					if p.Frame != 1 || !p.Time.Equal(t0) || p.Src != addrA || p.Dst != addrB || string(p.Payload) != "bridge" {
						t.Errorf("got %+v", p)
					}
				} else if len(pkts) != 0 {
					t.Fatalf("got %d packets, want none", len(pkts))
				}
				tc.stat.Records = 1
				if st := r.Stats(); st != tc.stat {
					t.Errorf("stats %+v, want %+v", st, tc.stat)
				}
			})
		}
	}
}

// TestSkippedAreCounted checks that skipped records still take a frame
// number, so later frame numbers match the file.
func TestSkippedAreCounted(t *testing.T) {
	ipv6 := append([]byte{0x60}, make([]byte, 47)...)
	p := newPcap(binary.LittleEndian, false, Ethernet, 65535)
	p.record(t0, ethernet(0x86dd, ipv6))
	p.record(t0, ethernet(etherTypeIPv4, ipv4Proto(6, make([]byte, 20))))
	p.record(t0, ethernet(0x0806, make([]byte, 28)))
	p.record(t0, ethernet(etherTypeIPv4, ipv4UDP(addrA, addrB, 1, []byte("x"))))
	pkts, errs, r := readAll(t, p.buf, Options{})
	if len(errs) != 0 || len(pkts) != 1 || pkts[0].Frame != 4 {
		t.Fatalf("got %+v, errors %v", pkts, errs)
	}
	want := Stats{Records: 4, UDP: 1, NonIPv4: 2, NonUDP: 1}
	if st := r.Stats(); st != want {
		t.Errorf("stats %+v, want %+v", st, want)
	}
}

func TestDamagedHeaders(t *testing.T) {
	udp := ipv4UDP(addrA, addrB, 7, []byte("payload!"))
	// Each case damages one thing; a valid header checksum keeps the
	// checksum check from catching it first.
	mod := func(f func(b []byte) []byte) []byte { return fixIPv4Checksum(f(bytes.Clone(udp))) }
	tests := []struct {
		name  string
		link  LinkType
		frame []byte
		want  error
	}{
		{"short ethernet", Ethernet, make([]byte, 13), ErrLinkHeader},
		{"cut VLAN tag", Ethernet, ethernet(etherTypeVLAN, []byte{0, 5}), ErrLinkHeader},
		{"short SLL", LinuxSLL, make([]byte, 15), ErrLinkHeader},
		{"short SLL2", LinuxSLL2, make([]byte, 19), ErrLinkHeader},
		{"short null", Loopback, []byte{2, 0}, ErrLinkHeader},
		{"empty raw", Raw, nil, ErrIPv4Header},
		{"raw version 5", Raw, mod(func(b []byte) []byte { b[0] = 0x55; return b }), ErrIPv4Header},
		{"short IPv4", Ethernet, ethernet(etherTypeIPv4, udp[:10]), ErrIPv4Header},
		{"version 6 in IPv4", Ethernet, ethernet(etherTypeIPv4, mod(func(b []byte) []byte { b[0] = 0x65; return b })), ErrIPv4Header},
		{"IHL 4", RawIPv4, mod(func(b []byte) []byte { b[0] = 0x44; return b }), ErrIPv4Header},
		{"IHL past total", RawIPv4, mod(func(b []byte) []byte { b[0] = 0x4f; binary.BigEndian.PutUint16(b[2:], 40); return b }), ErrIPv4Header},
		{"total length past data", Ethernet, ethernet(etherTypeIPv4, udp[:len(udp)-1]), ErrIPv4Header},
		{"total length 0", RawIPv4, mod(func(b []byte) []byte { binary.BigEndian.PutUint16(b[2:], 0); return b }), ErrIPv4Header},
		{"UDP header cut", RawIPv4, mod(func(b []byte) []byte { binary.BigEndian.PutUint16(b[2:], 24); return b[:24] }), ErrUDPHeader},
		{"UDP length 7", RawIPv4, mod(func(b []byte) []byte { binary.BigEndian.PutUint16(b[24:], 7); return b }), ErrUDPHeader},
		{"UDP length past IP", RawIPv4, mod(func(b []byte) []byte { binary.BigEndian.PutUint16(b[24:], 17); return b }), ErrUDPHeader},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			good := func(s string) []byte { return wrapLink(tc.link, ipv4UDP(addrA, addrB, 1, []byte(s))) }
			p := newPcap(binary.LittleEndian, false, tc.link, 65535)
			p.record(t0, good("one"))
			badOffset := int64(len(p.buf))
			p.record(t0, tc.frame)
			p.record(t0, good("three"))
			pkts, errs, r := readAll(t, p.buf, Options{})
			if len(errs) != 1 {
				t.Fatalf("got %d errors, want 1", len(errs))
			}
			if e := errs[0]; e.Frame != 2 || e.Offset != badOffset || !errors.Is(e, tc.want) {
				t.Errorf("got %v (frame %d, offset %d), want %v at frame 2, offset %d", e, e.Frame, e.Offset, tc.want, badOffset)
			}
			if len(pkts) != 2 || pkts[0].Frame != 1 || pkts[1].Frame != 3 || string(pkts[1].Payload) != "three" {
				t.Errorf("got packets %+v", pkts)
			}
			if st := r.Stats(); st.Damaged != 1 || st.Records != 3 || st.UDP != 2 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// wrapLink puts an IPv4 packet behind a link header of type lt.
func wrapLink(lt LinkType, ip []byte) []byte {
	switch lt {
	case Ethernet:
		return ethernet(etherTypeIPv4, ip)
	case LinuxSLL:
		return append(appendLinkHeader(nil, LinuxSLL, [4]byte{}, [4]byte{}), ip...)
	case LinuxSLL2:
		return sll2(etherTypeIPv4, ip)
	case Loopback:
		return null(binary.LittleEndian, afINET, ip)
	}
	return ip
}

func TestTruncatedEnd(t *testing.T) {
	rec := func(s string) []byte { return ethernet(etherTypeIPv4, ipv4UDP(addrA, addrB, 1, []byte(s))) }
	p := newPcap(binary.LittleEndian, true, Ethernet, 65535)
	p.record(t0, rec("one")).record(t0, rec("two"))
	thirdAt := len(p.buf)
	p.record(t0, rec("three"))
	pcapFile := p.buf

	n := newNg(binary.LittleEndian).idb(Ethernet, 0)
	n.epb(0, 1, rec("one")).epb(0, 2, rec("two"))
	ngThirdAt := len(n.buf)
	n.epb(0, 3, rec("three"))
	ngFile := n.buf

	tests := []struct {
		name   string
		file   []byte
		offset int
	}{
		{"pcap in data", pcapFile[:len(pcapFile)-5], thirdAt},
		{"pcap in header", pcapFile[:thirdAt+9], thirdAt},
		{"pcap after header", pcapFile[:thirdAt+16], thirdAt},
		{"pcapng in block", ngFile[:len(ngFile)-9], ngThirdAt},
		{"pcapng trailer cut", ngFile[:len(ngFile)-2], ngThirdAt},
		{"pcapng in header", ngFile[:ngThirdAt+6], ngThirdAt},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			pkts, errs, r := readAll(t, tc.file, Options{})
			if len(pkts) != 2 || pkts[1].Frame != 2 {
				t.Errorf("got packets %+v", pkts)
			}
			if len(errs) != 1 || !errors.Is(errs[0], ErrTruncated) || errs[0].Offset != int64(tc.offset) {
				t.Fatalf("got errors %v, want one ErrTruncated at offset %d", errs, tc.offset)
			}
			// A record cut inside its header may still be a packet
			// record: pcap always counts it; pcapng counts it once the
			// block type is known to be a packet block.
			if tc.name != "pcapng in header" && errs[0].Frame != 3 {
				t.Errorf("error frame %d, want 3", errs[0].Frame)
			}
			if _, err := r.Next(); err != io.EOF {
				t.Errorf("after the end: %v", err)
			}
		})
	}
}

// TestOffsetAfterResync checks that the first record found by
// resynchronisation reports its own file offset when it is damaged, not
// where the scan began.
func TestOffsetAfterResync(t *testing.T) {
	good := ethernet(etherTypeIPv4, ipv4UDP(addrA, addrB, 1, []byte("one")))
	bad := ethernet(etherTypeIPv4, []byte{0x45, 0}) // an IPv4 header cut short
	p := newPcap(binary.LittleEndian, false, Ethernet, 65535)
	p.record(t0, good)
	p.header(uint32(t0.Unix()), 5, 0x7fffffff, 0x7fffffff)
	p.raw(make([]byte, 40))
	badAt := len(p.buf)
	p.record(t0.Add(time.Second), bad).record(t0.Add(2*time.Second), good)
	_, errs, _ := readAll(t, p.buf, Options{})
	if len(errs) != 2 || !errors.Is(errs[0], ErrBadRecord) || !errors.Is(errs[1], ErrIPv4Header) {
		t.Fatalf("got errors %v", errs)
	}
	if errs[1].Offset != int64(badAt) {
		t.Errorf("damaged record after the resync at offset %d, want %d", errs[1].Offset, badAt)
	}
}

func TestAbsurdRecordLength(t *testing.T) {
	rec := func(s string) []byte { return ethernet(etherTypeIPv4, ipv4UDP(addrA, addrB, 1, []byte(s))) }
	for _, snap := range []uint32{65535, 0, 1 << 31} {
		t.Run(fmt.Sprint("snaplen ", snap), func(t *testing.T) {
			p := newPcap(binary.LittleEndian, false, Ethernet, snap)
			p.record(t0, rec("one")).record(t0.Add(time.Second), rec("two"))
			badAt := len(p.buf)
			// A header claiming 2 GiB, then 100 bytes of junk that
			// include zeros and a half-plausible header, then good
			// records again.
			p.header(uint32(t0.Unix()), 5, 0x7fffffff, 0x7fffffff)
			junk := make([]byte, 100)
			copy(junk[30:], []byte{1, 2, 3, 4, 0, 0, 0, 0, 10, 0, 0, 0, 10, 0, 0, 0}) // bad time
			p.raw(junk)
			p.record(t0.Add(2*time.Second), rec("three")).record(t0.Add(3*time.Second), rec("four"))

			pkts, errs, r := readAll(t, p.buf, Options{})
			if len(errs) != 1 || errs[0].Frame != 3 || errs[0].Offset != int64(badAt) || !errors.Is(errs[0], ErrBadRecord) {
				t.Fatalf("got errors %v", errs)
			}
			var names []string
			for _, p := range pkts {
				names = append(names, fmt.Sprintf("%d:%s", p.Frame, p.Payload))
			}
			if got := strings.Join(names, " "); got != "1:one 2:two 4:three 5:four" {
				t.Errorf("got %s", got)
			}
			if st := r.Stats(); st.Records != 5 || st.Damaged != 1 {
				t.Errorf("stats %+v", st)
			}
		})
	}
}

// TestAbsurdRecordAtEnd: nothing plausible follows the bad header.
func TestAbsurdRecordAtEnd(t *testing.T) {
	p := newPcap(binary.BigEndian, false, Ethernet, 65535)
	p.record(t0, ethernet(etherTypeIPv4, ipv4UDP(addrA, addrB, 1, []byte("one"))))
	p.header(1, 2, 1<<30, 1<<30).raw(make([]byte, 1000))
	pkts, errs, _ := readAll(t, p.buf, Options{})
	if len(pkts) != 1 || len(errs) != 1 || errs[0].Frame != 2 {
		t.Fatalf("got %+v, %v", pkts, errs)
	}
}

func TestPcapngInterfacesAndBlocks(t *testing.T) {
	le, be := binary.LittleEndian, binary.BigEndian
	pkt := func(s string) []byte { return ipv4UDP(addrA, addrB, 1, []byte(s)) }
	n := newNg(le)
	n.block(0x0bad, []byte("a custom block is skipped"))
	n.idb(Ethernet, 0, ngOpt(le, ngOptIfName, []byte("eth0")))
	// Milliseconds, and a 1000 s offset.
	n.idb(RawIPv4, 1500, ngOpt(le, ngOptTSResol, []byte{3}), ngOpt(le, ngOptTSOffset, le.AppendUint64(nil, 1000)))
	// Binary resolution 2^-10, and a nonsense one that falls back to µs.
	n.idb(Loopback, 0, ngOpt(le, ngOptTSResol, []byte{0x8a}))
	n.idb(LinuxSLL2, 0, ngOpt(le, ngOptTSResol, []byte{70}))
	n.epb(1, 1500, pkt("iface1"))                               // frame 1
	n.epb(0, 2_000_000, ethernet(etherTypeIPv4, pkt("iface0"))) // frame 2
	n.block(ngBlockNRB, make([]byte, 4))
	n.block(ngBlockISB, make([]byte, 12))
	n.epb(2, 3*1024+512, null(le, afINET, pkt("iface2")))   // frame 3
	n.epb(3, 4_000_001, sll2(etherTypeIPv4, pkt("iface3"))) // frame 4
	n.epb(9, 0, pkt("bad iface"))                           // frame 5: damaged
	n.spb(ethernet(etherTypeIPv4, pkt("simple")))           // frame 6
	// Obsolete packet block on interface 1.
	var pb []byte
	pb = le.AppendUint16(pb, 1)
	pb = le.AppendUint16(pb, 0)
	pb = le.AppendUint32(pb, 0)
	pb = le.AppendUint32(pb, 7000)
	pb = le.AppendUint32(pb, uint32(len(pkt("old"))))
	pb = le.AppendUint32(pb, uint32(len(pkt("old"))))
	n.block(ngBlockPB, append(pb, pkt("old")...)) // frame 7
	// A second section, big-endian, with its own interfaces.
	n2 := newNg(be).idb(Loopback, 0).epb(0, 8_000_000, null(le, afINET, pkt("section2"))) // frame 8
	file := append(n.buf, n2.buf...)

	pkts, errs, r := readAll(t, file, Options{})
	if len(errs) != 1 || errs[0].Frame != 5 || !errors.Is(errs[0], ErrBadRecord) {
		t.Fatalf("got errors %v", errs)
	}
	want := []struct {
		frame, iface int
		text         string
		time         time.Time
	}{
		{1, 1, "iface1", time.Unix(1001, 500e6)},
		{2, 0, "iface0", time.Unix(2, 0)},
		{3, 2, "iface2", time.Unix(3, 500e6)},
		{4, 3, "iface3", time.Unix(4, 1000)},
		{6, 0, "simple", time.Time{}},
		{7, 1, "old", time.Unix(1007, 0)},
		{8, 0, "section2", time.Unix(8, 0)},
	}
	if len(pkts) != len(want) {
		t.Fatalf("got %d packets, want %d: %+v", len(pkts), len(want), pkts)
	}
	for i, w := range want {
		p := pkts[i]
		if p.Frame != w.frame || p.Iface != w.iface || string(p.Payload) != w.text || !p.Time.Equal(w.time) {
			t.Errorf("packet %d: got frame %d iface %d %q %v, want %+v", i, p.Frame, p.Iface, p.Payload, p.Time, w)
		}
	}
	// After the second section only its interface remains.
	if ifc, ok := r.Interface(0); !ok || ifc.LinkType != Loopback {
		t.Errorf("Interface(0) = %+v, %v", ifc, ok)
	}
	if _, ok := r.Interface(1); ok {
		t.Error("Interface(1) should be gone with the new section")
	}
	if st := r.Stats(); st.Records != 8 || st.UDP != 7 || st.Damaged != 1 {
		t.Errorf("stats %+v", st)
	}

	// Interface names, read from a one-section file.
	r2, err := NewReader(bytes.NewReader(n.buf))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r2.Next(); err != nil {
		t.Fatal(err)
	}
	if ifc, _ := r2.Interface(0); ifc.Name != "eth0" || ifc.LinkType != Ethernet {
		t.Errorf("Interface(0) = %+v", ifc)
	}
	if ifc, _ := r2.Interface(1); ifc.SnapLen != 1500 || ifc.LinkType != RawIPv4 {
		t.Errorf("Interface(1) = %+v", ifc)
	}
}

// Blocks of the types the pcapng specification defines but bcwire does not
// read, and local-use ones, are skipped quietly; a block of any other type
// is reported (offset, type, length) and reading goes on after it.
func TestPcapngBlockTypes(t *testing.T) {
	le := binary.LittleEndian
	pkt := func(s string) []byte { return ipv4UDP(addrA, addrB, 1, []byte(s)) }
	quiet := []uint32{ngBlockNRB, ngBlockISB, 7, 8, 9, ngBlockDSB, 0x101, 0x102, 0x201, 0x209, 0x210, 0x222,
		ngBlockCustomCopy, ngBlockCustomNoCopy, 0x80000001, 0xffffffff}
	n := newNg(le).idb(RawIPv4, 0)
	for i, typ := range quiet {
		n.block(typ, []byte{1, 2, 3, 4})
		n.epb(0, uint64(i), pkt(fmt.Sprint(i)))
	}
	pkts, errs, _ := readAll(t, n.buf, Options{})
	if len(errs) != 0 || len(pkts) != len(quiet) {
		t.Fatalf("defined block types: %d packets, errors %v", len(pkts), errs)
	}

	for _, typ := range []uint32{0, 0x0b, 0x100, 0x223, 0xbad0000, 0x0a0d0a00, 0x40000000} {
		n := newNg(le).idb(RawIPv4, 0).epb(0, 1, pkt("before"))
		at := len(n.buf)
		n.block(typ, []byte{1, 2, 3, 4, 5, 6, 7, 8})
		n.epb(0, 2, pkt("after"))
		pkts, errs, r := readAll(t, n.buf, Options{})
		if len(errs) != 1 || len(pkts) != 2 || string(pkts[1].Payload) != "after" || pkts[1].Frame != 2 {
			t.Fatalf("type %#x: got %+v, %v", typ, pkts, errs)
		}
		e := errs[0]
		want := fmt.Sprintf("type 0x%08X, 20 bytes", typ)
		if !errors.Is(e, ErrUnknownBlock) || e.Offset != int64(at) || e.Frame != 0 || !strings.Contains(e.Error(), want) {
			t.Errorf("type %#x: error %v (offset %d, frame %d), want %q at offset %d", typ, e, e.Offset, e.Frame, want, at)
		}
		if st := r.Stats(); st.Damaged != 1 || st.Records != 2 {
			t.Errorf("type %#x: stats %+v", typ, st)
		}
	}
}

func TestPcapngDamagedBlocks(t *testing.T) {
	le := binary.LittleEndian
	pkt := func(s string) []byte { return ipv4UDP(addrA, addrB, 1, []byte(s)) }

	t.Run("packet before interface", func(t *testing.T) {
		n := newNg(le).epb(0, 1, pkt("early")).idb(RawIPv4, 0).epb(0, 2, pkt("late"))
		pkts, errs, _ := readAll(t, n.buf, Options{})
		if len(errs) != 1 || errs[0].Frame != 1 || len(pkts) != 1 || pkts[0].Frame != 2 {
			t.Fatalf("got %+v, %v", pkts, errs)
		}
	})
	t.Run("bad block length resyncs", func(t *testing.T) {
		n := newNg(le).idb(RawIPv4, 0).epb(0, 1, pkt("one"))
		badAt := len(n.buf)
		n.buf = le.AppendUint32(n.buf, ngBlockEPB)
		n.buf = le.AppendUint32(n.buf, 7) // not a multiple of 4
		n.buf = append(n.buf, make([]byte, 33)...)
		n.epb(0, 2, pkt("two"))
		pkts, errs, _ := readAll(t, n.buf, Options{})
		if len(errs) != 1 || errs[0].Offset != int64(badAt) || !errors.Is(errs[0], ErrBadRecord) || errs[0].Frame != 2 {
			t.Fatalf("got errors %v", errs)
		}
		if len(pkts) != 2 || string(pkts[1].Payload) != "two" || pkts[1].Frame != 3 {
			t.Fatalf("got %+v", pkts)
		}
	})
	t.Run("trailing length mismatch", func(t *testing.T) {
		n := newNg(le).idb(RawIPv4, 0).epb(0, 1, pkt("one"))
		n.buf[len(n.buf)-4]++
		n.epb(0, 2, pkt("two"))
		pkts, errs, _ := readAll(t, n.buf, Options{})
		if len(errs) != 1 || errs[0].Frame != 1 || len(pkts) != 1 || pkts[0].Frame != 2 {
			t.Fatalf("got %+v, %v", pkts, errs)
		}
	})
	t.Run("caplen past block", func(t *testing.T) {
		n := newNg(le).idb(RawIPv4, 0).epb(0, 1, pkt("one"))
		padded := (len(pkt("one")) + 3) &^ 3
		le.PutUint32(n.buf[len(n.buf)-4-padded-8:], 5000) // the caplen field
		n.epb(0, 2, pkt("two"))
		pkts, errs, _ := readAll(t, n.buf, Options{})
		if len(errs) != 1 || errs[0].Frame != 1 || len(pkts) != 1 {
			t.Fatalf("got %+v, %v", pkts, errs)
		}
	})
}

func TestSnapLenCut(t *testing.T) {
	frame := ethernet(etherTypeIPv4, ipv4UDP(addrA, addrB, 1, payload(1, 60)))
	p := newPcap(binary.LittleEndian, false, Ethernet, 68)
	p.header(uint32(t0.Unix()), 0, 68, uint32(len(frame))).raw(frame[:68])
	p.record(t0, ethernet(etherTypeIPv4, ipv4UDP(addrA, addrB, 1, []byte("short"))))
	pkts, errs, _ := readAll(t, p.buf, Options{})
	if len(errs) != 1 || errs[0].Frame != 1 || !errors.Is(errs[0], ErrSnapLen) {
		t.Fatalf("got errors %v", errs)
	}
	if len(pkts) != 1 || pkts[0].Frame != 2 {
		t.Fatalf("got %+v", pkts)
	}
	// The same frame without the original length is plain damage.
	d := NewDecoder(Options{})
	if _, err := d.Decode(Ethernet, frame[:68], ci(t0)); !errors.Is(err, ErrIPv4Header) {
		t.Errorf("got %v", err)
	}
}

func TestPcapngSkipsUnknownVersion(t *testing.T) {
	le := binary.LittleEndian
	pkt := func(s string) []byte { return ipv4UDP(addrA, addrB, 1, []byte(s)) }
	n := newNg(le).idb(RawIPv4, 0).epb(0, 1, pkt("v1"))
	skippedAt := len(n.buf)
	n.shbVersion(2).idb(RawIPv4, 0).epb(0, 2, pkt("v2"))
	n.shb().idb(RawIPv4, 0).epb(0, 3, pkt("v1 again"))
	pkts, errs, _ := readAll(t, n.buf, Options{})
	if len(errs) != 1 || errs[0].Frame != 0 || errs[0].Offset != int64(skippedAt) || !errors.Is(errs[0], ErrBadRecord) {
		t.Fatalf("got errors %v", errs)
	}
	if len(pkts) != 2 || string(pkts[0].Payload) != "v1" || string(pkts[1].Payload) != "v1 again" || pkts[1].Frame != 2 {
		t.Fatalf("got %+v", pkts)
	}
}

// TestDecoderLive feeds frames straight into a Decoder, as a live source
// would.
func TestDecoderLive(t *testing.T) {
	d := NewDecoder(Options{})
	frames := [][]byte{
		ethernet(etherTypeIPv4, ipv4UDP(addrA, addrB, 1, []byte("a"))),
		ethernet(0x0806, make([]byte, 28)),
		ethernet(etherTypeIPv4, ipv4UDP(addrB, addrA, 2, []byte("b"))),
	}
	var out []string
	for i, f := range frames {
		p, err := d.Decode(Ethernet, f, ci(t0.Add(time.Duration(i)*time.Millisecond)))
		if err != nil {
			t.Fatal(err)
		}
		if p != nil {
			out = append(out, fmt.Sprintf("%d %s %v", p.Frame, p.Payload, p.Src))
		}
	}
	if got := strings.Join(out, ","); got != "1 a 10.0.0.1:22101,3 b 192.168.7.20:2302" {
		t.Errorf("got %s", got)
	}
	if _, err := d.Decode(Ethernet, []byte{1, 2, 3}, ci(t0)); err == nil {
		t.Error("short frame accepted")
	} else if pe := err.(*PacketError); pe.Frame != 4 || pe.Offset != -1 {
		t.Errorf("got %+v", pe)
	}
}

// The input buffer: records bigger than it, lying lengths in short files,
// readers that hand out a byte at a time or nothing, and I/O errors.
func TestInputBuffer(t *testing.T) {
	le := binary.LittleEndian
	pkt := func(s string) []byte { return ipv4UDP(addrA, addrB, 1, []byte(s)) }
	big := make([]byte, 3*bufSize) // junk to the decoder, but a record all the same
	big[0] = 0x45

	t.Run("records bigger than the buffer", func(t *testing.T) {
		p := newPcap(le, true, RawIPv4, 16<<20).record(t0, pkt("one")).record(t0, big).record(t0, pkt("three"))
		n := newNg(le).idb(RawIPv4, 0).epb(0, 1, pkt("one")).epb(0, 2, big).epb(0, 3, pkt("three"))
		for _, file := range [][]byte{p.buf, n.buf} {
			pkts, errs, _ := readAll(t, file, Options{})
			if len(pkts) != 2 || string(pkts[1].Payload) != "three" || pkts[1].Frame != 3 ||
				len(errs) != 1 || errs[0].Frame != 2 || !errors.Is(errs[0], ErrIPv4Header) {
				t.Errorf("got %+v, %v", pkts, errs)
			}
		}
	})
	t.Run("a lying length in a short file allocates nothing", func(t *testing.T) {
		p := newPcap(le, true, RawIPv4, 16<<20).record(t0, pkt("one"))
		p.header(uint32(t0.Unix()), 0, 15<<20, 15<<20).raw(make([]byte, 100))
		pkts, errs, r := readAll(t, p.buf, Options{})
		if len(pkts) != 1 || len(errs) != 1 || !errors.Is(errs[0], ErrTruncated) {
			t.Fatalf("got %+v, %v", pkts, errs)
		}
		if n := cap(r.src.(*pcapSource).in.buf); n > bufSize {
			t.Errorf("buffer grew to %d bytes for a file of %d", n, len(p.buf))
		}
	})
	t.Run("one byte at a time", func(t *testing.T) {
		file := writeCapture(t, PCAPNG, Ethernet, roundTripInput())
		want, _, _ := readAll(t, file, Options{})
		r, err := NewReader(iotest.OneByteReader(bytes.NewReader(file)))
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			p, err := r.Next()
			if err != nil || !bytes.Equal(p.Payload, want[i].Payload) {
				t.Fatalf("packet %d: %v", i, err)
			}
		}
		if _, err := r.Next(); err != io.EOF {
			t.Errorf("at the end: %v", err)
		}
	})
	t.Run("a reader that returns nothing", func(t *testing.T) {
		file := newPcap(le, true, RawIPv4, 65535).record(t0, pkt("one")).buf
		r, err := NewReader(io.MultiReader(bytes.NewReader(file), nothingReader{}))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Next(); err != io.ErrNoProgress {
			t.Errorf("got %v, want io.ErrNoProgress", err)
		}
	})
	t.Run("I/O error", func(t *testing.T) {
		file := newPcap(le, true, RawIPv4, 65535).record(t0, pkt("one")).record(t0, pkt("two")).buf
		boom := errors.New("boom")
		r, err := NewReader(io.MultiReader(bytes.NewReader(file[:len(file)-3]), iotest.ErrReader(boom)))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Next(); err != boom {
			t.Errorf("got %v, want the I/O error", err)
		}
	})
}

type nothingReader struct{}

func (nothingReader) Read([]byte) (int, error) { return 0, nil }

// TestHoldKeepsPayloads reads batches of datagrams under Hold, through
// readers that deliver the file in small pieces so that the buffer is
// refilled (and swapped) many times within one hold, and checks that every
// payload of a batch is intact when the batch is complete. Reassembled
// datagrams are not kept (their buffers belong to reassembly).
func TestHoldKeepsPayloads(t *testing.T) {
	p := newPcap(binary.LittleEndian, false, Ethernet, 65535)
	var want [][]byte
	for i := range 300 {
		pl := payload(i, 20+i%97)
		want = append(want, pl)
		p.record(t0.Add(time.Duration(i)*time.Millisecond), ethernet(etherTypeIPv4, ipv4UDP(addrA, addrB, uint16(i), pl)))
	}
	readers := map[string]func() io.Reader{
		"whole":    func() io.Reader { return bytes.NewReader(p.buf) },
		"one byte": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(p.buf)) },
		"halves":   func() io.Reader { return iotest.HalfReader(bytes.NewReader(p.buf)) },
	}
	for name, open := range readers {
		for _, batch := range []int{1, 8, len(want)} {
			r, err := NewReader(open())
			if err != nil {
				t.Fatal(err)
			}
			var held [][]byte
			for i := 0; ; i++ {
				if len(held) == 0 {
					r.Hold()
				}
				pk, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				held = append(held, pk.Payload)
				if len(held) == batch || i == len(want)-1 {
					for k, got := range held {
						if w := want[i+1-len(held)+k]; !bytes.Equal(got, w) {
							t.Fatalf("%s, batches of %d: datagram %d changed under Hold", name, batch, i+1-len(held)+k)
						}
					}
					r.Release()
					held = held[:0]
				}
			}
		}
	}
}
