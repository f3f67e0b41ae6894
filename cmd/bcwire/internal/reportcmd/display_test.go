package reportcmd

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/flagtest"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/input"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
)

// TestReportReadAndDisplayFilter: report takes -r beside positional files,
// and -Y; a bad -Y exits 2 with its column, before anything is written.
func TestReportReadAndDisplayFilter(t *testing.T) {
	var got *Options
	err := flagtest.ParseOnly(NewCmdReport(nil, func(o *Options) error { got = o; return nil }), "-o", "r.html", "a.pcap", "-r", "b.pcap", "-Y", `name == "CHAT"`)
	if err != nil || strings.Join(got.Files, ",") != "a.pcap,b.pcap" || got.Read.Filter == "" {
		t.Fatalf("%v %+v", err, got)
	}
	dir := t.TempDir()
	page := filepath.Join(dir, "r.html")
	battle := filepath.Join("..", "..", "..", "..", "testdata", "pcaps", "battle.pcap")
	err = Run(&Options{IO: &iostreams.IOStreams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}, Files: []string{battle}, Output: page,
		Timeout: 45 * time.Second, Quiet: true, Read: input.ReadFlags{Filter: "peer >= "}})
	if err == nil || !strings.Contains(err.Error(), "column 9") {
		t.Errorf("bad -Y: %v", err)
	}
	if err := Run(&Options{IO: &iostreams.IOStreams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}, Files: []string{battle}, Output: page,
		Timeout: 45 * time.Second, Quiet: true, Read: input.ReadFlags{Filter: `src contains "10.0.1.10:" or dst contains "10.0.1.10:"`}}); err != nil {
		t.Fatal(err)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), `<div class="v">1</div><div class="l">Sessions</div>`) {
		t.Error("the report of one player's traffic does not show one session")
	}
}
