package servecmd

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/bcwire/bcwire/server/native"
)

// maxConsoleLine is the longest console line read (64 KiB, newline
// included); a longer one is refused with a message and skipped, and the
// console goes on. Every command fits in a few hundred bytes.
const maxConsoleLine = 64 << 10

// console runs the console commands read from in until it ends, quit is
// typed (then it calls quit) or ctx ends.
func console(ctx context.Context, out io.Writer, srv *native.Server, in io.Reader, quit func()) {
	r := bufio.NewReaderSize(in, maxConsoleLine)
	for {
		line, long, err := r.ReadLine()
		if ctx.Err() != nil || (err != nil && len(line) == 0) {
			return
		}
		if long {
			n := len(line)
			for long && err == nil {
				line, long, err = r.ReadLine()
				n += len(line)
			}
			fmt.Fprintf(out, "error: console line of %d bytes refused (at most %d)\n", n, maxConsoleLine-1)
			continue
		}
		res, err := srv.Exec(time.Now(), string(line))
		switch {
		case errors.Is(err, native.ErrQuit):
			quit()
			return
		case err != nil:
			fmt.Fprintln(out, "error:", err)
		case res != "":
			fmt.Fprintln(out, res)
		}
	}
}
