package livecmd

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/dissect/capture"
)

// udpFrame is an Ethernet/IPv4/UDP frame whose payload starts with seq,
// padded to size bytes of payload.
func udpFrame(seq uint32, size int) []byte {
	payload := make([]byte, max(size, 4))
	binary.BigEndian.PutUint32(payload, seq)
	f := make([]byte, 0, 42+len(payload))
	f = append(f, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0x08, 0x00) // Ethernet, IPv4
	ip := []byte{0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 17, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2}
	binary.BigEndian.PutUint16(ip[2:], uint16(20+8+len(payload)))
	var sum uint32
	for i := 0; i < 20; i += 2 {
		sum += uint32(binary.BigEndian.Uint16(ip[i:]))
	}
	for sum > 0xffff {
		sum = sum&0xffff + sum>>16
	}
	binary.BigEndian.PutUint16(ip[10:], ^uint16(sum))
	f = append(f, ip...)
	udp := []byte{0x56, 0x55, 0x56, 0x56, 0, 0, 0, 0} // 22101 -> 22102, no checksum
	binary.BigEndian.PutUint16(udp[4:], uint16(8+len(payload)))
	return append(append(f, udp...), payload...)
}

// readSeqs reads the sequence numbers of every packet of the files, in order.
func readSeqs(t *testing.T, files []string) (seqs []uint32, perFile []int) {
	t.Helper()
	for _, name := range files {
		rd, err := capture.Open(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		n := 0
		for {
			p, err := rd.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: packet %d: %v", name, n+1, err)
			}
			seqs = append(seqs, binary.BigEndian.Uint32(p.Payload))
			n++
		}
		rd.Close()
		perFile = append(perFile, n)
	}
	return seqs, perFile
}

var ringName = regexp.MustCompile(`^ring_(\d{5})_(\d{14})\.pcapng$`)

// ringFiles lists the completed ring files in dir in counter order, and
// fails on any temporary file left behind.
func ringFiles(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if !ringName.MatchString(e.Name()) {
			t.Errorf("unexpected file %s", e.Name())
			continue
		}
		out = append(out, filepath.Join(dir, e.Name()))
	}
	slices.Sort(out) // the counter is zero-padded: name order is counter order
	return out
}

// TestRingKeepsEveryFrame writes a known stream of 5000 frames of varied
// sizes through many file switches, on size and on duration, and reads it
// back: every frame exactly once, in order; no file past the size; the
// names in dumpcap's form with consecutive counters.
func TestRingKeepsEveryFrame(t *testing.T) {
	for _, tc := range []struct {
		name string
		ring []string
	}{
		{"filesize", []string{"filesize:20"}},
		{"duration", []string{"duration:2"}},
		{"both", []string{"filesize:50", "duration:3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ring, err := parseRing(tc.ring)
			if err != nil {
				t.Fatal(err)
			}
			var switched []string
			rw := &ringWriter{path: filepath.Join(dir, "ring.pcapng"), ring: ring, link: capture.Ethernet, iface: "lo",
				create: createAtomic, onSwitch: func(name string, _ int) { switched = append(switched, name) }}
			t0 := time.Date(2026, 11, 25, 18, 30, 0, 0, time.Local)
			if err := rw.Start(t0); err != nil {
				t.Fatal(err)
			}
			const n = 5000
			for i := range n {
				now := t0.Add(time.Duration(i) * 10 * time.Millisecond) // 50 s in all
				if err := rw.WriteFrame(now, now, udpFrame(uint32(i), 20+i%700)); err != nil {
					t.Fatal(err)
				}
				if i%100 == 99 {
					if err := rw.Tick(now); err != nil {
						t.Fatal(err)
					}
				}
			}
			if err := rw.Close(); err != nil {
				t.Fatal(err)
			}
			files := ringFiles(t, dir)
			if len(files) < 10 {
				t.Fatalf("%d files: the stream should span many switches", len(files))
			}
			if !slices.Equal(files, switched) {
				t.Errorf("files on disk %v, switches reported %v", files, switched)
			}
			for i, f := range files {
				m := ringName.FindStringSubmatch(filepath.Base(f))
				if m[1] != fmt.Sprintf("%05d", i+1) {
					t.Errorf("file %d is %s: counters must run 00001, 00002, ...", i+1, f)
				}
				if i == 0 && m[2] != "20261125183000" {
					t.Errorf("first file %s: want the start time 20261125183000", f)
				}
				if st, _ := os.Stat(f); ring.FileSize > 0 && st.Size() > ring.FileSize {
					t.Errorf("%s: %d bytes, over filesize %d", f, st.Size(), ring.FileSize)
				}
			}
			seqs, perFile := readSeqs(t, files)
			if len(seqs) != n {
				t.Fatalf("read back %d frames, wrote %d", len(seqs), n)
			}
			for i, s := range seqs {
				if s != uint32(i) {
					t.Fatalf("frame %d has sequence %d: lost or duplicated at a switch", i, s)
				}
			}
			t.Logf("%d files, packets per file %v", len(files), perFile[:min(len(perFile), 8)])
		})
	}
}

