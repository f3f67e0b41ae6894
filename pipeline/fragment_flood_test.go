package pipeline_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net/netip"
	"runtime"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/session"
)

// floodSource is join.pcap with a fragment flood merged in by time: 100
// client ports each send fragment 0 of a 255-fragment message (one byte),
// then fragments 1 to 253 of 8,000 bytes, round-robin over the ports, so
// that no set ever completes and all grow together (issue 23 point 1: the
// 203 MB capture this makes had stats hold 100 x 2,024,001 bytes). The
// datagrams are made as they are read, so the capture is never in memory.
type floodSource struct {
	legit   []capture.Packet
	next    int // of legit
	flood   int // flood datagrams sent
	start   time.Time
	step    time.Duration
	pkt     capture.Packet
	wire    []byte // the fragment every port sends in this round
	records int
}

const (
	floodPorts     = 100
	floodFragments = 254 // fragment 0, then 1 to 253
	floodBytes     = 8000
)

var floodServer = netip.MustParseAddrPort("10.0.0.1:22101")

func newFloodSource(t *testing.T) *floodSource {
	rd, err := capture.Open("../testdata/pcaps/join.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	src := &floodSource{}
	for {
		p, err := rd.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if p.Dst != floodServer && p.Src != floodServer {
			t.Fatalf("join.pcap's server is not %v", floodServer)
		}
		q := *p
		q.Payload = append([]byte(nil), p.Payload...)
		src.legit = append(src.legit, q)
	}
	src.start = src.legit[0].Time
	span := src.legit[len(src.legit)-1].Time.Sub(src.start)
	src.step = span / (floodPorts * floodFragments)
	return src
}

func (f *floodSource) floodTime() time.Time { return f.start.Add(time.Duration(f.flood) * f.step) }

func (f *floodSource) Next() (*capture.Packet, error) {
	legit := f.next < len(f.legit)
	flood := f.flood < floodPorts*floodFragments
	switch {
	case legit && (!flood || !f.legit[f.next].Time.After(f.floodTime())):
		f.pkt = f.legit[f.next]
		f.next++
	case flood:
		port, idx := f.flood%floodPorts, f.flood/floodPorts
		f.pkt = capture.Packet{Time: f.floodTime(), Dst: floodServer,
			Src: netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 9, 9}), uint16(40000+port))}
		if port == 0 {
			f.wire = fragment(idx)
		}
		f.pkt.Payload = f.wire
		f.flood++
	default:
		return nil, io.EOF
	}
	f.records++
	f.pkt.Frame = f.records
	return &f.pkt, nil
}

// fragment is fragment idx of the flood's message (sequence number 7 on
// every port), encrypted.
func fragment(idx int) []byte {
	n := floodBytes
	hdr := []byte{0x02, 1, byte(dissect.TypeData), 0, 0, 7, 0, byte(idx)}
	if idx == 0 {
		n = 1
		hdr = append(hdr, 255)
	}
	msgLen := len(hdr) - 2 + n
	binary.LittleEndian.PutUint16(hdr[3:], 0x8000|0x2000|uint16(msgLen)) // reliable, fragment
	plain := hdr
	for i := range n {
		plain = append(plain, byte(i))
	}
	wire := make([]byte, len(plain))
	dissect.Encrypt(wire, plain)
	return wire
}

// pcap returns a capture.Reader of the flood written as a pcap file. The
// file is made as it is read, never whole in memory, and read the way a
// file is: every Read filled.
func (f *floodSource) pcap(t *testing.T) *capture.Reader {
	fr := &floodReader{src: f}
	w, err := capture.NewWriter(&fr.buf, capture.PCAP, capture.Ethernet)
	if err != nil {
		t.Fatal(err)
	}
	fr.w = w
	rd, err := capture.NewReader(fr)
	if err != nil {
		t.Fatal(err)
	}
	return rd
}

type floodReader struct {
	src  *floodSource
	w    *capture.Writer
	buf  bytes.Buffer
	done bool
}

