package livecmd

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/dissect/capture"
)

// burst sends every datagram of the replay at once, with no pause: the
// ring blocks fill, and the last is still being filled when the stop
// comes.
func (rp *loopbackReplay) burst(t *testing.T) {
	t.Helper()
	for i, p := range rp.packets {
		if _, err := rp.socks[p.src].WriteToUDP(p.payload, rp.socks[p.dst].LocalAddr().(*net.UDPAddr)); err != nil {
			t.Fatalf("datagram %d: %v", i+1, err)
		}
	}
}

// addr is the loopback socket standing for a capture endpoint.
func (rp *loopbackReplay) addr(ep netip.AddrPort) netip.AddrPort {
	return rp.socks[ep].LocalAddr().(*net.UDPAddr).AddrPort()
}

// prefixFile writes the first n datagrams of the replay, with the loopback
// addresses they cross lo with, to a capture file: what live should have
// seen.
func (rp *loopbackReplay) prefixFile(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "prefix.pcap")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w, err := capture.NewWriter(f, capture.PCAP, capture.Ethernet)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 26, 0, 0, 0, 0, time.UTC)
	for i, p := range rp.packets[:n] {
		if err := w.WriteUDP(at.Add(time.Duration(i)*time.Microsecond), rp.addr(p.src), rp.addr(p.dst), p.payload); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return path
}

var kernelLine = regexp.MustCompile(`kernel: (\d+) packets passed the filter, (\d+) dropped; (?:all )?(\d+) captured(?:, (\d+) more after -c)?`)

// kernelCounts reads the final summary's accounting: passed, dropped,
// captured, after -c.
func kernelCounts(t *testing.T, stderr string) (passed, dropped, captured, beyond int) {
	t.Helper()
	m := kernelLine.FindStringSubmatch(stderr)
	if m == nil {
		t.Fatalf("no kernel line in:\n%s", stderr)
	}
	n := make([]int, 4)
	for i := range n {
		if m[i+1] != "" {
			n[i], _ = strconv.Atoi(m[i+1])
		}
	}
	return n[0], n[1], n[2], n[3]
}

// TestStopKeepsEveryPassedFrame sends the 5,398 datagrams of battle.pcap
// over lo in one burst and stops the capture right after it in each way
// live can stop (SIGINT, SIGTERM, -c, --duration), decoding only, writing
// -w, or writing a -b ring: every frame the kernel counted as passed is
// captured and decoded, and is in the files, in the order sent; the
// summary's counts are the kernel's, with nothing lost.
func TestStopKeepsEveryPassedFrame(t *testing.T) {
	needRoot(t)
	path := filepath.Join("..", "..", "..", "..", "testdata", "pcaps", "battle.pcap")
	for _, stop := range []string{"SIGINT", "SIGTERM", "-c", "--duration"} {
		for _, out := range []string{"decode", "-w", "-b"} {
			t.Run(stop+"/"+out, func(t *testing.T) { stopKeepsEveryPassedFrame(t, path, stop, out) })
		}
	}
}