// TestRingKeepsLastFiles checks files:N removes the oldest files.
func TestRingKeepsLastFiles(t *testing.T) {
	dir := t.TempDir()
	ring, err := parseRing([]string{"filesize:10", "files:3"})
	if err != nil {
		t.Fatal(err)
	}
	rw := &ringWriter{path: filepath.Join(dir, "ring.pcapng"), ring: ring, link: capture.Ethernet, create: createAtomic}
	t0 := time.Now()
	const n = 1000
	for i := range n {
		if err := rw.WriteFrame(t0, t0, udpFrame(uint32(i), 200)); err != nil {
			t.Fatal(err)
		}
	}
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
	files := ringFiles(t, dir)
	if len(files) != 3 {
		t.Fatalf("%d files kept, want 3: %v", len(files), files)
	}
	seqs, _ := readSeqs(t, files)
	if len(seqs) == 0 || seqs[len(seqs)-1] != n-1 {
		t.Fatalf("the last files should end with the last frame %d", n-1)
	}
	for i := 1; i < len(seqs); i++ {
		if seqs[i] != seqs[i-1]+1 {
			t.Fatalf("gap in the kept files at %d", seqs[i])
		}
	}
	if m := ringName.FindStringSubmatch(filepath.Base(files[0])); m[1] == "00001" {
		t.Errorf("the oldest file %s should have been removed", files[0])
	}
}

// fullDisk is a capture file on a disk that fills up: writes fail with
// ENOSPC once budget bytes were written over all files.
type fullDisk struct {
	budget *int
	name   string
	buf    bytes.Buffer
}

func (f *fullDisk) Write(p []byte) (int, error) {
	if *f.budget < len(p) {
		return 0, &os.PathError{Op: "write", Path: f.name, Err: syscall.ENOSPC}
	}
	*f.budget -= len(p)
	return f.buf.Write(p)
}
func (f *fullDisk) Commit() error { return nil }
func (f *fullDisk) Abort()        {}
func (f *fullDisk) Keep()         {}
func (f *fullDisk) Name() string  { return f.name }

