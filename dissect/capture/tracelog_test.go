package capture_test

import (
	"bytes"
	"errors"
	"io"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
)

// The logs in testdata/tracelog were written by STBC-Dedicated-Server's own
// logger from the bundled captures (see testdata/tracelog/STEPS.txt).

// datagram is what a reader handed out, copied.
type datagram struct {
	frame    int
	time     time.Time
	src, dst netip.AddrPort
	payload  []byte
	err      error // damage, with the datagram when the error carries one
}

func readAll(t *testing.T, path string, opts capture.Options) ([]datagram, capture.Format) {
	t.Helper()
	rd, err := capture.OpenWithOptions(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var out []datagram
	for {
		p, err := rd.Next()
		if err == io.EOF {
			return out, rd.Format()
		}
		var pe *capture.PacketError
		switch {
		case errors.As(err, &pe):
			d := datagram{frame: pe.Frame, err: err}
			if q := pe.Packet; q != nil {
				d.time, d.src, d.dst, d.payload = q.Time, q.Src, q.Dst, bytes.Clone(q.Payload)
			}
			out = append(out, d)
		case err != nil:
			t.Fatal(err)
		default:
			out = append(out, datagram{frame: p.Frame, time: p.Time, src: p.Src, dst: p.Dst, payload: bytes.Clone(p.Payload)})
		}
	}
}

func pcapPath(name string) string { return filepath.Join("..", "..", "testdata", "pcaps", name) }

func tracePath(name string) string { return filepath.Join("testdata", "tracelog", name) }

var server = netip.MustParseAddrPort("10.0.0.1:22101")

// A log gives back the datagrams of the capture it was written from, byte
// for byte as they were on the wire (the decrypted dumps encrypted again),
// at the same times (to the logger's millisecond), between the same
// addresses once the server's is named; in every form the logger wrote.
func TestTraceLogIsTheCapture(t *testing.T) {
	for _, c := range []struct{ log, pcap string }{
		{"join.packet_trace.log", "join.pcap"},
		{"join-old.packet_trace.log.gz", "join.pcap"},
		{"duel.packet_trace.log.zst", "duel.pcapng"},
	} {
		t.Run(c.log, func(t *testing.T) {
			want, _ := readAll(t, pcapPath(c.pcap), capture.Options{})
			got, format := readAll(t, tracePath(c.log), capture.Options{TraceServer: server})
			if format != capture.PacketTrace {
				t.Errorf("format %v", format)
			}
			sameDatagrams(t, got, want)
		})
	}
}

func sameDatagrams(t *testing.T, got, want []datagram) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d datagrams, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := got[i], want[i]
		if g.err != nil || w.err != nil {
			t.Fatalf("datagram %d: error %v, want %v", i, g.err, w.err)
		}
		if g.src != w.src || g.dst != w.dst || !bytes.Equal(g.payload, w.payload) {
			t.Fatalf("datagram %d: %v -> %v % X\nwant %v -> %v % X", i, g.src, g.dst, g.payload, w.src, w.dst, w.payload)
		}
		if d := g.time.Sub(w.time); d < -time.Millisecond || d > time.Millisecond {
			t.Fatalf("datagram %d: time %v, want %v", i, g.time, w.time)
		}
	}
}

// Without --server the logging server is the stand-in 0.0.0.0:22101.
func TestTraceLogStandInServer(t *testing.T) {
	got, _ := readAll(t, tracePath("join.packet_trace.log"), capture.Options{})
	if got[0].dst != capture.DefaultTraceServer || got[1].src != capture.DefaultTraceServer {
		t.Errorf("first datagrams %v -> %v, %v -> %v", got[0].src, got[0].dst, got[1].src, got[1].dst)
	}
}

// A log written on a client has S->C for what the client sent: the
// datagrams' peer ids say so, and the addresses come out right.
func TestTraceLogWrittenOnClient(t *testing.T) {
	want, _ := readAll(t, pcapPath("join.pcap"), capture.Options{})
	got, _ := readAll(t, tracePath("join-client.packet_trace.log.gz"), capture.Options{})
	client := netip.MustParseAddrPort("10.0.1.10:50000")
	for i := range want {
		// The client's own address is not in its log: a stand-in.
		if want[i].src == client {
			want[i].src = netip.MustParseAddrPort("0.0.0.0:0")
		} else {
			want[i].dst = netip.MustParseAddrPort("0.0.0.0:0")
		}
	}
	sameDatagrams(t, got, want)
}

