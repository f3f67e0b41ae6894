package report

import "flag"

// This package keeps no golden files, but accepts -update so that
// `go test ./... -update` (which regenerates the goldens elsewhere) runs.
var _ = flag.Bool("update", false, "regenerate golden files (none in this package)")
