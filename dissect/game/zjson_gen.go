//go:build ignore

// zjson_gen writes zjson.go, the AppendJSON methods generated from the
// struct tags (see internal/jsongen). Run it with go generate.
package main

import (
	"log"
	"os"

	"github.com/bcwire/bcwire/dissect/game/internal/jsongen"
)

func main() {
	src, err := jsongen.Generate(".", "zjson.go")
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile("zjson.go", src, 0o644); err != nil {
		log.Fatal(err)
	}
}
