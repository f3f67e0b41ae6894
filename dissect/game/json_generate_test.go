package game

import (
	"os"
	"testing"

	"github.com/bcwire/bcwire/dissect/game/internal/jsongen"
	"github.com/bcwire/bcwire/internal/golden"
)

// TestGeneratedJSONIsCurrent runs the generator into memory and fails when
// zjson.go differs from what it writes now.
func TestGeneratedJSONIsCurrent(t *testing.T) {
	want, err := jsongen.Generate(".", "zjson.go")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("zjson.go")
	if err != nil {
		t.Fatal(err)
	}
	if msg := golden.FirstDiff(want, got); msg != "" {
		t.Fatalf("zjson.go is stale; run go generate ./dissect/game\n%s", msg)
	}
}
