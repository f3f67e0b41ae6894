// Command bcwire-full is bcwire with every command linked in, the ones
// that need the large libraries included: export (Parquet), live and serve
// (Prometheus metrics, HTTP). bcwire runs those commands through it, so
// that stats, decode and the rest do not load and initialise those
// libraries; it can run any other command itself.
package main

import (
	"os"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exportcmd"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/livecmd"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/root"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/servecmd"
	"github.com/spf13/cobra"
)

func main() {
	root.Full = func(io *iostreams.IOStreams) []*cobra.Command {
		return []*cobra.Command{exportcmd.NewCmdExport(io, nil), livecmd.NewCmdLive(io, nil), servecmd.NewCmdServe(io, nil)}
	}
	os.Exit(root.Execute(os.Args[1:]))
}
