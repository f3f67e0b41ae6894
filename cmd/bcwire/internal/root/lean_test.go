package root

import (
	"bytes"
	"testing"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
)

// TestRunsOnlyBuildsTheCommandRun: a run naming a command builds that
// command alone; help, completion, man, flags first and unknown names get
// the whole tree.
func TestRunsOnlyBuildsTheCommandRun(t *testing.T) {
	io := &iostreams.IOStreams{Out: &bytes.Buffer{}, Err: &bytes.Buffer{}}
	whole := map[string]bool{}
	for _, c := range newCmdRoot(io, &profiling{}, "", false).Commands() {
		whole[c.Name()] = true
	}
	for _, c := range commands {
		if !whole[c.name] {
			t.Errorf("the whole tree has no %s", c.name)
		}
		if got := runsOnly([]string{c.name, "x.pcap"}); got != c.name {
			t.Errorf("runsOnly(%s x.pcap) = %q", c.name, got)
		}
		var names []string
		for _, sub := range newCmdRoot(io, &profiling{}, c.name, false).Commands() {
			if whole[sub.Name()] && sub.Name() != "help" {
				names = append(names, sub.Name())
			}
		}
		if len(names) != 1 || names[0] != c.name {
			t.Errorf("tree for %s holds %v", c.name, names)
		}
	}
	for _, args := range [][]string{nil, {"help", "stats"}, {"--help"}, {"--cpuprofile", "f", "stats"}, {"man", "d"},
		{"completion", "bash"}, {"__complete", "stats", ""}, {"stat"}, {"Stats"}} {
		if got := runsOnly(args); got != "" {
			t.Errorf("runsOnly(%q) = %q, want the whole tree", args, got)
		}
	}
}

// TestCommandAloneSaysTheSame: each command's help and usage errors are the
// same built alone as in the whole tree.
func TestCommandAloneSaysTheSame(t *testing.T) {
	var runs [][]string
	for _, c := range commands {
		runs = append(runs, []string{c.name, "--help"}, []string{c.name, "--bogus"}, []string{c.name})
	}
	runs = append(runs, []string{"cipher", "encrypt", "--help"}, []string{"stats", "-c", "abc", "x.pcap"})
	for _, args := range runs {
		var out, errb bytes.Buffer
		root := newCmdRoot(&iostreams.IOStreams{Out: &out, Err: &errb}, &profiling{}, "", false)
		root.SetArgs(args)
		werr := root.Execute()
		wantErr := errb.String()
		if werr != nil {
			wantErr += "bcwire: " + werr.Error() + "\n" // as ExecuteIO says it
		}
		gotOut, gotErr, _ := run(t, args...)
		if gotOut != out.String() || gotErr != wantErr {
			t.Errorf("%q alone:\n%s%s\nin the whole tree:\n%s%s", args, gotOut, gotErr, out.String(), wantErr)
		}
	}
}
