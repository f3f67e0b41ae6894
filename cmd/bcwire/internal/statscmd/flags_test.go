package statscmd

import (
	"testing"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/flagtest"
)

func TestFlags(t *testing.T) {
	var got *Options
	cmd := NewCmdStats(nil, func(o *Options) error { got = o; return nil })
	if err := flagtest.ParseOnly(cmd, "--json", "-q", "--no-sessions", "--no-measures", "--server", "10.0.0.1:22101", "--workers", "2", "a.pcap"); err != nil {
		t.Fatal(err)
	}
	if !got.JSON || !got.Quiet || !got.NoSessions || !got.NoMeasures || len(got.Servers) != 1 || got.Caps.Workers != 2 || len(got.Files) != 1 {
		t.Errorf("options %+v", got)
	}
	if err := flagtest.ParseOnly(NewCmdStats(nil, func(*Options) error { return nil })); err == nil {
		t.Error("no files: accepted")
	}
}
