// This file tests the Internet checksum against a plain 16-bit reference,
// its verification by the Decoder (offload, 0, 0xFFFF, fragments, the
// option to ignore it), and measures it.

package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/netip"
	"strings"
	"testing"
	"time"
)

// refSum is RFC 1071 done the slow, obvious way.
func refSum(b []byte) uint16 {
	var sum uint32
	for i := 0; i < len(b); i += 2 {
		w := uint32(b[i]) << 8
		if i+1 < len(b) {
			w |= uint32(b[i+1])
		}
		sum += w
		sum = sum>>16 + sum&0xffff
	}
	return uint16(sum)
}

func TestOnesAddMatchesReference(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 200 {
		for _, fill := range []string{"random", "ones", "zeros"} {
			b := make([]byte, n)
			for i := range b {
				switch fill {
				case "random":
					b[i] = byte(rng.Uint32())
				case "ones":
					b[i] = 0xff // the carries pile up: the end-around carry must not be lost
				}
			}
			got, want := fold(onesAdd(0, b)), refSum(b)
			// 0 and 0xffff are both zero in ones' complement; only all-zero
			// input sums to 0 in both.
			if got != want {
				t.Errorf("%d %s bytes: sum %#04x, reference %#04x", n, fill, got, want)
			}
		}
	}
	// A running sum that is already near the top of 64 bits.
	b := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x12, 0x34}
	if got, want := fold(onesAdd(^uint64(0)-1, b)), refSum(append([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe}, b...)); got != want {
		t.Errorf("near-overflow start: %#04x, want %#04x", got, want)
	}
}

func TestSumVerifiesMatchesFold(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	check := func(x uint64) {
		if got, want := sumVerifies(x), fold(x) == 0xffff; got != want {
			t.Errorf("sumVerifies(%#x) = %v, fold gives %#04x", x, got, fold(x))
		}
	}
	for _, x := range []uint64{0, 1, 0xfffe, 0xffff, 0x10000, 0xffff0000, 0xffffffff, 0xfffffffe,
		1 << 63, ^uint64(0), ^uint64(0) - 1, 0xffff * 0x10001, 0xffff << 32} {
		check(x)
	}
	for range 100000 {
		x := rng.Uint64()
		check(x)
		check(x - x%0xffff) // a multiple of 0xFFFF, which verifies unless 0
	}
}

func TestUDPChecksum(t *testing.T) {
	src, dst := addrA.Addr().As4(), addrB.Addr().As4()
	udp := ipv4UDP(addrA, addrB, 1, payload(7, 101))[20:] // odd length
	c := udpChecksum(src, dst, udp)
	binary.BigEndian.PutUint16(udp[6:], c)
	if s := udpSum(src, dst, udp); s != 0xffff {
		t.Errorf("checksum %#04x: sum %#04x, want 0xffff", c, s)
	}
}

// A datagram whose checksum computes to 0 carries 0xFFFF, since 0 means
// "no checksum".
func TestUDPChecksumZeroIsSentAsFFFF(t *testing.T) {
	src, dst := addrA.Addr().As4(), addrB.Addr().As4()
	udp := ipv4UDP(addrA, addrB, 1, make([]byte, 10))[20:]
	// Make the sum of everything but the checksum 0xffff via the last two
	// payload bytes, so that the checksum computes to 0.
	binary.BigEndian.PutUint16(udp[len(udp)-2:], ^fold(onesAdd(pseudoHeaderSum(src, dst, len(udp)), udp)))
	if c := udpChecksum(src, dst, udp); c != 0xffff {
		t.Fatalf("checksum %#04x, want 0xffff", c)
	}
}

// BenchmarkChecksum: the UDP checksum of a 100-byte datagram (pseudo-header
// included), which the reader computes for every datagram.
func BenchmarkChecksum(b *testing.B) {
	src, dst := addrA.Addr().As4(), addrB.Addr().As4()
	udp := payload(3, 100)
	b.SetBytes(int64(len(udp)))
	b.ReportAllocs()
	var sink uint16
	for b.Loop() {
		sink += udpChecksum(src, dst, udp)
	}
	_ = sink
}

