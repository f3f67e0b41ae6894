// Command bcwire dissects, analyses, compares and serves Star Trek: Bridge
// Commander multiplayer traffic. Run `bcwire help` for the commands.
package main

import (
	"os"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/root"
)

func main() { os.Exit(root.Execute(os.Args[1:])) }