func (r *floodReader) Read(p []byte) (int, error) {
	for r.buf.Len() < len(p) && !r.done {
		pk, err := r.src.Next()
		if err == nil {
			err = r.w.WriteUDP(pk.Time, pk.Src, pk.Dst, pk.Payload)
		}
		if err == io.EOF {
			r.done = true
		} else if err != nil {
			return 0, err
		}
		if err := r.w.Flush(); err != nil {
			return 0, err
		}
	}
	if r.buf.Len() == 0 && r.done {
		return 0, io.EOF
	}
	return r.buf.Read(p)
}

// Fragments added to sets that already exist count against the byte cap
// too: the flood above keeps what stats holds (its pipeline: a
// capture.Reader, Run, then the session Builder) under 32 MiB plus the
// fragment cap, evicting oldest first, and the real client's join beside
// it still decodes whole. The heap after collection is what is held; the
// bytes allocated on top of it are what the collector lets the process
// grow by between collections, which RSS shows (bcwire stats of this
// flood as a file: 256 MiB peak RSS before, 28 MiB after).
func TestFragmentFloodOfGrowingSetsStaysUnderByteCap(t *testing.T) {
	if testing.Short() {
		t.Skip("makes and decodes 203 MB of fragments")
	}
	src := newFloodSource(t)
	legitClient := src.legit[0].Src
	if legitClient == floodServer {
		legitClient = src.legit[0].Dst
	}
	var sessions []*session.Session
	bl := session.NewBuilder(session.Options{}, func(s *session.Session) { sessions = append(sessions, s) })
	tr := flow.New(flow.Options{})
	rd := src.pcap(t)
	var ms runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&ms)
	base, peak, alloc := ms.HeapAlloc, uint64(0), ms.TotalAlloc
	legitGame, legitReassembled, records := 0, 0, 0
	sum, err := flow.Run(rd, tr, func(r *flow.Record) bool {
		if r.Client == legitClient && r.Game != nil {
			legitGame++
			if r.Reassembled > 0 {
				legitReassembled++
			}
		}
		if records++; records%2000 == 0 {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapAlloc-min(ms.HeapAlloc, base))
		}
		bl.Add(r)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	bl.Finish()
	runtime.ReadMemStats(&ms)
	alloc = ms.TotalAlloc - alloc
	st := sum.Flow
	t.Logf("%d records, %d sets evicted, %d lost, peak live heap growth %.1f MiB, %.1f MiB allocated",
		records, st.FragmentsEvicted, st.FragmentsLost, float64(peak)/(1<<20), float64(alloc)/(1<<20))
	if limit := uint64(32<<20 + flow.DefaultMaxFragmentBytes); peak > limit {
		t.Errorf("live heap grew by %.1f MiB, over 32 MiB plus the %d MiB fragment cap", float64(peak)/(1<<20), flow.DefaultMaxFragmentBytes>>20)
	}
	// The capture is 203 MB: the fragments, and the buffers they are read
	// into, must be reused rather than allocated anew. (This bound counts
	// what the goroutine writing the capture allocates too.)
	if alloc > 64<<20 {
		t.Errorf("%.1f MiB allocated while reading a 203 MB flood", float64(alloc)/(1<<20))
	}
	if st.FragmentsEvicted == 0 {
		t.Error("no fragment set evicted")
	}

	// The real client: every game message, its fragmented checksum answer
	// among them, and a whole join.
	one, err := capture.Open("../testdata/pcaps/join.pcap")
	if err != nil {
		t.Fatal(err)
	}
	alone, err := flow.Run(one, flow.New(flow.Options{}), func(*flow.Record) bool { return true })
	one.Close()
	if err != nil {
		t.Fatal(err)
	}
	if legitGame != alone.Flow.GameMessages || legitReassembled != alone.Flow.Reassembled {
		t.Errorf("real client: %d game messages (%d reassembled), want %d (%d)", legitGame, legitReassembled, alone.Flow.GameMessages, alone.Flow.Reassembled)
	}
	found := false
	for _, s := range sessions {
		if s.Client != legitClient {
			continue
		}
		found = true
		if s.Phases.ChecksumDone == nil || s.Phases.InGame == nil {
			t.Errorf("real client's session did not complete its join: %+v", s.Phases)
		}
		for _, c := range s.Checksums {
			if c.Response == nil {
				t.Errorf("real client's checksum round %v unanswered", c.Round)
			}
		}
	}
	if !found {
		t.Error("no session for the real client")
	}
}