// udpDatagram is a UDP header and payload with a correct checksum.
func udpDatagram(src, dst netip.AddrPort, pl []byte) []byte {
	udp := ipv4UDP(src, dst, 1, pl)[20:]
	binary.BigEndian.PutUint16(udp[6:], udpChecksum(src.Addr().As4(), dst.Addr().As4(), udp))
	return udp
}

// ipv4With wraps a UDP datagram (or part of one) in an IPv4 header.
func ipv4With(src, dst netip.AddrPort, id uint16, off int, more bool, data []byte) []byte {
	return ipv4Fragment(src, dst, id, off, more, bytes.Clone(data))
}

// decodeOne decodes the frames (raw IPv4) with a fresh Decoder and returns
// what the last one gave.
func decodeOne(t *testing.T, opts Options, frames ...[]byte) (*Packet, Stats, error) {
	t.Helper()
	d := NewDecoder(opts)
	var p *Packet
	var err error
	for i, f := range frames {
		p, err = d.Decode(RawIPv4, f, ci(t0.Add(time.Duration(i)*time.Millisecond)))
		if err != nil && i < len(frames)-1 {
			t.Fatalf("frame %d: %v", i+1, err)
		}
	}
	return p, d.Stats(), err
}

func TestChecksumsVerified(t *testing.T) {
	pl := []byte("bridge commander datagram")
	good := ipv4With(addrA, addrB, 1, 0, false, udpDatagram(addrA, addrB, pl))

	t.Run("clean", func(t *testing.T) {
		p, st, err := decodeOne(t, Options{}, good)
		if err != nil || p == nil || string(p.Payload) != string(pl) || st.BadChecksums != 0 {
			t.Fatalf("got %v, %v, %+v", p, err, st)
		}
	})
	t.Run("payload byte changed", func(t *testing.T) {
		bad := bytes.Clone(good)
		bad[30] ^= 0x40
		want := binary.BigEndian.Uint16(udpDatagram(addrA, addrB, bad[28:])[6:])
		p, st, err := decodeOne(t, Options{}, bad)
		var pe *PacketError
		if p != nil || !errors.As(err, &pe) || !errors.Is(err, ErrChecksum) {
			t.Fatalf("got %v, %v", p, err)
		}
		msg := fmt.Sprintf("UDP checksum 0x%04X, computed 0x%04X", binary.BigEndian.Uint16(good[26:28]), want)
		if !strings.Contains(err.Error(), msg) {
			t.Errorf("error %q, want it to say %q", err, msg)
		}
		// The datagram is handed over with the error, as read, so that it
		// can be shown.
		if pe.Frame != 1 || pe.Packet == nil || pe.Packet.Frame != 1 || pe.Packet.Src != addrA || pe.Packet.Dst != addrB ||
			!bytes.Equal(pe.Packet.Payload, bad[28:]) {
			t.Errorf("PacketError %+v, Packet %+v", pe, pe.Packet)
		}
		if st.Damaged != 1 || st.BadChecksums != 1 || st.UDP != 0 {
			t.Errorf("stats %+v", st)
		}
	})
	t.Run("IPv4 header byte changed", func(t *testing.T) {
		bad := bytes.Clone(good)
		bad[8]-- // the TTL: nothing else would notice
		p, st, err := decodeOne(t, Options{}, bad)
		var pe *PacketError
		if p != nil || !errors.As(err, &pe) || !errors.Is(err, ErrChecksum) || pe.Packet != nil ||
			!strings.Contains(err.Error(), fmt.Sprintf("IPv4 header checksum 0x%04X, computed 0x%04X",
				binary.BigEndian.Uint16(good[10:12]), binary.BigEndian.Uint16(good[10:12])+0x100)) { // the TTL is a high byte
			t.Fatalf("got %v, %v", p, err)
		}
		if st.Damaged != 1 || st.BadChecksums != 1 {
			t.Errorf("stats %+v", st)
		}
	})
	t.Run("UDP checksum 0 is not verified", func(t *testing.T) {
		none := bytes.Clone(good)
		none[26], none[27] = 0, 0
		none[30] ^= 0x40 // undetectable without a checksum
		if p, _, err := decodeOne(t, Options{}, none); err != nil || p == nil {
			t.Fatalf("got %v, %v", p, err)
		}
	})
	t.Run("offloaded checksum is not damage", func(t *testing.T) {
		// Captured on the sending host with checksum offload: the field
		// holds only the pseudo-header sum (as on Linux's lo).
		off := bytes.Clone(good)
		ulen := len(off) - 20
		binary.BigEndian.PutUint16(off[26:28], fold(pseudoHeaderSum(addrA.Addr().As4(), addrB.Addr().As4(), ulen)))
		p, st, err := decodeOne(t, Options{}, off)
		if err != nil || p == nil || string(p.Payload) != string(pl) || st.Damaged != 0 {
			t.Fatalf("got %v, %v, %+v", p, err, st)
		}
		// The same field value with another length is damage.
		binary.BigEndian.PutUint16(off[26:28], fold(pseudoHeaderSum(addrA.Addr().As4(), addrB.Addr().As4(), ulen+1)))
		if _, _, err := decodeOne(t, Options{}, off); !errors.Is(err, ErrChecksum) {
			t.Errorf("wrong pseudo-header sum accepted: %v", err)
		}
	})
	t.Run("checksum 0 sent as FFFF", func(t *testing.T) {
		udp := ipv4UDP(addrA, addrB, 1, make([]byte, 10))[20:]
		binary.BigEndian.PutUint16(udp[len(udp)-2:], ^fold(onesAdd(pseudoHeaderSum(addrA.Addr().As4(), addrB.Addr().As4(), len(udp)), udp)))
		binary.BigEndian.PutUint16(udp[6:], 0xffff)
		if p, _, err := decodeOne(t, Options{}, ipv4With(addrA, addrB, 1, 0, false, udp)); err != nil || p == nil {
			t.Fatalf("got %v, %v", p, err)
		}
	})
	t.Run("ignored", func(t *testing.T) {
		bad := bytes.Clone(good)
		bad[30] ^= 0x40
		bad[8]--
		p, st, err := decodeOne(t, Options{IgnoreChecksums: true}, bad)
		if err != nil || p == nil || !bytes.Equal(p.Payload, bad[28:]) || st.Damaged != 0 {
			t.Fatalf("got %v, %v, %+v", p, err, st)
		}
	})
}

