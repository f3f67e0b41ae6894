package statscmd

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/flagtest"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/input"
)

// TestStatsDisplayFilter: stats -Y counts only the messages the filter
// holds for; -r reads a file as a positional one does; a bad -Y exits 2
// with its column.
func TestStatsDisplayFilter(t *testing.T) {
	battle := "../../../../testdata/pcaps/battle.pcap"
	out, _, code := run(t, &Options{Files: []string{battle}, JSON: true, Quiet: true, Caps: input.Caps{Workers: 1},
		Read: input.ReadFlags{Filter: `name == "CHAT" and dir == "C->S"`}}, false)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var res struct {
		Opcodes []struct {
			Dir   string `json:"dir"`
			Name  string `json:"name"`
			Count int    `json:"count"`
		} `json:"opcodes"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Opcodes) != 1 || res.Opcodes[0].Name != "CHAT" || res.Opcodes[0].Dir != "C->S" || res.Opcodes[0].Count == 0 {
		t.Errorf("opcodes %+v, want only CHAT C->S", res.Opcodes)
	}
	var got *Options
	if err := flagtest.ParseOnly(NewCmdStats(nil, func(o *Options) error { got = o; return nil }), "-r", battle, "-Y", "opcode == 0x2C"); err != nil || len(got.Files) != 1 || got.Read.Filter == "" {
		t.Errorf("-r: %v %+v", err, got)
	}
	_, errs, code := run(t, &Options{Files: []string{battle}, Caps: input.Caps{Workers: 1}, Read: input.ReadFlags{Filter: `name == "CHAT" &&`}}, false)
	if code != 2 || !strings.Contains(errs, "column 18") {
		t.Errorf("bad -Y: exit %d %q", code, errs)
	}
}
