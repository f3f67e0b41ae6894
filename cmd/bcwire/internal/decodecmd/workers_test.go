package decodecmd

import (
	"bytes"
	"encoding/hex"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/input"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/capture"
)

func run(t *testing.T, o *Options) (string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	o.IO = &iostreams.IOStreams{Out: &out, Err: &errb}
	o.Peer = -1
	code := 0
	if err := Run(o); err != nil {
		var ee *exit.Error
		if !errors.As(err, &ee) {
			t.Fatalf("error without an exit status: %v", err)
		}
		code = ee.Code
	}
	return out.String() + "\x00" + errb.String(), code
}

// decode --workers N, and decode with its default (two workers on two
// cores), print exactly what one worker prints, on every bundled capture
// and OpenBC's battle: text, -V, --json, and with what the formatting
// workers must carry over from the decoding goroutine (time deltas from
// the previous packet, -Y's ready-made JSON, -x's dumps, several files).
func TestDecodeWorkersSameOutput(t *testing.T) {
	files, err := filepath.Glob("../../../../testdata/pcaps/*.pcap*")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../../../../testdata/openbc/networked-battle.pcap")
	var caps []string
	for _, f := range files {
		if !strings.HasSuffix(f, ".golden") && !strings.HasSuffix(f, ".gz") {
			caps = append(caps, f)
		}
	}
	for _, o := range []Options{{}, {Verbose: true}, {JSON: true}, {Count: 777},
		{Read: input.ReadFlags{Time: "d", Filter: `name == "StateUpdate" or type_name == "ack"`}},
		{JSON: true, Read: input.ReadFlags{Filter: "fields.speed > 1 or frame % 7 == 0"}},
		{Verbose: true, Print: PrintFlags{Hex: true}, Count: 3000}} {
		o1 := o
		o1.Files = caps
		want, wcode := run(t, &o1)
		if len(want) < 1000 {
			t.Fatalf("too little output: %q", want)
		}
		for _, n := range []int{3, 2, DefaultWorkers()} {
			o2 := o
			o2.Files = caps
			o2.Caps.Workers = n
			got, gcode := run(t, &o2)
			if got != want || gcode != wcode {
				t.Errorf("%+v: --workers %d output differs from one worker (exit %d vs %d)", o, n, gcode, wcode)
			}
		}
	}
}

// oddStateUpdates are datagrams with StateUpdates that are non-stock, warn
// or fit no layout: a ship OpenBC creates, its subsystems in OpenBC's
// shield-generator-byte form (frames 30, 32 and 35 of OpenBC's
// self-destruct test, decrypted), then game messages alone in a data
// message: a StateUpdate ending at its speed, one shorter than its object
// id, weapons from the host, subsystems from a client.
var oddStateUpdates = []struct {
	fromServer  bool
	plain, game string
}{
	{false, "0201327480060003000208800000ffffff3f010000b042000084c2000092c2f54a6f3ffe8c963e84e34b3e38784e3c00000000000000054361647932064d756c746931ffff64ffffffffffffff64ffffffffffff64ffffffffffffffffff646001ffffff64ffffffffffffff6400ff64ffffff6401ff", ""},
	{true, "01013219001cffffff3f6110983e2000ffffff20ffffffffffff20", ""},
	{true, "01013217001cffffff3f6110183f2009ffffff20ffffffff20", ""},
	{false, "", "1CFFFFFF3F000020411E7F00007F0000007F50420054"},
	{false, "", "1CFFFFFF"},
	{true, "", "1CFFFFFF3F00002041800ACC0BCC"},
	{false, "", "1CFFFFFF3F000020412000FFFF"},
}

// writeOdd writes oddStateUpdates, each n times, as a capture in dir.
func writeOdd(t *testing.T, dir string, n int) string {
	var buf bytes.Buffer
	w, err := capture.NewWriter(&buf, capture.PCAP, capture.Ethernet)
	if err != nil {
		t.Fatal(err)
	}
	server, client := netip.MustParseAddrPort("127.0.0.1:29881"), netip.MustParseAddrPort("127.0.0.1:37187")
	now := time.Date(2026, 11, 26, 23, 0, 0, 0, time.UTC)
	for i := range n {
		for j, d := range oddStateUpdates {
			if i > 0 && j == 0 {
				continue // the ship is created once
			}
			var plain []byte
			if d.plain != "" {
				plain, err = hex.DecodeString(d.plain)
			} else {
				var p []byte
				p, err = hex.DecodeString(d.game)
				peer := byte(2)
				if d.fromServer {
					peer = 1
				}
				plain = (&dissect.Datagram{Peer: peer, Messages: []dissect.Message{{Type: dissect.TypeData, Payload: p}}}).Append(nil)
			}
			if err != nil {
				t.Fatal(err)
			}
			wire := make([]byte, len(plain))
			dissect.Encrypt(wire, plain)
			src, dst := client, server
			if d.fromServer {
				src, dst = server, client
			}
			now = now.Add(10 * time.Millisecond)
			if err := w.WriteUDP(now, src, dst, wire); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "odd.pcap")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// With workers, the formatting goroutines decode the StateUpdates: the
// summary's counts of non-stock messages and --fail-on's exit status come
// out as with one worker, also for the StateUpdates a filter leaves out.
func TestDecodeWorkersCountLazyStateUpdates(t *testing.T) {
	path := writeOdd(t, t.TempDir(), 300)
	for _, o := range []Options{{}, {JSON: true, FailOn: exit.FailOnNonStock}, {Verbose: true, Dir: "c2s", FailOn: exit.FailOnNonStock},
		{Dir: "s2c"}, {Servers: []string{"127.0.0.1:1"}, FailOn: exit.FailOnNonStock}} {
		o1 := o
		o1.Files = []string{path}
		want, wcode := run(t, &o1)
		if !strings.Contains(want, "non-stock messages") {
			t.Fatalf("%+v: no non-stock messages in %q", o, want[strings.IndexByte(want, 0):])
		}
		for _, n := range []int{2, 3} {
			o2 := o
			o2.Files = []string{path}
			o2.Caps.Workers = n
			got, gcode := run(t, &o2)
			if got != want || gcode != wcode {
				t.Errorf("%+v: --workers %d output differs from one worker (exit %d vs %d):\n%s\nwant\n%s", o, n, gcode, wcode,
					got[strings.IndexByte(got, 0):], want[strings.IndexByte(want, 0):])
			}
		}
	}
}
