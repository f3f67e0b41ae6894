package root

import (
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// Commands are thin shells over the library packages: no command package
// (nor cliutil, which they share) imports another command package, in its
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
			if ok && other != "cliutil" && other != d.Name() {
				t.Errorf("%s imports %s: move what they share into a library package or cliutil", d.Name(), imp)
			}
		}
	}
	if checked < 10 {
		t.Errorf("checked %d command packages; is the test in the right directory?", checked)
	}
}
