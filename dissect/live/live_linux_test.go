//go:build linux

package live

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/pcapfilter"
	"golang.org/x/sys/unix"
)

func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("live capture needs root (CAP_NET_RAW); CI runs this test as root")
	}
}

func TestOpenNoSuchInterface(t *testing.T) {
	_, err := Open("bcwire-nope0", Options{})
	if !errors.Is(err, ErrNoInterface) {
		t.Fatalf("err = %v, want ErrNoInterface", err)
	}
	if !strings.Contains(err.Error(), "no such interface bcwire-nope0 (available: ") || !strings.Contains(err.Error(), "lo") {
		t.Errorf("message %q does not list the available interfaces", err)
	}
}

// TestOpenDownInterface opens the loopback device of a fresh network
// namespace, which starts down. The namespace lives only on a locked
// thread that is thrown away afterwards.
func TestOpenDownInterface(t *testing.T) {
	needRoot(t)
	res := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with the goroutine
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			res <- fmt.Errorf("unshare: %w", err)
			return
		}
		h, err := Open("lo", Options{})
		if err == nil {
			h.Close()
		}
		res <- err
	}()
	select {
	case err := <-res:
		if err != nil && strings.HasPrefix(err.Error(), "unshare") {
			t.Skipf("cannot make a network namespace here: %v", err)
		}
		if !errors.Is(err, ErrInterfaceDown) {
			t.Fatalf("err = %v, want ErrInterfaceDown", err)
		}
		if !strings.Contains(err.Error(), "interface lo is down") {
			t.Errorf("message %q", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no answer from the namespace goroutine")
	}
}

// TestLoopbackOnce sends datagrams over lo and checks that each is read
// exactly once (not also as its outgoing copy) and that the kernel filter
// keeps out the datagrams of other ports.
func TestLoopbackOnce(t *testing.T) {
	needRoot(t)
	for _, noRing := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoRing=%v", noRing), func(t *testing.T) { loopbackOnce(t, noRing) })
	}
}

func loopbackOnce(t *testing.T, noRing bool) {
	rx, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	other, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	tx, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	port := uint16(rx.LocalAddr().(*net.UDPAddr).Port)

	h, err := Open("lo", Options{Filter: pcapfilter.UDPPort(port), NoRing: noRing})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if h.LinkType() != capture.Ethernet || !h.Loopback() {
		t.Fatalf("link %v loopback %v", h.LinkType(), h.Loopback())
	}
	if h.Ring() == noRing {
		t.Fatalf("Ring() = %v with NoRing %v (this kernel has TPACKET_V3)", h.Ring(), noRing)
	}
	const n = 20
	for i := 0; i < n; i++ {
		if _, err := tx.WriteToUDP([]byte(fmt.Sprintf("keep %d", i)), rx.LocalAddr().(*net.UDPAddr)); err != nil {
			t.Fatal(err)
		}
		if _, err := tx.WriteToUDP([]byte("filtered"), other.LocalAddr().(*net.UDPAddr)); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	src := &Source{H: h, Ctx: ctx}
	var got []string
	for len(got) < n+1 {
		p, err := src.Next()
		if err != nil {
			break
		}
		got = append(got, string(p.Payload))
		if len(got) == n {
			// Anything more (a duplicate) would arrive right away.
			ctx2, cancel2 := context.WithTimeout(context.Background(), 300*time.Millisecond)
			src.Ctx = ctx2
			defer cancel2()
		}
	}
	if len(got) != n {
		t.Fatalf("read %d datagrams, want %d: %q", len(got), n, got)
	}
	for i, s := range got {
		if want := fmt.Sprintf("keep %d", i); s != want {
			t.Errorf("datagram %d = %q, want %q", i, s, want)
		}
	}
	st, err := h.Stats()
	if err != nil {
		t.Fatal(err)
	}
	if st.Packets < n || st.Drops != 0 {
		t.Errorf("kernel stats %+v", st)
	}
	if src.Frames() != n {
		t.Errorf("frames %d, want %d", src.Frames(), n)
	}
}

// TestCancelWhileIdle checks that a capture with no traffic stops promptly
// when its context ends.
func TestCancelWhileIdle(t *testing.T) {
	needRoot(t)
	for _, noRing := range []bool{false, true} {
		t.Run(fmt.Sprintf("NoRing=%v", noRing), func(t *testing.T) { cancelWhileIdle(t, noRing) })
	}
}

func cancelWhileIdle(t *testing.T, noRing bool) {
	h, err := Open("lo", Options{Filter: pcapfilter.UDPPort(9), NoRing: noRing}) // discard port: nothing comes
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
	defer cancel()
	ticks := 0
	src := &Source{H: h, Ctx: ctx, Tick: func(time.Time) { ticks++ }}
	start := time.Now()
	p, err := src.Next()
	if p != nil || err == nil || err.Error() != "EOF" {
		t.Fatalf("Next = %v, %v; want io.EOF", p, err)
	}
	if d := time.Since(start); d > 10*time.Second { // a hang, not a loaded machine
		t.Errorf("took %v to stop", d)
	}
	if ticks < 1 {
		t.Error("Tick never called while idle")
	}
}

// TestRingWraps sends numbered datagrams through a ring of two blocks, more
// than twice its size in all, reading as it goes: every datagram comes out
// once, in order, whole, as the blocks go round.
func TestRingWraps(t *testing.T) {
	needRoot(t)
	rx, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	tx, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	h, err := Open("lo", Options{Filter: pcapfilter.UDPPort(uint16(rx.LocalAddr().(*net.UDPAddr).Port)), BufferSize: 2 * ringBlockSize})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if !h.Ring() || h.ring.blocks != 2 {
		t.Fatalf("want a ring of 2 blocks, have %v", h.ring)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	src := &Source{H: h, Ctx: ctx}
	const chunk, chunks, size = 300, 16, 1200 // 16 x ~380 kB: ~3 times round the 2 MiB ring
	payload := make([]byte, size)
	next := 0
	for c := range chunks {
		for i := range chunk {
			seq := c*chunk + i
			for j := range payload {
				payload[j] = byte(seq + j)
			}
			payload[0], payload[1] = byte(seq>>8), byte(seq)
			if _, err := tx.WriteToUDP(payload, rx.LocalAddr().(*net.UDPAddr)); err != nil {
				t.Fatal(err)
			}
		}
		for next < (c+1)*chunk {
			p, err := src.Next()
			if err != nil {
				t.Fatalf("after %d datagrams: %v", next, err)
			}
			if len(p.Payload) != size || int(p.Payload[0])<<8|int(p.Payload[1]) != next || p.Payload[size-1] != byte(next+size-1) {
				t.Fatalf("datagram %d: %d bytes starting % X", next, len(p.Payload), p.Payload[:2])
			}
			next++
		}
	}
	if st, err := h.Stats(); err != nil || st.Drops != 0 {
		t.Errorf("kernel stats %+v, %v", st, err)
	}
}
