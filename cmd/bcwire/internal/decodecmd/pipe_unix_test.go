//go:build unix

package decodecmd

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
)

// lineSignal is an output that tells of every write.
type lineSignal chan string

func (l lineSignal) Write(p []byte) (int, error) {
	l <- string(p)
	return len(p), nil
}

// A capture piped in is decoded as it arrives (issue 33): the writer sends
// the header and one packet, and waits for that packet's line before it
// sends the rest. Buffered output would hold the line until the end of the
// input, which never comes: the wait would run out.
func TestPipeDecodedAsItArrives(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "testdata", "pcaps", "join.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	first := 24 + 16 + int(binary.LittleEndian.Uint32(data[24+8:]))
	fifo := filepath.Join(t.TempDir(), "capture")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skip("no FIFO:", err)
	}
	out := make(lineSignal, 1000)
	done := make(chan error, 1)
	go func() {
		done <- Run(&Options{IO: &iostreams.IOStreams{Out: out, Err: &strings.Builder{}}, Files: []string{fifo}, Peer: -1})
	}()
	w, err := os.OpenFile(fifo, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(data[:first]); err != nil {
		t.Fatal(err)
	}
	select {
	case line := <-out:
		if !strings.Contains(line, "gamespy query") {
			t.Errorf("first line %q", line)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no line for the first packet while the pipe stays open")
	}
	w.Write(data[first:])
	w.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// -l flushes after each packet, as tshark's -l, even for a regular file;
// without it the output goes out in large writes.
func TestLineBuffered(t *testing.T) {
	join := filepath.Join("..", "..", "..", "..", "testdata", "pcaps", "join.pcap")
	writes := func(l bool) int {
		out := make(lineSignal, 10000)
		if err := Run(&Options{IO: &iostreams.IOStreams{Out: out, Err: &strings.Builder{}}, Files: []string{join}, Peer: -1, Count: 20, LineBuffered: l}); err != nil {
			t.Fatal(err)
		}
		return len(out)
	}
	if n, m := writes(true), writes(false); n < 20 || m != 1 {
		t.Errorf("%d writes with -l (want one a packet, 20), %d without (want 1)", n, m)
	}
}
