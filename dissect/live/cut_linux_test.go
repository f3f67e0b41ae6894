//go:build linux

package live

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/pcapfilter"
)

// burst sends n numbered datagrams (a 4-byte sequence number first) from
// tx to rx as fast as the socket takes them, starting at first.
func burst(t *testing.T, tx, rx *net.UDPConn, first, n int) {
	t.Helper()
	payload := make([]byte, 64)
	for i := first; i < first+n; i++ {
		binary.BigEndian.PutUint32(payload, uint32(i))
		if _, err := tx.WriteToUDP(payload, rx.LocalAddr().(*net.UDPAddr)); err != nil {
			t.Fatal(err)
		}
	}
}

func loopbackPair(t *testing.T) (tx, rx *net.UDPConn) {
	t.Helper()
	var conns [2]*net.UDPConn
	for i := range conns {
		c, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		conns[i] = c
	}
	return conns[0], conns[1]
}

// TestCutReadsEveryPassedFrame sends a burst of thousands of datagrams and
// cuts the capture at once, before reading anything: the frames are still
// in the ring block the kernel is filling (or on the socket's queue), and
// every one the kernel counted must come out, in order, and nothing else.
// Then the same after reading part of the burst, with more sent after the
// cut (which must not come out).
func TestCutReadsEveryPassedFrame(t *testing.T) {
	needRoot(t)
	for _, noRing := range []bool{false, true} {
		for _, readFirst := range []int{0, 1000} {
			t.Run(fmt.Sprintf("NoRing=%v/readFirst=%d", noRing, readFirst), func(t *testing.T) {
				cutReadsEveryPassedFrame(t, noRing, readFirst)
			})
		}
	}
}

func cutReadsEveryPassedFrame(t *testing.T, noRing bool, readFirst int) {
	const n = 5000
	tx, rx := loopbackPair(t)
	h, err := Open("lo", Options{Filter: pcapfilter.UDPPort(uint16(rx.LocalAddr().(*net.UDPAddr).Port)), NoRing: noRing})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	burst(t, tx, rx, 0, n)
	dec := capture.NewDecoder(capture.Options{})
	next := 0
	read := func(ctx context.Context) bool {
		frame, ci, err := h.ReadFrame(ctx)
		if err == io.EOF {
			return false
		}
		if err != nil {
			t.Fatalf("after %d frames: %v", next, err)
		}
		p, err := dec.Decode(h.LinkType(), frame, ci)
		if err != nil || p == nil {
			t.Fatalf("frame %d: %v, %v", next, p, err)
		}
		if seq := int(binary.BigEndian.Uint32(p.Payload)); seq != next {
			t.Fatalf("frame %d carries datagram %d", next, seq)
		}
		next++
		return true
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for next < readFirst {
		read(ctx)
	}
	start := time.Now()
	st, err := h.Cut()
	if err != nil {
		t.Fatal(err)
	}
	burst(t, tx, rx, n, 100) // after the cut: not counted, never read
	for read(ctx) {
	}
	took := time.Since(start)
	t.Logf("kernel passed %d of %d (dropped %d); read %d after the cut in %v", st.Packets, n, st.Drops, next-readFirst, took.Round(time.Millisecond))
	if st.Drops != 0 {
		t.Errorf("kernel dropped %d", st.Drops)
	}
	if uint64(next) != st.Packets-st.Drops || h.Unread() != 0 {
		t.Errorf("read %d frames, the kernel passed %d (%d unread)", next, st.Packets-st.Drops, h.Unread())
	}
	if next <= readFirst {
		t.Errorf("nothing was left to read after the cut: the test did not test the drain")
	}
	if again, err := h.Stats(); err != nil || again != st {
		t.Errorf("Stats after the cut = %+v, %v; want the cut's %+v", again, err, st)
	}
	if _, _, err := h.ReadFrame(ctx); err != io.EOF {
		t.Errorf("ReadFrame after the drain: %v, want io.EOF", err)
	}
}
