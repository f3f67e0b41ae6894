package diffcmd

import (
	"testing"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/flagtest"
)

func TestFlags(t *testing.T) {
	var got *Options
	parse := func(args ...string) error {
		return flagtest.ParseOnly(NewCmdDiff(nil, func(o *Options) error { got = o; return nil }), args...)
	}
	if err := parse("--json", "-o", "d.html", "--force", "--show", "major", "--latency", "250ms", "a.pcap", "b.pcap"); err != nil {
		t.Fatal(err)
	}
	if !got.JSON || got.Output != "d.html" || !got.Force || got.Show != "major" || got.Latency != 250*time.Millisecond ||
		!got.LatencySet || got.RateRatioSet || got.Ours != "a.pcap" || got.Stock != "b.pcap" {
		t.Errorf("options %+v", got)
	}
	for _, args := range [][]string{{"a.pcap"}, {"--html", "x.html", "a.pcap", "b.pcap"}} {
		if err := parse(args...); err == nil {
			t.Errorf("%v: accepted", args)
		}
	}
}