func stopKeepsEveryPassedFrame(t *testing.T, path, stop, out string) {
	rp := prepareReplay(t, path)
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second) // a safety net, never the stop
	defer cancel()
	ready := make(chan struct{})
	o := &Options{IO: &iostreams.IOStreams{Out: &stdout, Err: &stderr}, Iface: "lo", Port: int(rp.Server.Port()),
		Servers: []string{rp.Server.String()}, JSON: true, Snaplen: 262144, Ctx: ctx, Ready: func() { close(ready) }}
	switch out {
	case "-w":
		o.Write = filepath.Join(dir, "live.pcapng")
	case "-b":
		o.Write = filepath.Join(dir, "ring.pcapng")
		o.Ring = []string{"filesize:100"}
	}
	const count = 3000
	switch stop {
	case "-c":
		o.Count = count
	case "--duration":
		o.Duration = 2 * time.Second
	}
	done := make(chan error, 1)
	go func() { done <- Run(o) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("live ended before capturing: %v\n%s", err, stderr.String())
	}
	rp.burst(t)
	switch stop {
	case "SIGINT":
		syscall.Kill(os.Getpid(), syscall.SIGINT)
	case "SIGTERM":
		syscall.Kill(os.Getpid(), syscall.SIGTERM)
	}
	var err error
	select {
	case err = <-done:
	case <-time.After(90 * time.Second):
		t.Fatal("live did not stop")
	}
	var ee *exit.Error
	if err != nil && !(errors.As(err, &ee) && ee.Code == exit.CodeDamaged) {
		t.Fatalf("live: %v\n%s", err, stderr.String())
	}
	if ctx.Err() != nil {
		t.Fatalf("stopped by the test's safety timeout, not by %s", stop)
	}
	errText := stderr.String()
	passed, dropped, captured, beyond := kernelCounts(t, errText)
	t.Logf("%d sent, kernel passed %d, dropped %d; captured %d, %d after -c", rp.Datagrams, passed, dropped, captured, beyond)
	if strings.Contains(errText, "LOST") || dropped != 0 {
		t.Errorf("frames lost:\n%s", errText)
	}
	want := passed
	if stop == "-c" {
		want = min(passed, count)
	}
	if captured != want || captured+beyond != passed {
		t.Errorf("captured %d and %d after -c of the %d the kernel passed, want %d captured", captured, beyond, passed, want)
	}
	if stop != "--duration" && passed != rp.Datagrams && (stop != "-c" || passed < count) {
		// The burst was sent before the stop; only --duration may
		// end it first. (Not an error of live: the test did not test.)
		t.Logf("note: the kernel passed %d of the %d sent before the stop", passed, rp.Datagrams)
	}
	if captured == 0 {
		t.Fatalf("nothing captured: the test did not test the stop")
	}

	// Decoded: the same messages as decoding the datagrams captured.
	wantCounts := opcodeCounts(t, decodeLines(t, rp.prefixFile(t, captured), []netip.AddrPort{rp.Server}))
	liveLines := splitLines(stdout.String())
	gotCounts := opcodeCounts(t, liveLines)
	for k, n := range wantCounts {
		if gotCounts[k] != n {
			t.Errorf("%s: live %d, the first %d datagrams %d", k, gotCounts[k], captured, n)
		}
	}
	if len(gotCounts) != len(wantCounts) {
		t.Errorf("live printed %d kinds, the first %d datagrams have %d", len(gotCounts), captured, len(wantCounts))
	}
	if out == "decode" {
		return
	}

	// Written: every captured frame, in the order sent, in files that
	// decode to the very lines printed live.
	var files []string
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".partial") {
			t.Errorf("temporary file left: %s", e.Name())
		}
		files = append(files, filepath.Join(dir, e.Name()))
	}
	slices.Sort(files)
	if out == "-b" && len(files) < 3 {
		t.Errorf("%d ring files, want several", len(files))
	}
	i := 0
	var again []string
	for _, f := range files {
		rd, err := capture.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		for {
			p, err := rd.Next()
			if err != nil {
				break
			}
			if i >= len(rp.packets) {
				t.Fatalf("%s: more frames than were sent", f)
			}
			sent := rp.packets[i]
			if !bytes.Equal(p.Payload, sent.payload) || p.Src != rp.addr(sent.src) || p.Dst != rp.addr(sent.dst) {
				t.Fatalf("%s: frame %d is not datagram %d as sent", f, i+1, i+1)
			}
			i++
		}
		rd.Close()
		again = append(again, decodeLines(t, f, []netip.AddrPort{rp.Server})...)
	}
	if i != captured {
		t.Errorf("the files hold %d frames, %d were captured", i, captured)
	}
	if out == "-w" && !slices.Equal(again, liveLines) {
		t.Errorf("the -w file decodes to %d lines, not the %d printed live", len(again), len(liveLines))
	}
	if t.Failed() {
		t.Logf("stderr:\n%s", errText)
	}
}

