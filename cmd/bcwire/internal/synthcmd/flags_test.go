package synthcmd

import (
	"testing"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/flagtest"
)

func TestFlags(t *testing.T) {
	var got *Options
	parse := func(args ...string) error {
		return flagtest.ParseOnly(NewCmdSynth(nil, func(o *Options) error { got = o; return nil }), args...)
	}
	if err := parse("-w", "x.pcapng", "--players", "3", "--server-addr", "10.0.0.9:22101", "-q"); err != nil {
		t.Fatal(err)
	}
	if got.Write != "x.pcapng" || got.Players != 3 || got.Server != "10.0.0.9:22101" || !got.Quiet || got.Format != "" {
		t.Errorf("options %+v", got)
	}
	for _, args := range [][]string{{"-o", "x.pcap"}, {"--server", "10.0.0.1:1"}, {"extra"}} {
		if err := parse(args...); err == nil {
			t.Errorf("%v: accepted", args)
		}
	}
}
