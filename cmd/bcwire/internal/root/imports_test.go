package root

import (
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// The layers, lowest first: a package imports only packages of its own
// top folder or of a lower layer, in its code and in its tests (_test
// packages too). Data flows one way, capture → dissect → session → report;
// the server sits beside report, sharing the codec, and the two import
// neither each other. Commands, the tools in bench and interop, and the
// whole-pipeline tests in pipeline sit on top.
var layers = map[string]int{
	"internal": 0,
	"dissect":  1,
	"session":  2,
	"report":   3, "server": 3,
	"cmd": 4, "bench": 4, "interop": 4, "pipeline": 4,
}

const module = "github.com/bcwire/bcwire"

// assemblers put the commands together: the binaries and the command
// tree. Every other package under cmd imports no command.
var assemblers = map[string]bool{
	module + "/cmd/bcwire":               true,
	module + "/cmd/bcwire/bcwire-full":   true,
	module + "/cmd/bcwire/internal/root": true,
}

// isCommand reports whether path is one command's package (decodecmd,
// servecmd, ...), as opposed to what the commands share (input, output and the
// like) or assemble them (root).
func isCommand(path string) bool {
	rest, ok := strings.CutPrefix(path, module+"/cmd/bcwire/internal/")
	return ok && !strings.Contains(rest, "/") && strings.HasSuffix(rest, "cmd")
}

// importViolation says why from may not import to, or returns "" when it
// may. Imports from outside the module are not its business.
func importViolation(from, to string) string {
	f, fok := strings.CutPrefix(from, module+"/")
	t, tok := strings.CutPrefix(to, module+"/")
	if !fok || !tok || from == to {
		return ""
	}
	ftop, _, _ := strings.Cut(f, "/")
	ttop, _, _ := strings.Cut(t, "/")
	fl, ok := layers[ftop]
	if !ok {
		return from + " is in no layer: give its top folder one in imports_test.go"
	}
	tl, ok := layers[ttop]
	if !ok {
		return to + " is in no layer: give its top folder one in imports_test.go"
	}
	switch {
	case tl > fl:
		return fmt.Sprintf("%s (layer %s) imports %s, a layer above it (%s)", from, ftop, to, ttop)
	case tl == fl && ftop != ttop:
		return fmt.Sprintf("%s imports %s: %s and %s sit beside each other, and neither imports the other", from, to, ftop, ttop)
	case assemblers[to] && !assemblers[from]:
		return fmt.Sprintf("%s imports %s, which assembles the commands: only the binaries and the command tree do", from, to)
	case isCommand(to) && !assemblers[from]:
		return fmt.Sprintf("%s imports the command %s: commands import no other command; move what they share below them", from, to)
	}
	return ""
}

// pkgImports is what a package imports: in its code, and in its test
// files (its own and those of its _test package).
type pkgImports struct {
	Path        string
	Imports     []string
	TestImports []string
}

// layerViolations lists every import against the layers in pkgs.
func layerViolations(pkgs []pkgImports) []string {
	var out []string
	for _, p := range pkgs {
		for _, imp := range p.Imports {
			if v := importViolation(p.Path, imp); v != "" {
				out = append(out, v)
			}
		}
		for _, imp := range p.TestImports {
			if v := importViolation(p.Path, imp); v != "" {
				out = append(out, v+" (in its tests)")
			}
		}
	}
	return out
}

// TestImportsFollowTheLayers: no package of the module imports against the
// layers, in its code or its tests.
func TestImportsFollowTheLayers(t *testing.T) {
	list := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \",\"}}|{{join .TestImports \",\"}},{{join .XTestImports \",\"}}", "./...")
	list.Dir = repoRoot
	out, err := list.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var pkgs []pkgImports
	tests := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		if len(f) != 3 {
			t.Fatalf("go list line %q", line)
		}
		p := pkgImports{Path: f[0], Imports: strings.FieldsFunc(f[1], isComma), TestImports: strings.FieldsFunc(f[2], isComma)}
		tests += len(p.TestImports)
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 40 || tests < 100 {
		t.Fatalf("read %d packages with %d test imports; is go list's output what the test expects?", len(pkgs), tests)
	}
	for _, v := range layerViolations(pkgs) {
		t.Error(v)
	}
}