var notWritten = regexp.MustCompile(`(\d+) captured packets NOT WRITTEN to`)

// TestWriteErrorKeepsDecoding fills the disk under -w during a burst: the
// capture stops (exit status 2, "disk is full"), but every frame the kernel
// passed is still read and decoded, and the summary says how many were not
// written.
func TestWriteErrorKeepsDecoding(t *testing.T) {
	needRoot(t)
	rp := prepareReplay(t, filepath.Join("..", "..", "..", "..", "testdata", "pcaps", "battle.pcap"))
	budget := 300_000
	var disk *fullDisk
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	ready := make(chan struct{})
	o := &Options{IO: &iostreams.IOStreams{Out: &stdout, Err: &stderr}, Iface: "lo", Port: int(rp.Server.Port()),
		Servers: []string{rp.Server.String()}, JSON: true, Snaplen: 262144, Ctx: ctx, Ready: func() { close(ready) },
		Write: filepath.Join(t.TempDir(), "full.pcapng"),
		create: func(path string) (captureFile, error) {
			disk = &fullDisk{budget: &budget, name: path}
			return disk, nil
		}}
	done := make(chan error, 1)
	go func() { done <- Run(o) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("live ended before capturing: %v\n%s", err, stderr.String())
	}
	rp.burst(t)
	var err error
	select {
	case err = <-done:
	case <-time.After(90 * time.Second):
		t.Fatal("live did not stop")
	}
	var ee *exit.Error
	if !errors.As(err, &ee) || ee.Code != exit.CodeUsage || !strings.Contains(err.Error(), "disk is full") {
		t.Fatalf("live on a full disk: %v, want exit status 2 saying the disk is full\n%s", err, stderr.String())
	}
	if ctx.Err() != nil {
		t.Fatal("the full disk did not stop the capture")
	}
	errText := stderr.String()
	passed, dropped, captured, _ := kernelCounts(t, errText)
	m := notWritten.FindStringSubmatch(errText)
	if m == nil {
		t.Fatalf("the summary does not say how many packets were not written:\n%s", errText)
	}
	unwritten, _ := strconv.Atoi(m[1])
	t.Logf("kernel passed %d, dropped %d; captured %d, %d not written", passed, dropped, captured, unwritten)
	if captured != passed || dropped != 0 || strings.Contains(errText, "LOST") {
		t.Errorf("captured %d of the %d passed:\n%s", captured, passed, errText)
	}
	if unwritten <= 0 || unwritten >= captured {
		t.Errorf("%d of %d not written", unwritten, captured)
	}
	// The file kept holds exactly the others, whole, and names them.
	if !strings.Contains(errText, "the file being written is kept as "+disk.name) || !strings.Contains(err.Error(), disk.name) {
		t.Errorf("the kept file %s is not named:\n%v\n%s", disk.name, err, errText)
	}
	rd, rerr := capture.NewReader(bytes.NewReader(disk.buf.Bytes()))
	if rerr != nil {
		t.Fatal(rerr)
	}
	inFile := 0
	for {
		p, err := rd.Next()
		if err != nil {
			break
		}
		if sent := rp.packets[inFile]; !bytes.Equal(p.Payload, sent.payload) {
			t.Fatalf("kept frame %d is not datagram %d", inFile+1, inFile+1)
		}
		inFile++
	}
	if inFile != captured-unwritten {
		t.Errorf("the kept file holds %d frames; %d captured, %d said not written", inFile, captured, unwritten)
	}
	wantCounts := opcodeCounts(t, decodeLines(t, rp.prefixFile(t, captured), []netip.AddrPort{rp.Server}))
	if got := opcodeCounts(t, splitLines(stdout.String())); !maps.Equal(got, wantCounts) {
		t.Errorf("live decoded %v,\nthe first %d datagrams hold %v", got, captured, wantCounts)
	}
}
