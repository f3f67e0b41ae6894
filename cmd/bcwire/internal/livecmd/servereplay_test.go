package livecmd

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/server/replay"
)

// replayGuard bounds a test that replays a capture on lo against serve
// --replay and captures it: a safety net, never what ends a passing test
// (-c, the replay's end or a cancel does). It was 30 s; battle's asap
// replay beside other test binaries on both cores takes a good part of that.
const replayGuard = 2 * time.Minute

// serveVerify replays a capture the way the issue asks: `serve --replay`
// stands in for the captured server on a loopback port and `verify`
// (exact mode) plays the captured clients against it. Every captured
// datagram crosses lo once: the clients' from verify's sockets, the
// server's from serve's.
type serveVerify struct {
	Server    netip.AddrPort // where serve --replay listens
	Datagrams int            // UDP datagrams in the capture
	path      string
	done      chan error
	cancel    context.CancelFunc
}

// startServeVerify starts `serve --replay path` on 127.0.0.1 and counts
// the datagrams the replay will put on the wire.
func startServeVerify(t *testing.T, path string) *serveVerify {
	t.Helper()
	sv := &serveVerify{path: path, done: make(chan error, 1)}
	rd, err := capture.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, err := rd.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		sv.Datagrams++
	}
	rd.Close()

	c, err := replay.Load(path, replay.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pc, err := net.ListenPacket("udp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sv.Server = pc.LocalAddr().(*net.UDPAddr).AddrPort()
	srv := replay.NewServer(c, replay.ServerOptions{Timing: replay.TimingASAP})
	ctx, cancel := context.WithTimeout(context.Background(), replayGuard)
	sv.cancel = cancel
	go func() {
		defer pc.Close()
		// As --exit-when-done: stop once every captured session is played.
		go func() {
			for ctx.Err() == nil && !srv.AllDone() {
				time.Sleep(20 * time.Millisecond)
			}
			cancel()
		}()
		sv.done <- srv.Serve(ctx, pc)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-sv.done:
		case <-time.After(5 * time.Second):
			t.Error("serve --replay did not stop within 5s")
		}
	})
	return sv
}

// Send runs `verify --mode exact --timing asap` against the server and
// fails unless every captured answer came back identical; then it waits
// for serve to finish (--exit-when-done) so every datagram has been sent.
// The answer timeout is long because every answer comes (a complete
// window ends the wait at once): at 1 s, beside two busy loops, one late
// answer was counted missing, then unexpected, and the test failed.
func (sv *serveVerify) Send(ctx context.Context) error {
	c, err := replay.Load(sv.path, replay.LoadOptions{})
	if err != nil {
		return err
	}
	res, err := replay.Verify(ctx, c, replay.VerifyOptions{Target: sv.Server, Mode: replay.ModeExact, Timing: replay.TimingASAP,
		AnswerTimeout: 10 * time.Second, GiveUp: 5,
		Listen: func() (net.PacketConn, error) { return net.ListenPacket("udp4", "127.0.0.1:0") }})
	if err == nil && !res.Summary.OK {
		err = fmt.Errorf("answers differ: %+v", res.Summary)
	}
	if err != nil {
		return &replayError{what: "verify", err: err}
	}
	select {
	case err := <-sv.done:
		sv.done <- err // for the cleanup
		if err != nil {
			return &replayError{what: "serve --replay", err: err}
		}
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

type replayError struct {
	what, out string
	err       error
}

func (e *replayError) Error() string { return e.what + ": " + e.err.Error() + "\n" + e.out }
