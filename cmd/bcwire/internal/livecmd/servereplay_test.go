package livecmd

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/servecmd"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/verifycmd"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/report"
)

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
	out, errb bytes.Buffer
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

	ready := make(chan net.Addr, 1)
	o := &servecmd.Options{IO: &report.IO{Out: &sv.out, Err: &sv.errb}, Replay: path,
		Listen: "127.0.0.1:0", Timing: "asap", Quiet: true, ExitOnDone: true,
		Ready: func(a net.Addr) { ready <- a }}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	sv.cancel = cancel
	go func() { sv.done <- servecmd.RunReplay(ctx, o) }()
	t.Cleanup(func() {
		cancel()
		select {
		case <-sv.done:
		case <-time.After(5 * time.Second):
			t.Error("serve --replay did not stop within 5s")
		}
	})
	select {
	case a := <-ready:
		sv.Server = a.(*net.UDPAddr).AddrPort()
	case err := <-sv.done:
		t.Fatalf("serve --replay ended at once: %v\n%s", err, sv.errb.String())
	case <-time.After(5 * time.Second):
		t.Fatal("serve --replay did not listen within 5s")
	}
	return sv
}

// Send runs `verify --mode exact --timing asap` against the server and
// fails unless every captured answer came back identical; then it waits
// for serve to finish (--exit-when-done) so every datagram has been sent.
func (sv *serveVerify) Send(ctx context.Context) error {
	var out, errb bytes.Buffer
	err := verifycmd.Run(ctx, &verifycmd.Options{IO: &report.IO{Out: &out, Err: &errb}, File: sv.path,
		Target: sv.Server.String(), Mode: "exact", Timing: "asap", Timeout: time.Second, GiveUp: 5,
		Listen: func() (net.PacketConn, error) { return net.ListenPacket("udp4", "127.0.0.1:0") }})
	if err != nil {
		return &replayError{what: "verify", err: err, out: out.String() + errb.String()}
	}
	select {
	case err := <-sv.done:
		sv.done <- err // for the cleanup
		if err != nil {
			return &replayError{what: "serve --replay", err: err, out: sv.out.String() + sv.errb.String()}
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
