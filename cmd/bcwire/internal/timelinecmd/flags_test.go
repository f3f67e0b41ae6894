package timelinecmd

import (
	"testing"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/flagtest"
)

func TestFlags(t *testing.T) {
	var got *Options
	cmd := NewCmdTimeline(nil, func(o *Options) error { got = o; return nil })
	if err := flagtest.ParseOnly(cmd, "--json", "-q", "--idle-timeout", "30s", "--server", "10.0.0.1:22101", "a.pcap"); err != nil {
		t.Fatal(err)
	}
	if !got.JSON || !got.Quiet || got.Timeout != 30*time.Second || len(got.Servers) != 1 || len(got.Files) != 1 {
		t.Errorf("options %+v", got)
	}
	// --timeout meant a different wait in verify: it is gone from both.
	if err := flagtest.ParseOnly(NewCmdTimeline(nil, func(*Options) error { return nil }), "--timeout", "3s", "a.pcap"); err == nil {
		t.Error("--timeout accepted")
	}
}
