package game

import (
	"os"
	"testing"

	"github.com/bcwire/bcwire/dissect/game/internal/jsongen"
	"github.com/bcwire/bcwire/internal/golden"
)

// TestGeneratedIsCurrent runs the generator into memory and fails when
// zjson.go or zheader.go differs from what it writes now.
func TestGeneratedIsCurrent(t *testing.T) {
	files, err := jsongen.Generate(".")
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		got, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if msg := golden.FirstDiff(want, got); msg != "" {
			t.Errorf("%s is stale; run go generate ./dissect/game\n%s", name, msg)
		}
	}
}

// TestHeaderFieldsNamedOnlyInDeclaration: hand-written code of the package
// names no header field (a field with a wire tag) and no flag constant of
// one, but the fields below, so that a header field is added, changed or
// removed in its declaration alone and go generate does the rest.
// decodeFast and decode read the header with the generated readHeaderFast
// and readHeader, and FillSubsystems counts its packed bits with
// headerBits.
func TestHeaderFieldsNamedOnlyInDeclaration(t *testing.T) {
	allowed := map[string]string{
		"StateUpdate.Flags":  "says which round-robins follow the header",
		"StateUpdate.Object": "is the ship whose class decodes the subsystem states",
	}
	uses, err := jsongen.HeaderUses(".")
	if err != nil {
		t.Fatal(err)
	}
	named := map[string]bool{}
	for _, u := range uses {
		if _, ok := allowed[u.Name]; !ok {
			t.Errorf("%s names the header's %s: read or write it through the generated methods (zheader.go), or add the use to this test's list with the reason", u.Pos, u.Name)
		}
		named[u.Name] = true
	}
	for name := range allowed {
		if !named[name] {
			t.Errorf("%s is allowed but no longer named: take it off the list", name)
		}
	}
}