// The UDP checksum covers the whole datagram, so it is verified after
// reassembly; each fragment's IPv4 header checksum is verified on its own.
func TestChecksumsOfFragments(t *testing.T) {
	pl := payload(4, 300)
	udp := udpDatagram(addrA, addrB, pl)
	frags := func() [][]byte {
		return [][]byte{
			ipv4With(addrA, addrB, 7, 0, true, udp[:160]),
			ipv4With(addrA, addrB, 7, 160, true, udp[160:240]),
			ipv4With(addrA, addrB, 7, 240, false, udp[240:]),
		}
	}
	if p, st, err := decodeOne(t, Options{}, frags()...); err != nil || p == nil || !p.Reassembled || !bytes.Equal(p.Payload, pl) || st.Damaged != 0 {
		t.Fatalf("clean: got %v, %v, %+v", p, err, st)
	}
	// A payload byte in the middle fragment: the completing frame reports it.
	f := frags()
	f[1][25] ^= 1
	p, st, err := decodeOne(t, Options{}, f...)
	var pe *PacketError
	if p != nil || !errors.As(err, &pe) || !errors.Is(err, ErrChecksum) || pe.Frame != 3 || pe.Packet == nil || !pe.Packet.Reassembled {
		t.Fatalf("corrupted fragment: got %v, %v", p, err)
	}
	if st.BadChecksums != 1 || st.Reassembled != 1 {
		t.Errorf("stats %+v", st)
	}
	// A fragment whose IPv4 header is corrupted is dropped; its datagram
	// never completes.
	f = frags()
	f[1][8]--
	d := NewDecoder(Options{})
	var errs []error
	for i, fr := range f {
		if _, err := d.Decode(RawIPv4, fr, ci(t0.Add(time.Duration(i)))); err != nil {
			errs = append(errs, err)
		}
	}
	if len(errs) != 1 || !errors.Is(errs[0], ErrChecksum) || errs[0].(*PacketError).Frame != 2 {
		t.Errorf("corrupted fragment header: errors %v", errs)
	}
	if inc := d.Flush(); len(inc) != 1 {
		t.Errorf("incomplete sets %v", inc)
	}
}

