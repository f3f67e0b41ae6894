package livecmd

import (
	"testing"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/flagtest"
)

func TestFlags(t *testing.T) {
	var got *Options
	parse := func(args ...string) error {
		return flagtest.ParseOnly(NewCmdLive(nil, func(o *Options) error { got = o; return nil }), args...)
	}
	if err := parse("-i", "lo", "-c", "100", "-V", "--stats-only", "-q", "-w", "x.pcapng", "-f", "udp port 1", "--server", "10.0.0.1:22101"); err != nil {
		t.Fatal(err)
	}
	if got.Iface != "lo" || got.Count != 100 || !got.Verbose || !got.StatsOnly || !got.Quiet || got.Write != "x.pcapng" ||
		got.Filter != "udp port 1" || len(got.Servers) != 1 {
		t.Errorf("options %+v", got)
	}
}
