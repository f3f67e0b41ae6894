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

	h, err := Open("lo", Options{Filter: pcapfilter.UDPPort(port)})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if h.LinkType() != capture.Ethernet || !h.Loopback() {
		t.Fatalf("link %v loopback %v", h.LinkType(), h.Loopback())
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
	h, err := Open("lo", Options{Filter: pcapfilter.UDPPort(9)}) // discard port: nothing comes
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
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %v to stop", d)
	}
	if ticks < 1 {
		t.Error("Tick never called while idle")
	}
}
