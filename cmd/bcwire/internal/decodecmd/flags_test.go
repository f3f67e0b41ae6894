package decodecmd

import (
	"strings"
	"testing"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/flagtest"
)

// The flags, tested without running (runF): every name means what it
// means in the other commands (-c packets read, -V every field, -q quiet
// stderr, --server the captured server, --json a switch).
func TestFlags(t *testing.T) {
	var got *Options
	parse := func(args ...string) error {
		got = nil
		return flagtest.ParseOnly(NewCmdDecode(nil, func(o *Options) error { got = o; return nil }), args...)
	}
	if err := parse("-c", "40", "-V", "-q", "--json", "--server", "10.0.0.1:22101", "--server", "10.0.0.2:1", "--dir", "s2c", "--opcode", "CHAT,0x1C", "a.pcap", "b.pcap"); err != nil {
		t.Fatal(err)
	}
	if got.Count != 40 || !got.Verbose || !got.Quiet || !got.JSON || len(got.Servers) != 2 || got.Dir != "s2c" ||
		len(got.Opcodes) != 2 || strings.Join(got.Files, ",") != "a.pcap,b.pcap" || got.Peer != -1 || got.Caps.Workers != DefaultWorkers() {
		t.Errorf("options %+v", got)
	}
	// --json takes no value: a file after it is an input.
	if err := parse("--json", "a.pcap"); err != nil || !got.JSON || len(got.Files) != 1 {
		t.Errorf("--json a.pcap: %v %+v", err, got)
	}
	for _, args := range [][]string{{}, {"--hex", "01", "a.pcap"}, {"--bogus"}} {
		if err := parse(args...); err == nil {
			t.Errorf("%v: accepted", args)
		}
	}
}