// Writer output passes the reader's verification, fragmented or not.
func TestWriterChecksumsVerify(t *testing.T) {
	for _, format := range []Format{PCAP, PCAPNG} {
		file := writeCapture(t, format, Ethernet, roundTripInput())
		pkts, errs, _ := readAll(t, file, Options{})
		if len(errs) != 0 || len(pkts) != len(roundTripInput()) {
			t.Errorf("%v: %d packets, errors %v", format, len(pkts), errs)
		}
	}
}

// TestUsualPathMatchesLongWay decodes many frames, good and corrupted in
// their IPv4 and UDP headers and payload, twice: through decode, which
// takes the usual datagram in one pass, and straight through decodeIPv4,
// the long way that checks everything. Both must give the same packet or
// the same error, and the same counts.
func TestUsualPathMatchesLongWay(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	offloaded := func(udp []byte) []byte {
		udp = bytes.Clone(udp)
		binary.BigEndian.PutUint16(udp[6:8], fold(pseudoHeaderSum(addrA.Addr().As4(), addrB.Addr().As4(), len(udp))))
		return udp
	}
	var bases [][]byte
	for _, n := range []int{0, 1, 7, 8, 31, 44, 100} {
		pl := payload(n, n)
		bases = append(bases,
			ipv4With(addrA, addrB, 1, 0, false, udpDatagram(addrA, addrB, pl)),
			ipv4UDP(addrA, addrB, 2, pl), // no UDP checksum
			ipv4With(addrA, addrB, 3, 0, false, offloaded(udpDatagram(addrA, addrB, pl))))
	}
	for _, ignore := range []bool{false, true} {
		for i := range 20000 {
			ip := bytes.Clone(bases[rng.IntN(len(bases))])
			switch rng.IntN(4) {
			case 0: // as built
			case 1: // a byte of the headers changed, the IPv4 checksum fixed or not
				ip[rng.IntN(28)] = byte(rng.Uint32())
				if rng.IntN(2) == 0 {
					ip = fixIPv4Checksum(ip)
				}
			case 2: // a payload byte changed
				if len(ip) > 28 {
					ip[28+rng.IntN(len(ip)-28)] ^= byte(1 + rng.IntN(255))
				}
			case 3: // cut short or padded
				if rng.IntN(2) == 0 {
					ip = ip[:rng.IntN(len(ip)+1)]
				} else {
					ip = append(ip, 0, 0, 0)
				}
			}
			frame := ethernet(etherTypeIPv4, ip)
			opts := Options{IgnoreChecksums: ignore}
			usual, long := NewDecoder(opts), NewDecoder(opts)
			// Half the time as after an offloaded checksum, which the
			// one pass then tests for first.
			usual.offloaded = i%2 == 1
			rec := record{data: frame, time: t0, linkType: Ethernet, origLen: len(frame), iface: 3}
			p1, e1 := usual.decode(&rec)
			long.stats.Records++
			long.rec = &rec
			p2, e2 := long.decodeIPv4(frame[14:])
			if fmt.Sprint(e1) != fmt.Sprint(e2) || (p1 == nil) != (p2 == nil) ||
				p1 != nil && (p1.Frame != p2.Frame || p1.Interface != p2.Interface || !p1.Time.Equal(p2.Time) ||
					p1.Src != p2.Src || p1.Dst != p2.Dst || !bytes.Equal(p1.Payload, p2.Payload) || p1.Reassembled != p2.Reassembled) ||
				usual.stats != long.stats {
				t.Fatalf("frame %d (ignore checksums %v) % x:\none pass %+v, %v, %+v\nlong way %+v, %v, %+v",
					i, ignore, ip, p1, e1, usual.stats, p2, e2, long.stats)
			}
		}
	}
}

