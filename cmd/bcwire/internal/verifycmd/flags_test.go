package verifycmd

import (
	"testing"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/flagtest"
)

func TestFlags(t *testing.T) {
	var got *Options
	parse := func(args ...string) error {
		return flagtest.ParseOnly(NewCmdVerify(nil, func(o *Options) error { got = o; return nil }), args...)
	}
	if err := parse("--target", "127.0.0.1:22101", "--json", "-o", "v.json", "--answer-timeout", "300ms",
		"--max-divergences", "9", "--all-steps", "--server", "10.0.0.1:22101", "c.pcap"); err != nil {
		t.Fatal(err)
	}
	if got.Target != "127.0.0.1:22101" || !got.JSON || got.Output != "v.json" || got.Timeout != 300*time.Millisecond ||
		got.MaxShown != 9 || !got.Verbose || got.Server != "10.0.0.1:22101" || got.File != "c.pcap" {
		t.Errorf("options %+v", got)
	}
	// The old forms are refused, not reinterpreted.
	for _, args := range [][]string{
		{"--target", "x:1", "--json", "out.json", "c.pcap"}, // two captures
		{"--target", "x:1", "--timeout", "1s", "c.pcap"},
		{"--target", "x:1", "--show", "3", "c.pcap"},
		{"--target", "x:1", "-v", "c.pcap"},
	} {
		if err := parse(args...); err == nil {
			t.Errorf("%v: accepted", args)
		}
	}
}
