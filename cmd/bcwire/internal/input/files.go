package input

import (
	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/spf13/cobra"
)

// FilesRunE is the RunE of a command that reads capture files (stats,
// timeline, report, export): *files gets the positional files and, when
// read is set, the -r files; none at all is a usage error; then each of
// checks (the command's own refusals); then runF, when set (the flag
// tests'), or run is called with o.
func FilesRunE[O any](o *O, read *ReadFlags, files *[]string, runF, run func(*O) error, checks ...func() error) func(*cobra.Command, []string) error {
	return func(_ *cobra.Command, args []string) error {
		*files = args
		if read != nil {
			var err error
			if *files, err = read.Inputs(args); err != nil {
				return err
			}
		}
		if len(*files) == 0 {
			return exit.Usage("give one or more capture files (see --help)")
		}
		for _, check := range checks {
			if err := check(); err != nil {
				return err
			}
		}
		if runF != nil {
			return runF(o)
		}
		return run(o)
	}
}
