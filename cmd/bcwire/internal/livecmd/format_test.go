package livecmd

import (
	"bytes"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/dissect/capture"
)

// live -w honours the file name's extension as decode -w and synth -w do
// (issue 33): x.pcap is a pcap file, x.pcapng a pcapng one; and -b
// filesize counts the pcap format's smaller record headers.
func TestLiveWriteFormatFromName(t *testing.T) {
	pcapMagic := []byte{0x4D, 0x3C, 0xB2, 0xA1}
	ngMagic := []byte{0x0A, 0x0D, 0x0D, 0x0A}
	for _, tc := range []struct {
		name  string
		magic []byte
	}{{"x.pcap", pcapMagic}, {"x.cap", pcapMagic}, {"x.pcapng", ngMagic}, {"x.bin", ngMagic}} {
		dir := t.TempDir()
		path := filepath.Join(dir, tc.name)
		rw := &ringWriter{path: path, link: capture.Ethernet, iface: "lo", create: createAtomic}
		now := time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)
		if err := rw.Start(now); err != nil {
			t.Fatal(err)
		}
		for i := range 10 {
			if err := rw.WriteFrame(now, now, udpFrame(uint32(i), 100)); err != nil {
				t.Fatal(err)
			}
		}
		if err := rw.Close(); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, tc.magic) {
			t.Errorf("%s starts % x, want % x", tc.name, b[:4], tc.magic)
		}
		if seqs, _ := readSeqs(t, []string{path}); len(seqs) != 10 {
			t.Errorf("%s: %d frames read back", tc.name, len(seqs))
		}
	}
	// The size condition in pcap: every file at most the size.
	dir := t.TempDir()
	ring, _ := parseRing([]string{"filesize:2"})
	rw := &ringWriter{path: filepath.Join(dir, "r.pcap"), ring: ring, link: capture.Ethernet, iface: "lo", create: createAtomic}
	now := time.Now()
	rw.Start(now)
	for i := range 200 {
		if err := rw.WriteFrame(now, now, udpFrame(uint32(i), 20+i%90)); err != nil {
			t.Fatal(err)
		}
	}
	rw.Close()
	files, _ := filepath.Glob(filepath.Join(dir, "r_*.pcap"))
	if len(files) < 5 {
		t.Fatalf("%d files", len(files))
	}
	total := 0
	for _, f := range files {
		st, _ := os.Stat(f)
		if st.Size() > 2000 {
			t.Errorf("%s: %d bytes, over 2000", f, st.Size())
		}
		seqs, _ := readSeqs(t, []string{f})
		total += len(seqs)
	}
	if total != 200 {
		t.Errorf("%d frames in the ring, want 200", total)
	}
}

// live -w - writes the capture to standard output, and nothing else goes
// there; no file named "-" is made.
func TestLiveWriteToStdout(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	wd, _ := os.Getwd()
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	sink, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	port := sink.LocalAddr().(*net.UDPAddr).Port
	stop := make(chan struct{})
	go func() { // until the capture ends: no guess at when it has started
		c, err := net.DialUDP("udp4", nil, sink.LocalAddr().(*net.UDPAddr))
		if err != nil {
			return
		}
		defer c.Close()
		for {
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
				c.Write([]byte{0xFF, 1, 2, 3})
			}
		}
	}()
	var stdout, stderr bytes.Buffer
	err = Run(&Options{IO: &iostreams.IOStreams{Out: &stdout, Err: &stderr}, Iface: "lo", Port: port, Snaplen: 262144,
		Write: "-", Duration: 2 * time.Second})
	close(stop)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	if _, err := os.Stat("-"); err == nil {
		t.Fatal(`a file named "-" was written`)
	}
	rd, err := capture.NewReader(bytes.NewReader(stdout.Bytes()))
	if err != nil {
		t.Fatalf("stdout is not a capture: %v (%d bytes)", err, stdout.Len())
	}
	n := 0
	for {
		if _, err := rd.Next(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if n == 0 {
		t.Error("no packets in the capture on stdout")
	}
	if err := Run(&Options{IO: &iostreams.IOStreams{Out: io.Discard, Err: io.Discard}, Iface: "lo", Port: port, Snaplen: 262144,
		Write: "-", Ring: []string{"filesize:10"}}); err == nil || !strings.Contains(err.Error(), "-w - writes one stream") {
		t.Error("-w - with -b accepted")
	}
}
