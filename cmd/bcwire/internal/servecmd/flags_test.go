package servecmd

import (
	"testing"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/flagtest"
)

func TestFlags(t *testing.T) {
	var got *Options
	parse := func(args ...string) error {
		got = nil
		return flagtest.ParseOnly(NewCmdServe(nil, func(o *Options) error { got = o; return nil }), args...)
	}
	if err := parse("--replay", "c.pcap", "--json", "-o", "s.json", "--listen", "127.0.0.1", "--port", "24301", "-q", "--exit-when-done"); err != nil {
		t.Fatal(err)
	}
	if got.Replay != "c.pcap" || !got.JSON || got.Output != "s.json" || got.Listen != "127.0.0.1:24301" || !got.Quiet || !got.ExitOnDone {
		t.Errorf("replay options %+v", got)
	}
	if err := parse("-w", "n.pcapng", "--name", "x"); err != nil {
		t.Fatal(err)
	}
	if got.Native == nil || got.Native.Write != "n.pcapng" || got.Native.Name != "x" {
		t.Errorf("native options %+v", got.Native)
	}
	if err := parse("--master", "m1:27900", "--master", "127.0.0.1:27901", "--accept-legacy-framing"); err != nil {
		t.Fatal(err)
	}
	if n := got.Native; n == nil || len(n.Masters) != 2 || n.Masters[1] != "127.0.0.1:27901" || !n.AcceptLegacyFraming {
		t.Errorf("master and legacy-framing options %+v", got.Native)
	}
	if err := parse(); err != nil || got.Native.AcceptLegacyFraming || len(got.Native.Masters) != 0 {
		t.Errorf("defaults: no masters, legacy framing off: %+v %v", got.Native, err)
	}
	for _, args := range [][]string{
		{"--replay", "c.pcap", "--json", "c.pcap"}, // the old --json FILE
		{"-o", "s.json"},                       // a replay report without --replay
		{"--replay", "c.pcap", "-w", "x.pcap"}, // a native flag with --replay
	} {
		if err := parse(args...); err == nil || got != nil {
			t.Errorf("%v: accepted (%v)", args, err)
		}
	}
}
