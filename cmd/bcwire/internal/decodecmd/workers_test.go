package decodecmd

import (
	"bytes"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
)

func run(t *testing.T, o *Options) (string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	o.IO = &iostreams.IOStreams{Out: &out, Err: &errb}
	o.Peer = -1
	code := 0
	if err := Run(o); err != nil {
		var ee *exit.Error
		if !errors.As(err, &ee) {
			t.Fatalf("error without an exit status: %v", err)
		}
		code = ee.Code
	}
	return out.String() + "\x00" + errb.String(), code
}

// decode --workers N, and decode with its default (two workers on two
// cores), print exactly what one worker prints, on every bundled capture
// and OpenBC's battle.
func TestDecodeWorkersSameOutput(t *testing.T) {
	files, err := filepath.Glob("../../../../testdata/pcaps/*.pcap*")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "../../../../testdata/openbc/networked-battle.pcap")
	var caps []string
	for _, f := range files {
		if !strings.HasSuffix(f, ".golden") && !strings.HasSuffix(f, ".gz") {
			caps = append(caps, f)
		}
	}
	for _, o := range []Options{{}, {Verbose: true}, {JSON: true}, {Count: 777}} {
		o1 := o
		o1.Files = caps
		want, wcode := run(t, &o1)
		if len(want) < 1000 {
			t.Fatalf("too little output: %q", want)
		}
		for _, n := range []int{3, 2, DefaultWorkers()} {
			o2 := o
			o2.Files = caps
			o2.Caps.Workers = n
			got, gcode := run(t, &o2)
			if got != want || gcode != wcode {
				t.Errorf("%+v: --workers %d output differs from one worker (exit %d vs %d)", o, n, gcode, wcode)
			}
		}
	}
}
