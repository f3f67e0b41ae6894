package exportcmd

import (
	"errors"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/flagtest"
	"github.com/bcwire/bcwire/dissect/flow"
)

func TestFlags(t *testing.T) {
	var got *Options
	parse := func(args ...string) error {
		got = nil
		return flagtest.ParseOnly(NewCmdExport(nil, func(o *Options) error { got = o; return nil }), args...)
	}
	if err := parse("-o", "fleet", "a.pcap"); err != nil {
		t.Fatal(err)
	}
	if got.Dir != "fleet" || got.Quiet || got.Count != 0 || got.FailOn != "" || len(got.Servers) != 0 ||
		got.Caps.Workers != 1 || got.Caps.Flows != flow.DefaultMaxFlows || strings.Join(got.Files, " ") != "a.pcap" {
		t.Errorf("defaults: %+v", got)
	}
	if err := parse("--output", "out", "-q", "-c", "10", "--fail-on", "nonstock", "--server", "10.0.0.1:22101",
		"--server", "10.0.0.2:22101", "--workers", "2", "--max-flows", "8", "--checksums", "off", "a.pcap", "b.pcap.gz"); err != nil {
		t.Fatal(err)
	}
	if got.Dir != "out" || !got.Quiet || got.Count != 10 || got.FailOn != exit.FailOnNonStock || len(got.Servers) != 2 ||
		got.Caps.Workers != 2 || got.Caps.Flows != 8 || !got.Caps.Capture().IgnoreChecksums || strings.Join(got.Files, " ") != "a.pcap b.pcap.gz" {
		t.Errorf("options %+v", got)
	}
	// No files, no -o: usage errors before anything runs. export has no -r
	// (its files are positional) and no --max-sessions (Caps without it).
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-o", "fleet"}, "give one or more capture files"},
		{[]string{"a.pcap"}, "-o DIR"},
		{[]string{"-o", "fleet", "-r", "a.pcap"}, "unknown shorthand flag: 'r'"},
		{[]string{"-o", "fleet", "--max-sessions", "4", "a.pcap"}, "unknown flag: --max-sessions"},
	} {
		err := parse(tc.args...)
		if err == nil || !strings.Contains(err.Error(), tc.want) || got != nil {
			t.Errorf("%q: err %v, ran with %+v; want an error with %q", tc.args, err, got, tc.want)
		}
		var ee *exit.Error
		if strings.HasPrefix(tc.want, "unknown") {
			continue // cobra's own (root maps it to exit 2)
		}
		if !errors.As(err, &ee) || ee.Code != exit.CodeUsage {
			t.Errorf("%q: %v is not a usage error", tc.args, err)
		}
	}
}