// TestOffloadedFirstStillCatchesDamage reads, after a datagram whose
// checksum was left to the network card (so that the Reader and the
// Decoder test for that first from then on), datagrams with right and
// wrong checksums of both kinds: the wrong ones are still damage, through
// the Reader's fused path and the Decoder's fast case alike.
func TestOffloadedFirstStillCatchesDamage(t *testing.T) {
	pl := []byte("bridge commander datagram")
	offloaded := func(ulenDelta int) []byte {
		ip := ipv4With(addrA, addrB, 1, 0, false, udpDatagram(addrA, addrB, pl))
		binary.BigEndian.PutUint16(ip[26:28], fold(pseudoHeaderSum(addrA.Addr().As4(), addrB.Addr().As4(), len(ip)-20+ulenDelta)))
		return ip
	}
	good := ipv4With(addrA, addrB, 1, 0, false, udpDatagram(addrA, addrB, pl))
	bad := bytes.Clone(good)
	bad[30] ^= 0x40
	offBad := offloaded(0)
	offBad[30] ^= 0x40 // not covered by an offloaded checksum
	frames := [][]byte{good, offloaded(0), good, bad, offloaded(1), offBad, offloaded(0)}
	wantErr := []bool{false, false, false, true, true, false, false}

	d := NewDecoder(Options{})
	p := newPcap(binary.LittleEndian, false, Ethernet, 65535)
	for i, ip := range frames {
		_, err := d.Decode(RawIPv4, ip, ci(t0))
		if got := errors.Is(err, ErrChecksum); got != wantErr[i] || (err != nil && !got) {
			t.Errorf("Decoder, frame %d: %v", i+1, err)
		}
		if want := i >= 1; d.offloaded != want {
			t.Errorf("Decoder, after frame %d: offloaded %v", i+1, d.offloaded)
		}
		p.record(t0.Add(time.Duration(i)*time.Millisecond), ethernet(etherTypeIPv4, ip))
	}
	r, err := NewReader(bytes.NewReader(p.buf))
	if err != nil {
		t.Fatal(err)
	}
	for i := range frames {
		pk, err := r.Next()
		if got := errors.Is(err, ErrChecksum); got != wantErr[i] || (err != nil && !got) {
			t.Errorf("Reader, record %d: %v", i+1, err)
		}
		if err == nil && (i > 0 && !r.PlainLast() || !bytes.Equal(pk.Payload, frames[i][28:])) {
			t.Errorf("Reader, record %d: not taken by the fused path, or payload % x", i+1, pk.Payload)
		}
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("after the records: %v", err)
	}
}

// BenchmarkOnesAddGameSizes sums datagrams of the UDP lengths most common
// in OpenBC's networked battle (42 and 74 bytes make two thirds of them).
func BenchmarkOnesAddGameSizes(b *testing.B) {
	sizes := []int{42, 74, 42, 14, 36, 74, 68, 42, 62, 29, 42, 74, 138, 20}
	bufs := make([][]byte, len(sizes))
	for i, n := range sizes {
		bufs[i] = payload(i, n)
	}
	var sink uint64
	for b.Loop() {
		for _, buf := range bufs {
			sink += onesAdd(0x1234, buf)
		}
	}
	_ = sink
}

// FuzzOnesAddMatchesReference holds onesAdd, from any running sum, to the
// plain 16-bit reference.
func FuzzOnesAddMatchesReference(f *testing.F) {
	f.Add(uint64(0), []byte("bridge commander"))
	f.Add(^uint64(0)-1, []byte{0xff, 0xff, 0xff})
	f.Add(uint64(1)<<63, bytes.Repeat([]byte{0xff}, 75))
	f.Fuzz(func(t *testing.T, acc uint64, b []byte) {
		want := uint32(fold(acc)) + uint32(refSum(b))
		want = want>>16 + want&0xffff
		// 0 and 0xffff are both zero in ones' complement.
		if got := fold(onesAdd(acc, b)); uint32(got)%0xffff != want%0xffff {
			t.Fatalf("onesAdd(%#x, % x) folds to %#04x, want %#04x", acc, b, got, want)
		}
	})
}