func isComma(r rune) bool { return r == ',' }

// TestImportViolation: the checker refuses each kind of bad import, in code
// and in tests, and lets the good ones through.
func TestImportViolation(t *testing.T) {
	m := func(p string) string { return module + "/" + p }
	for _, c := range []struct {
		from, to string
		bad      string // part of the reason; "" when allowed
	}{
		{"session", "dissect/flow", ""},
		{"dissect/flow", "dissect/game", ""},
		{"dissect/game", "internal/jsonenc", ""},
		{"report", "session/diff", ""},
		{"server/replay", "session/diff", ""},
		{"pipeline", "report", ""},
		{"pipeline", "server/synth", ""},
		{"cmd/bcwire/internal/verifycmd", "cmd/bcwire/internal/input", ""},
		{"cmd/bcwire/internal/root", "cmd/bcwire/internal/servecmd", ""},
		{"cmd/bcwire/bcwire-full", "cmd/bcwire/internal/servecmd", ""},
		{"dissect/flow", "session", "a layer above it"},
		{"dissect/flow", "report", "a layer above it"},
		{"session", "report", "a layer above it"},
		{"session/diff", "server/synth", "a layer above it"},
		{"internal/golden", "dissect/capture", "a layer above it"},
		{"report", "pipeline", "a layer above it"},
		{"report", "server/synth", "beside each other"},
		{"server/native", "report/metrics", "beside each other"},
		{"bench", "pipeline", "beside each other"},
		{"cmd/bcwire/internal/verifycmd", "cmd/bcwire/internal/servecmd", "commands import no other command"},
		{"cmd/bcwire/internal/verifycmd", "cmd/bcwire/internal/root", "assembles the commands"},
		{"pipeline", "cmd/bcwire/internal/root", "beside each other"},
		{"cmd/bcwire/internal/input", "cmd/bcwire/internal/decodecmd", "commands import no other command"},
		{"tools/x", "dissect", "in no layer"},
		{"dissect", "tools/x", "in no layer"},
	} {
		got := importViolation(m(c.from), m(c.to))
		if c.bad == "" && got != "" || c.bad != "" && !strings.Contains(got, c.bad) {
			t.Errorf("%s imports %s: %q, want %q", c.from, c.to, got, c.bad)
		}
	}
	for _, to := range []string{"fmt", "github.com/spf13/cobra", "github.com/bcwire/bcwire2/report"} {
		if got := importViolation(m("dissect"), to); got != "" {
			t.Errorf("dissect imports %s: %q, want allowed", to, got)
		}
	}
	// A bad import in a test file is found as one in the code is.
	v := layerViolations([]pkgImports{
		{Path: m("dissect/flow"), Imports: []string{m("dissect"), "io"}, TestImports: []string{m("dissect/capture"), m("report")}},
		{Path: m("session"), Imports: []string{m("dissect/flow")}},
	})
	if len(v) != 1 || !strings.Contains(v[0], "imports "+m("report")) || !strings.HasSuffix(v[0], "(in its tests)") {
		t.Errorf("violations %q, want the one test import of report", v)
	}
}

// bcwire links none of the large libraries that only export, live and
// serve use (they are in bcwire-full, see full.go): any package a binary
// links is initialised and paged in by every command. -Y's expression
// library is small and stays.
func TestBcwireLinksNoLargeLibraries(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	out, err := exec.Command("go", "list", "-deps", "github.com/bcwire/bcwire/cmd/bcwire").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, large := range []string{"github.com/parquet-go/parquet-go", "github.com/prometheus/client_golang/prometheus", "net/http"} {
		if slices.Contains(strings.Fields(string(out)), large) {
			t.Errorf("bcwire links %s", large)
		}
	}
}
