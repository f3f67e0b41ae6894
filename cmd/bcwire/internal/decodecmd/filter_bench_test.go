package decodecmd

import (
	"io"
	"testing"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/flagtest"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
)

// BenchmarkDisplayFilter is decode of the battle with -Y and -T fields
// against plain --json, the cost issue 17 bounds at 2x. (Figures on battle
// x100 with the binary: bench/repeat, then time each command line.)
func BenchmarkDisplayFilter(b *testing.B) {
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"json", []string{"--json"}},
		{"json-Y-name", []string{"--json", "-Y", `name == "CHAT"`}},
		{"json-Y-fields", []string{"--json", "-Y", "fields.speed > 5"}},
		{"T-fields", []string{"-T", "fields", "-e", "frame", "-e", "time", "-e", "src", "-e", "name", "-e", "seq"}},
		{"T-fields-path", []string{"-T", "fields", "-e", "frame", "-e", "time", "-e", "name", "-e", "fields.speed"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			for b.Loop() {
				cmd := NewCmdDecode(&iostreams.IOStreams{Out: io.Discard, Err: io.Discard}, nil)
				if err := flagtest.ParseOnly(cmd, append(tc.args, "-q", battle)...); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
