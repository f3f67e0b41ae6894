package root

import (
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Commands are thin shells over the library packages: no command package
// (nor the packages they share: exit, input, output, ...) imports another command package, in its
// code or its tests. Only root assembles them. The one exception is
// verifycmd's external test, which plays verify against serve --replay
// through the whole CLI (it belongs in root; moving it waits for the work
// on verify to settle).
func TestCommandsImportNoOtherCommand(t *testing.T) {
	const prefix = "github.com/bcwire/bcwire/cmd/bcwire/internal/"
	dirs, err := os.ReadDir("..")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, d := range dirs {
		if !d.IsDir() || d.Name() == "root" {
			continue
		}
		pkg, err := build.ImportDir(filepath.Join("..", d.Name()), 0)
		if err != nil {
			t.Fatalf("%s: %v", d.Name(), err)
		}
		checked++
		imports := append(append(pkg.Imports, pkg.TestImports...), pkg.XTestImports...)
		for _, imp := range imports {
			other, ok := strings.CutPrefix(imp, prefix)
			if d.Name() == "verifycmd" && slices.Contains(pkg.XTestImports, imp) && (other == "root" || other == "servecmd") {
				continue
			}
			if ok && (strings.HasSuffix(other, "cmd") || other == "root") && other != d.Name() {
				t.Errorf("%s imports %s: move what they share into a library package or a shared one beside the commands", d.Name(), imp)
			}
		}
	}
	if checked < 10 {
		t.Errorf("checked %d command packages; is the test in the right directory?", checked)
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