// The edge log crosses midnight, has Windows line ends, a failed send and
// two datagrams over 2048 bytes, whose dumps the logger cut.
func TestTraceLogEdges(t *testing.T) {
	want, _ := readAll(t, pcapPath("join.pcap"), capture.Options{})
	got, _ := readAll(t, tracePath("edge.packet_trace.log.gz"), capture.Options{TraceServer: server})
	var kept []datagram
	var notSent, cut int
	for _, d := range got {
		switch {
		case errors.Is(d.err, capture.ErrNotSent):
			notSent++
		case errors.Is(d.err, capture.ErrCut):
			cut++
			if len(d.payload) != 2048 {
				t.Errorf("cut datagram holds %d bytes, want the 2048 the log kept", len(d.payload))
			}
			if !strings.Contains(d.err.Error(), "damaged-cut") {
				t.Errorf("cut datagram not named damaged-cut: %v", d.err)
			}
		case d.err != nil:
			t.Errorf("unexpected damage: %v", d.err)
		default:
			kept = append(kept, d)
		}
	}
	if notSent != 1 || cut != 2 {
		t.Errorf("%d failed sends, %d cut datagrams; want 1 and 2", notSent, cut)
	}
	// Times: the same offsets from the first datagram, across midnight.
	shift := got[0].time.Sub(want[0].time)
	for i := range want {
		want[i].time = want[i].time.Add(shift)
	}
	sameDatagrams(t, kept, want)
	last := kept[len(kept)-1].time
	if kept[0].time.Day() != 10 || last.Day() != 11 || last.Hour() != 0 {
		t.Errorf("times %v .. %v, want 2026-01-10 23:59 to past midnight", kept[0].time, last)
	}
}

// §9.2 of STBC-Dedicated-Server's docs/networking/disconnect-flow.md quotes
// a block without time, rc= or indentation; it reads all the same.
func TestTraceLogPublishedExcerpt(t *testing.T) {
	const excerpt = "#1764 C->S Peer#0(127.0.0.1:60271) len=20 [Disconnect]\n" +
		"Decrypted:\n" +
		"  0000: 02 03 05 0A C0 02 00 02 0A 0A 0A EF 01 27 00 00  |.............'..|\n" +
		"  0010: 01 28 00 00                                      |.(..|\n" +
		"DECODE: peer=C(2) msgs=3\n" +
		"  [msg 0] Disconnect (0x05) byte1=0x0A\n" +
		"  [msg 1] ACK seq=39\n" +
		"  [msg 2] ACK seq=40\n"
	rd, err := capture.NewReader(strings.NewReader(excerpt))
	if err != nil {
		t.Fatal(err)
	}
	p, err := rd.Next()
	if err != nil {
		t.Fatal(err)
	}
	plain := make([]byte, len(p.Payload))
	dissect.Decrypt(plain, p.Payload)
	want := []byte{0x02, 0x03, 0x05, 0x0A, 0xC0, 0x02, 0x00, 0x02, 0x0A, 0x0A, 0x0A, 0xEF, 0x01, 0x27, 0x00, 0x00, 0x01, 0x28, 0x00, 0x00}
	if !bytes.Equal(plain, want) || p.Src != netip.MustParseAddrPort("127.0.0.1:60271") || p.Dst != capture.DefaultTraceServer {
		t.Errorf("%v -> %v % X", p.Src, p.Dst, plain)
	}
	if _, err := rd.Next(); err != io.EOF {
		t.Errorf("after the block: %v", err)
	}
}

