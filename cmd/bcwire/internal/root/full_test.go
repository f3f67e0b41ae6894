package root

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exportcmd"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/livecmd"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/servecmd"
	"github.com/spf13/cobra"
)

// The tests run every command in process, as bcwire-full does.
func init() { Full = linkAll }

func linkAll(io *iostreams.IOStreams) []*cobra.Command {
	return []*cobra.Command{exportcmd.NewCmdExport(io, nil), livecmd.NewCmdLive(io, nil), servecmd.NewCmdServe(io, nil)}
}

// bcwire's stubs are named and described as the commands bcwire-full runs.
func TestFullStubsMatchCommands(t *testing.T) {
	real := linkAll(&iostreams.IOStreams{})
	if len(real) != len(fullOnly) {
		t.Fatalf("%d stubs for %d commands", len(fullOnly), len(real))
	}
	for i, c := range real {
		if c.Name() != fullOnly[i].name || c.Short != fullOnly[i].short {
			t.Errorf("stub %q %q, command %q %q", fullOnly[i].name, fullOnly[i].short, c.Name(), c.Short)
		}
	}
}

// Without Full, export, live and serve start bcwire-full with their
// arguments as given, and end with its exit status, adding no message.
func TestFullStubRunsFullBinary(t *testing.T) {
	saved := Full
	Full = nil
	defer func() { Full = saved }()
	dir := t.TempDir()
	fake := filepath.Join(dir, "bcwire-full")
	script := "#!/bin/sh\necho \"args: $*\"\necho oops >&2\nexit 3\n"
	if err := os.WriteFile(fake, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BCWIRE_FULL", fake)
	out, errs, code := run(t, "export", "-o", "x y", "--json", "a.pcap")
	if code != 3 || out != "args: export -o x y --json a.pcap\n" || errs != "oops\n" {
		t.Errorf("export: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	out, _, code = run(t, "help", "serve")
	if code != 0 || out != "args: serve --help\n" {
		t.Errorf("help serve: exit %d, stdout %q", code, out)
	}
	t.Setenv("BCWIRE_FULL", filepath.Join(dir, "missing"))
	if _, errs, code := run(t, "live", "-i", "lo"); code != 2 || !strings.Contains(errs, "missing") {
		t.Errorf("missing bcwire-full: exit %d, stderr %q", code, errs)
	}
}
