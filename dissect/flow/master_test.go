package flow

import (
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
)

// TestMasterExchangeCapture reads testdata/master-exchange.pcap, recorded
// on loopback while interop/master.sh ran: two bcwire servers
// heartbeating a real GameSpy master (333networks' Masterserver-Qt5
// 8e1fdbe) and interop/masterlist asking that master for its list twice,
// over TCP. Every message of the master's list protocol is a record, in
// order, the lists with the servers the master listed.
func TestMasterExchangeCapture(t *testing.T) {
	var got []string
	udp := 0
	for _, workers := range []int{0, 2} {
		got, udp = got[:0], 0
		rd, err := capture.Open("testdata/master-exchange.pcap")
		if err != nil {
			t.Fatal(err)
		}
		emit := func(r *Record) bool {
			if r.Err != nil {
				t.Errorf("frame %d: %v", r.Frame, r.Err)
			}
			if r.Master == nil {
				udp++
				return true
			}
			s := fmt.Sprintf("%d %s %s", r.Frame, r.Dir, r.Master.Kind)
			if r.Master.Kind == dissect.MasterList {
				s += fmt.Sprint(" ", r.Master.Servers)
			}
			got = append(got, s)
			return true
		}
		if workers == 0 {
			_, err = Run(rd, New(Options{}), emit)
		} else {
			_, err = RunParallel(rd, New(Options{}), workers, emit)
		}
		rd.Close()
		if err != nil {
			t.Fatal(err)
		}
		want := []string{
			"20 S->C challenge", "22 C->S validate", "24 C->S list-request", "26 S->C list [127.0.0.1:22150]",
			"46 S->C challenge", "48 C->S validate", "50 C->S list-request", "52 S->C list [127.0.0.1:22150 127.0.0.1:22101]",
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("workers %d: master messages\n%s\nwant\n%s", workers, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
		// tcpdump counts 31 UDP datagrams: heartbeats, the master's
		// challenges and status checks, and the servers' replies.
		if udp != 31 {
			t.Errorf("workers %d: %d UDP GameSpy records, want 31", workers, udp)
		}
	}
}

// seg feeds one TCP segment to t as the pipeline does.
func seg(t *Tracker, frame int, from, to netip.AddrPort, seq uint32, flags uint8, data string, out *[]*Record) {
	r := &Record{Frame: frame, Time: time.Unix(int64(frame), 0), Src: from, Dst: to,
		TCP: capture.TCPSegment{Valid: true, Seq: seq, Flags: flags}}
	t.datagram(r, []byte(data), &sink{until: func(r *Record) bool {
		c := *r
		if r.Master != nil {
			m := *r.Master
			c.Master = &m
		}
		*out = append(*out, &c)
		return true
	}})
}

// TestMasterStreamOrder: segments out of order, resent, overlapping, and
// a list spread over three segments still give each message once, whole,
// in stream order.
func TestMasterStreamOrder(t *testing.T) {
	master := netip.MustParseAddrPort("10.0.0.9:28900")
	client := netip.MustParseAddrPort("10.0.0.5:40000")
	list := "\x48\xCE\x22\xF1\x74\xB4\x48\xCE\x22\xF1\x74\xB5\\final\\"
	tr := New(Options{})
	var out []*Record
	seg(tr, 1, master, client, 999, capture.TCPSyn, "", &out)
	seg(tr, 2, master, client, 1000, 0, `\basic\\secure\LRPOPQ`, &out)
	// The list in three pieces: the last first, then the first twice, then
	// the middle overlapping the first.
	seg(tr, 3, master, client, 1021+10, 0, list[10:], &out)
	seg(tr, 4, master, client, 1021, 0, list[:6], &out)
	seg(tr, 5, master, client, 1021, 0, list[:6], &out)
	seg(tr, 6, master, client, 1021+4, 0, list[4:10], &out)
	seg(tr, 7, master, client, uint32(1021+len(list)), capture.TCPFin, "", &out)
	if len(out) != 2 {
		t.Fatalf("%d records, want the challenge and the list", len(out))
	}
	if out[0].Master.Kind != dissect.MasterChallenge || out[1].Master.Kind != dissect.MasterList || out[1].Frame != 6 {
		t.Errorf("records %v (frame %d), %v (frame %d)", out[0].Master.Kind, out[0].Frame, out[1].Master.Kind, out[1].Frame)
	}
	if n := len(out[1].Master.Servers); n != 2 || !out[1].Master.Final || out[1].Err != nil {
		t.Errorf("list of %d servers, final %v, err %v", n, out[1].Master.Final, out[1].Err)
	}
}

// TestMasterStreamCutAndGap: a list cut off by the end of the capture is
// reported, and a gap that never fills is given up on once the bytes held
// ahead of it pass the cap, with the damage named.
func TestMasterStreamCutAndGap(t *testing.T) {
	master := netip.MustParseAddrPort("10.0.0.9:28900")
	client := netip.MustParseAddrPort("10.0.0.5:40000")
	tr := New(Options{})
	var out []*Record
	seg(tr, 1, master, client, 5000, 0, "\x48\xCE\x22\xF1\x74\xB4", &out)
	tr.Finish(func(r *Record) { c := *r; out = append(out, &c) })
	if len(out) != 1 || out[0].Err == nil || !strings.Contains(out[0].Err.Error(), "final") {
		t.Fatalf("a cut list: %d records, err %v", len(out), errOf(out))
	}

	tr, out = New(Options{}), nil
	seg(tr, 1, client, master, 100, 0, `\list\cmp\gamename\bcommander\final\`, &out)
	chunk := strings.Repeat("x", 4096)
	frame := 2
	for off := 0; off <= maxMasterAhead; off += len(chunk) {
		// Each segment lies past a gap of 1,000 bytes never captured.
		seg(tr, frame, client, master, uint32(100+36+1000+off), 0, chunk, &out)
		frame++
	}
	var gap *Record
	for _, r := range out {
		if r.Err != nil && strings.Contains(r.Err.Error(), "never captured") {
			gap = r
		}
	}
	if gap == nil {
		t.Fatalf("no record names the gap; %d records", len(out))
	}
	if !strings.Contains(gap.Err.Error(), "1000 bytes") {
		t.Errorf("gap: %v", gap.Err)
	}
}

func errOf(rs []*Record) error {
	for _, r := range rs {
		if r.Err != nil {
			return r.Err
		}
	}
	return nil
}

// TestMasterConnsBounded: a flood of connections keeps at most
// maxMasterConns followed.
func TestMasterConnsBounded(t *testing.T) {
	master := netip.MustParseAddrPort("10.0.0.9:28900")
	tr := New(Options{})
	var out []*Record
	for i := range 3 * maxMasterConns {
		c := netip.AddrPortFrom(netip.MustParseAddr("10.0.1.1"), uint16(20000+i))
		seg(tr, i+1, c, master, 1, 0, `\list\cmp\gamename\bcommander\final\`, &out)
	}
	if n := len(tr.master.conns); n > maxMasterConns {
		t.Errorf("%d connections followed, cap %d", n, maxMasterConns)
	}
	if len(out) != 3*maxMasterConns {
		t.Errorf("%d records for %d requests", len(out), 3*maxMasterConns)
	}
}

// FuzzMasterStream feeds segments with arbitrary sequence numbers, flags
// and bytes, in both directions: no panic, and what is held stays under
// its caps.
func FuzzMasterStream(f *testing.F) {
	f.Add([]byte("\x00\x00\x00\x01\x02\\basic\\\\secure\\ABCDEF"), []byte("\x01\x00\x00\x00\x10\x48\xCE\x22\xF1\x74\xB4\\final\\"))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		master := netip.MustParseAddrPort("10.0.0.9:28900")
		client := netip.MustParseAddrPort("10.0.0.5:40000")
		tr := New(Options{})
		var out []*Record
		for i, p := range [][]byte{a, b, a, b} {
			if len(p) < 5 {
				continue
			}
			from, to := client, master
			if p[0]&1 == 1 {
				from, to = master, client
			}
			seq := uint32(p[1])<<16 | uint32(p[2])<<8 | uint32(p[3])
			seg(tr, i+1, from, to, seq, p[4]&0x07, string(p[5:]), &out)
		}
		tr.Finish(func(*Record) {})
		for _, c := range tr.master.conns {
			for _, s := range c.dirs {
				if s.aheadN > maxMasterAhead+len(a)+len(b) {
					t.Fatalf("%d bytes held ahead", s.aheadN)
				}
			}
		}
	})
}