// TestRingFullDisk checks that a full disk is an error that says so, with
// no panic, from the writer and from a whole live capture.
func TestRingFullDisk(t *testing.T) {
	budget := 30000
	create := func(path string) (captureFile, error) { return &fullDisk{budget: &budget, name: path}, nil }
	ring, _ := parseRing([]string{"filesize:8"})
	rw := &ringWriter{path: "/nowhere/ring.pcapng", ring: ring, link: capture.Ethernet, create: create}
	var err error
	i := 0
	for ; i < 10000 && err == nil; i++ {
		now := time.Now()
		err = rw.WriteFrame(now, now, udpFrame(uint32(i), 300))
	}
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("after %d frames: %v, want ENOSPC", i, err)
	}
	if err2 := rw.WriteFrame(time.Now(), time.Now(), udpFrame(0, 10)); !errors.Is(err2, syscall.ENOSPC) {
		t.Errorf("a write after the failure: %v, want the same error", err2)
	}
	if msg := explainWriteError(err).Error(); !strings.Contains(msg, "disk is full") {
		t.Errorf("message %q does not say the disk is full", msg)
	}
	if len(rw.Files()) < 2 {
		t.Errorf("%d files completed before the disk filled", len(rw.Files()))
	}

	// A whole capture: live ends with exit status 2 and says why.
	needRoot(t)
	path := filepath.Join("..", "..", "..", "..", "testdata", "pcaps", "battle.pcap")
	rp := startServeVerify(t, path)
	budget = 20000
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), replayGuard)
	defer cancel()
	ready := make(chan struct{})
	o := &Options{IO: &iostreams.IOStreams{Out: &stdout, Err: &stderr}, Iface: "lo", Port: int(rp.Server.Port()),
		StatsOnly: true, Write: filepath.Join(t.TempDir(), "ring.pcapng"), Ring: []string{"filesize:5"},
		Snaplen: 262144, Ctx: ctx, Ready: func() { close(ready) }, create: create}
	done := make(chan error, 1)
	go func() { done <- Run(o) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("live ended before capturing: %v\n%s", err, stderr.String())
	}
	go rp.Send(ctx)
	select {
	case err = <-done:
	case <-ctx.Done():
		t.Fatal("a full disk did not end the capture")
	}
	var ee *exit.Error
	if !errors.As(err, &ee) || ee.Code != exit.CodeUsage || !strings.Contains(err.Error(), "disk is full") {
		t.Fatalf("live on a full disk: %v, want exit status 2 saying the disk is full", err)
	}
	if !strings.Contains(stderr.String(), "complete,") {
		t.Errorf("no completed file reported before the disk filled:\n%s", stderr.String())
	}
	t.Logf("live: %v", err)
}

// TestLiveRingCountsEqual captures the replayed battle on lo with -w and
// -b filesize:50: the files together hold every datagram of the capture
// exactly once.
func TestLiveRingCountsEqual(t *testing.T) {
	needRoot(t)
	path := filepath.Join("..", "..", "..", "..", "testdata", "pcaps", "battle.pcap")
	rp := startServeVerify(t, path)
	dir := t.TempDir()
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), replayGuard)
	defer cancel()
	ready := make(chan struct{})
	o := &Options{IO: &iostreams.IOStreams{Out: &stdout, Err: &stderr}, Iface: "lo", Port: int(rp.Server.Port()),
		StatsOnly: true, Write: filepath.Join(dir, "ring.pcapng"), Ring: []string{"filesize:50"},
		Count: rp.Datagrams, Snaplen: 262144, Ctx: ctx, Ready: func() { close(ready) }}
	done := make(chan error, 1)
	go func() { done <- Run(o) }()
	select {
	case <-ready:
	case err := <-done:
		t.Fatalf("live ended before capturing: %v\n%s", err, stderr.String())
	}
	if err := rp.Send(ctx); err != nil {
		cancel()
		<-done
		t.Fatal(err)
	}
	if err := <-done; err != nil || ctx.Err() != nil {
		t.Fatalf("live: %v (timeout: %v)\n%s", err, ctx.Err(), stderr.String())
	}
	files := ringFiles(t, dir)
	if len(files) < 10 {
		t.Fatalf("%d files, want many switches", len(files))
	}
	// Every datagram once: as many as live captured (-c), none twice (a
	// duplicate would repeat its kernel timestamp and bytes), in capture
	// order across the switches. (serve --replay rewrites the addresses in
	// some payloads, so the bytes are not compared with the capture's.)
	seen := map[string]bool{}
	var last time.Time
	total := 0
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
			total++
			k := p.Time.String() + string(p.Payload)
			if seen[k] {
				t.Errorf("%s: datagram at %s written twice", f, p.Time)
			}
			seen[k] = true
			// The kernel stamps each frame on the CPU that sends it, so two
			// senders' frames can sit in the ring a fraction of a
			// microsecond out of time order (0.4 us seen on a busy
			// machine); files or blocks written out of order would be
			// whole milliseconds off.
			if p.Time.Before(last.Add(-time.Millisecond)) {
				t.Errorf("%s: datagram at %s after one at %s", f, p.Time, last)
			}
			if p.Time.After(last) {
				last = p.Time
			}
		}
		rd.Close()
	}
	if total != rp.Datagrams {
		t.Fatalf("%d files hold %d datagrams, %d were captured", len(files), total, rp.Datagrams)
	}
	t.Logf("%d datagrams in %d files", total, len(files))
}
