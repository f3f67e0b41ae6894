package reportcmd

import (
	"testing"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/flagtest"
)

func TestFlags(t *testing.T) {
	var got *Options
	parse := func(args ...string) error {
		return flagtest.ParseOnly(NewCmdReport(nil, func(o *Options) error { got = o; return nil }), args...)
	}
	if err := parse("a.pcap"); err != nil || got.Output != "report.html" || got.Force || got.Timeout != 45*time.Second {
		t.Errorf("defaults: %v %+v", err, got)
	}
	if err := parse("-o", "x.html", "--force", "--title", "T", "--idle-timeout", "1m", "-q", "a.pcap", "b.pcap"); err != nil {
		t.Fatal(err)
	}
	if got.Output != "x.html" || !got.Force || got.Title != "T" || got.Timeout != time.Minute || !got.Quiet || len(got.Files) != 2 {
		t.Errorf("options %+v", got)
	}
}
