package output

import (
	"os"
	"path/filepath"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
)

// checkDir refuses a target whose directory is missing or not a directory,
// naming the target as the user gave it: the file is
// written under a temporary name beside it, whose name would otherwise be
// the one in the message.
func (t Target) checkDir() error {
	dir := filepath.Dir(t.Path)
	st, err := os.Stat(dir)
	switch {
	case os.IsNotExist(err):
		return exit.Usage("%s %s: the directory %s does not exist", t.Flag, t.Path, dir)
	case err != nil:
		return exit.Usage("%s %s: %v", t.Flag, t.Path, err)
	case !st.IsDir():
		return exit.Usage("%s %s: %s is not a directory", t.Flag, t.Path, dir)
	}
	return nil
}
