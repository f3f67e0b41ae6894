//go:build ignore

// zjson_gen writes the files generated from the struct tags (see
// internal/jsongen): zjson.go, the AppendJSON methods, and zheader.go, the
// message headers. Run it with go generate.
package main

import (
	"log"
	"os"

	"github.com/bcwire/bcwire/dissect/game/internal/jsongen"
)

func main() {
	files, err := jsongen.Generate(".")
	if err != nil {
		log.Fatal(err)
	}
	for name, src := range files {
		if err := os.WriteFile(name, src, 0o644); err != nil {
			log.Fatal(err)
		}
	}
}
