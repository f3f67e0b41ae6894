package root

import (
	"go/build"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Commands are thin shells over the library packages: no command package
// (nor cliutil, which they share) imports another command package, in its
// code or its own tests. Only root assembles them. (External _test
// packages, which drive the whole CLI, may.)
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
		for _, imp := range append(pkg.Imports, pkg.TestImports...) {
			if other, ok := strings.CutPrefix(imp, prefix); ok && other != "cliutil" {
				t.Errorf("%s imports %s: move what they share into a library package or cliutil", d.Name(), imp)
			}
		}
	}
	if checked < 10 {
		t.Errorf("checked %d command packages; is the test in the right directory?", checked)
	}
}