// §9.3 of the same page quotes a block with neither "Decrypted:" nor
// offsets, and a header without peer label: the bytes after the header are
// the datagram.
func TestTraceLogBareExcerpt(t *testing.T) {
	const excerpt = "#1765 S->C len=6 [ACK]\n" +
		"  01 01 01 02 00 02\n" +
		"DECODE: peer=S(1) msgs=1\n" +
		"  [msg 0] ACK seq=2\n"
	rd, err := capture.NewReader(strings.NewReader(excerpt))
	if err != nil {
		t.Fatal(err)
	}
	p, err := rd.Next()
	if err != nil {
		t.Fatal(err)
	}
	plain := make([]byte, len(p.Payload))
	dissect.Decrypt(plain, p.Payload)
	if !bytes.Equal(plain, []byte{0x01, 0x01, 0x01, 0x02, 0x00, 0x02}) || p.Src != capture.DefaultTraceServer {
		t.Errorf("%v -> %v % X", p.Src, p.Dst, plain)
	}
	if _, err := rd.Next(); err != io.EOF {
		t.Errorf("after the block: %v", err)
	}
}

// Damage in a log is named and confined: each damaged block or run of
// stray lines is one error, and every other datagram still reads.
func TestTraceLogDamage(t *testing.T) {
	clean, err := os.ReadFile(tracePath("join.packet_trace.log"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(clean), "\n")
	blocks := 0
	for _, l := range lines {
		if strings.HasPrefix(l, "[") {
			blocks++
		}
	}
	find := func(prefix string, from int) int {
		for i := from; i < len(lines); i++ {
			if strings.HasPrefix(lines[i], prefix) {
				return i
			}
		}
		t.Fatalf("no line %q", prefix)
		return 0
	}
	for _, c := range []struct {
		name    string
		edit    func(ls []string) []string
		class   error
		damaged int // blocks lost or damaged
	}{
		{"stray lines", func(ls []string) []string {
			i := find("[", 40)
			return append(ls[:i:i], append([]string{"garbage", "more garbage \x00\xff"}, ls[i:]...)...)
		}, capture.ErrTraceLine, 0},
		{"cut row", func(ls []string) []string {
			i := find("    0000:", 60)
			ls[i] = ls[i][:20]
			return ls
		}, capture.ErrBadRecord, 1},
		{"row missing", func(ls []string) []string {
			i := find("    0010:", 60)
			return append(ls[:i:i], ls[i+1:]...)
		}, capture.ErrBadRecord, 1},
		{"wrong length", func(ls []string) []string {
			i := find("[", 80)
			ls[i] = strings.Replace(ls[i], " len=", " len=1", 1)
			return ls
		}, capture.ErrBadRecord, 1},
		{"blocks missing", func(ls []string) []string {
			i := find("[", 40)
			j := find("[", i+1)
			return append(ls[:i:i], ls[j:]...)
		}, capture.ErrTraceLine, 1},
		{"binary after the header", func(ls []string) []string {
			return append(ls[:30:30], "\x00\x01\x02\xff\xfe\r\r\x00", strings.Repeat("\xAB", 100000))
		}, nil, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := strings.Join(c.edit(append([]string(nil), lines...)), "\n")
			rd, err := capture.NewReader(strings.NewReader(in))
			if err != nil {
				t.Fatal(err)
			}
			good, bad := 0, 0
			for {
				_, err := rd.Next()
				if err == io.EOF {
					break
				}
				var pe *capture.PacketError
				if errors.As(err, &pe) {
					bad++
					if c.class != nil && !errors.Is(err, c.class) {
						t.Errorf("damage %v, want %v", err, c.class)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				good++
			}
			if bad == 0 {
				t.Error("no damage reported")
			}
			if c.damaged >= 0 && good != blocks-c.damaged {
				t.Errorf("%d datagrams read, want %d", good, blocks-c.damaged)
			}
		})
	}
}

// A binary file named .log is refused as no capture at all.
func TestTraceLogBinaryFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "packet_trace.log")
	if err := os.WriteFile(path, bytes.Repeat([]byte{0xDE, 0xAD, 0xBE, 0xEF, 0}, 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := capture.Open(path)
	if err == nil || !strings.Contains(err.Error(), "nor a packet_trace.log") {
		t.Errorf("err = %v", err)
	}
}

// The OpenBC log reads without damage at the capture level (its two
// datagrams of transport type 0x06 are the dissector's concern).
func TestTraceLogOpenBC(t *testing.T) {
	got, _ := readAll(t, tracePath("obc-restart.packet_trace.log"), capture.Options{})
	if len(got) != 76 {
		t.Errorf("%d datagrams, want 76", len(got))
	}
	for _, d := range got {
		if d.err != nil {
			t.Error(d.err)
		}
	}
}
