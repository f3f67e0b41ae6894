// This file holds the fuzz targets: arbitrary file bytes through Reader,
// and arbitrary frames through Decoder. Neither may panic or fail to make
// progress, and what they return must be self-consistent.

package capture

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"testing"
	"time"
)

// fuzzSeedFiles returns valid and damaged captures of every kind.
func fuzzSeedFiles(t testing.TB) [][]byte {
	var seeds [][]byte
	for _, format := range []Format{PCAP, PCAPNG} {
		for _, link := range []LinkType{Ethernet, LinuxSLL, Loopback, RawIPv4} {
			var buf bytes.Buffer
			w, err := NewWriter(&buf, format, link)
			if err != nil {
				t.Fatal(err)
			}
			w.MTU = 100
			w.WriteUDP(t0, addrA, addrB, []byte("hello"))
			w.WriteUDP(t0.Add(time.Second), addrB, addrA, payload(1, 150)) // 2 fragments
			w.Flush()
			seeds = append(seeds, buf.Bytes())
		}
	}
	le, be := binary.LittleEndian, binary.BigEndian
	pkt := ipv4UDP(addrA, addrB, 1, []byte("x"))
	seeds = append(seeds,
		newPcap(be, true, LinuxSLL2, 65535).record(t0, sll2(etherTypeIPv4, pkt)).buf,
		newPcap(le, false, Ethernet, 65535).record(t0, ethernet(etherTypeIPv4, pkt, etherTypeVLAN)).
			header(1, 2, 1<<30, 1<<30).raw(make([]byte, 20)).record(t0, ethernet(etherTypeIPv4, pkt)).buf,
		newNg(be).idb(Loopback, 0, ngOpt(be, ngOptTSResol, []byte{0x89})).
			block(0x0bad, []byte{1, 2, 3}).epb(0, 1, null(le, afINET, pkt)).spb(null(be, afINET, pkt)).buf,
		newNg(le).idb(RawIPv4, 64).epb(0, 1, pkt).buf[:60],
	)
	return seeds
}

func FuzzReader(f *testing.F) {
	for _, s := range fuzzSeedFiles(f) {
		f.Add(s, false)
		f.Add(s, true) // without checksums, mutated packets get further
	}
	f.Fuzz(func(t *testing.T, data []byte, ignoreChecksums bool) {
		r, err := NewReaderWithOptions(bytes.NewReader(data), Options{MaxFragmentSets: 4, MaxFragmentBytes: 10000, IgnoreChecksums: ignoreChecksums})
		if err != nil {
			return
		}
		// Every call consumes at least one byte of input until io.EOF, so
		// this bound catches a reader that stops making progress.
		packets, damaged, lastFrame := 0, 0, 0
		for range len(data) + 2 {
			p, err := r.Next()
			if err == io.EOF {
				st := r.Stats()
				if st.UDP != packets || st.Damaged != damaged || st.Records < lastFrame {
					t.Fatalf("stats %+v disagree: %d packets, %d damaged, last frame %d", st, packets, damaged, lastFrame)
				}
				if len(r.Incomplete()) != st.FragmentsIncomplete {
					t.Fatalf("%d incomplete sets listed, %d counted", len(r.Incomplete()), st.FragmentsIncomplete)
				}
				return
			}
			var pe *PacketError
			if errors.As(err, &pe) {
				damaged++
				if pe.Frame != 0 && pe.Frame <= lastFrame {
					t.Fatalf("error frame %d after frame %d", pe.Frame, lastFrame)
				}
				if pe.Packet != nil && (pe.Packet.Frame != pe.Frame || !errors.Is(pe, ErrChecksum) || ignoreChecksums) {
					t.Fatalf("error %v carries packet of frame %d", pe, pe.Packet.Frame)
				}
				lastFrame = max(lastFrame, pe.Frame)
				continue
			}
			if err != nil {
				t.Fatalf("unexpected error: %v", err)
			}
			packets++
			if p.Frame <= lastFrame || len(p.Payload) > ipv4MaxPayload-8 {
				t.Fatalf("bad packet: frame %d after %d, %d bytes", p.Frame, lastFrame, len(p.Payload))
			}
			lastFrame = p.Frame
		}
		t.Fatalf("no io.EOF after %d calls for %d bytes of input", len(data)+2, len(data))
	})
}

func FuzzDecodeFrame(f *testing.F) {
	pkt := ipv4UDP(addrA, addrB, 1, []byte("bridge commander"))
	frags := ipv4Fragments(addrA, addrB, 9, payload(2, 40), 24)
	seeds := []struct {
		link LinkType
		a, b []byte
	}{
		{Ethernet, ethernet(etherTypeIPv4, pkt), ethernet(etherTypeIPv4, pkt, etherTypeQinQ, etherTypeVLAN)},
		{LinuxSLL, wrapLink(LinuxSLL, pkt), nil},
		{LinuxSLL2, sll2(etherTypeIPv4, pkt), sll2(0x86dd, nil)},
		{Loopback, null(binary.BigEndian, afINET, pkt), null(binary.LittleEndian, afINET, pkt)},
		{Raw, frags[1], frags[0]},
		{RawIPv4, frags[0], frags[1]},
		{Loop, nil, []byte{0, 0, 0, 2, 0x45}},
	}
	for i, s := range seeds {
		f.Add(uint16(s.link), s.a, s.b, i%2 == 1)
	}
	f.Fuzz(func(t *testing.T, link uint16, a, b []byte, ignoreChecksums bool) {
		d := NewDecoder(Options{MaxFragmentSets: 2, MaxFragmentBytes: 3000, IgnoreChecksums: ignoreChecksums})
		// Both orders and a duplicate, with time moving on so that the
		// timeout also gets exercised.
		frames := [][]byte{a, b, a, b, b, a}
		for i, fr := range frames {
			p, err := d.Decode(LinkType(link), fr, ci(t0.Add(time.Duration(i)*10*time.Second)))
			if err != nil {
				if _, ok := err.(*PacketError); !ok {
					t.Fatalf("error of type %T", err)
				}
				continue
			}
			if p != nil && (p.Frame != i+1 || len(p.Payload) > ipv4MaxPayload-8) {
				t.Fatalf("bad packet: frame %d (call %d), %d bytes", p.Frame, i+1, len(p.Payload))
			}
		}
		st := d.Stats()
		if st.Records != len(frames) {
			t.Fatalf("stats %+v", st)
		}
		d.Flush()
		if d.bytes != 0 || len(d.sets) != 0 {
			t.Fatalf("after Flush: %d bytes in %d sets", d.bytes, len(d.sets))
		}
	})
}
