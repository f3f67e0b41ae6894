// Package exportcmd implements `bcwire export`: captures as Parquet tables
// for DuckDB, Spark or Trino.
package exportcmd

import (
	"fmt"
	"net/netip"
	"os"
	"runtime/debug"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/input"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/interrupt"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/output"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/scan"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/report/export"
	"github.com/bcwire/bcwire/session"
	"github.com/spf13/cobra"
)

// Options of `bcwire export`.
type Options struct {
	FailOn  exit.FailOn // --fail-on nonstock
	IO      *iostreams.IOStreams
	Files   []string
	Dir     string
	Servers []string
	Quiet   bool
	Count   int // -c
	Caps    input.Caps
}

// NewCmdExport builds the cobra command. runF, when set, is called with the
// parsed options instead of running the command.
func NewCmdExport(io *iostreams.IOStreams, runF func(*Options) error) *cobra.Command {
	o := &Options{IO: io}
	cmd := &cobra.Command{
		Use:   "export -o DIR [flags] FILE...",
		Short: "Write captures as Parquet tables (messages, sessions) for DuckDB, Spark or Trino",
		Long: `Decode pcap or pcapng captures and write two Parquet tables under DIR,
partitioned as query engines read partitions (Hive-style directories), so
that exports of many captures from many servers add up in one directory:

  DIR/messages/capture=NAME/date=YYYY-MM-DD/part-KEY.parquet
      one row per transport message, GameSpy datagram or damaged record:
      file, frame, time, kind, server, client, src, dst, dir, peer, msg,
      type, type_name, reliable, seq, opcode, name, fields (decode --json's
      "fields" object as JSON text), the common StateUpdate fields typed
      (object, game_time, flags, pos_x, pos_y, pos_z, speed), warning, error,
      nonstock (the registry name of an intact message not in stock's form)
  DIR/sessions/capture=NAME/part-KEY.parquet
      one row per session: file, server, client, slot, name, team, ship,
      start, end, duration_s, reached, end_reason, mid_capture, connect,
      lobby, in_game, join_s, kills, deaths, score, ships_created,
      ships_destroyed, chat_lines, datagrams and game messages per
      direction, state_updates per direction, retransmitted, damaged

NAME is the capture's file name, escaped as Hive escapes partition values
(%XX for '/', '=', '%', '?', control characters and the like), which DuckDB
and Spark decode back to the name. KEY is a hash of the capture's absolute
path: exporting a capture again replaces its parts, and two captures of
the same name from different folders keep a part each. Files are written
under hidden temporary names and renamed into place at the end; an export
that fails or is interrupted (SIGINT, SIGTERM) removes them and the
folders it made. Rows stream to disk in row groups, so memory stays
bounded whatever the capture's length.

Exit status: 0 when nothing was damaged (non-stock messages, intact but not
in stock's form, are reported and exit 0 unless --fail-on nonstock), 1 when
some packets or messages were damaged (listed on stderr, and in the error column), 2 for
usage or I/O errors, 130 when interrupted (nothing is left behind).`,
		Example: `  bcwire export -o fleet testdata/pcaps/*.pcap testdata/pcaps/*.pcapng
  duckdb -c "SELECT server, date, count(DISTINCT client) AS players,
                    count(*) FILTER (name = 'StateUpdate') AS state_updates
             FROM read_parquet('fleet/messages/**/*.parquet', hive_partitioning = true)
             GROUP BY ALL ORDER BY ALL"`,
		RunE: input.FilesRunE(o, nil, &o.Files, runF, Run, func() error {
			if o.Dir == "" {
				return exit.Usage("-o DIR: give the directory to write the tables to")
			}
			return nil
		}),
	}
	f := cmd.Flags()
	f.StringVarP(&o.Dir, "output", "o", "", "write the tables under `DIR` (created if needed)")
	input.AddServerFlag(f, &o.Servers)
	input.AddCountFlag(f, &o.Count)
	output.AddQuietFlag(f, &o.Quiet)
	exit.AddFailOnFlag(f, &o.FailOn)
	o.Caps.AddFlags(f, false)
	return cmd
}

// memoryLimit is export's soft limit on the memory the Go runtime holds
// (heap, stacks, its own) unless GOMEMLIMIT sets one. Its live heap is
// some 16 MiB (a row group being built, the sessions); without a limit the
// garbage collector lets the heap grow to twice that. The binary's own
// pages add some 19 MiB of RSS whatever the limit. At 24 MiB, peak RSS on
// battle ×100 is 39.4-39.8 MiB (54.7 without it) for 1.07x the CPU
// (2026-11-26, 3 pairs): cheap since the fields text is no longer
// garbage (Writer.NextMessage reuses its block), so collections are
// few. It is soft: a larger live heap (many sessions) only makes
// collection more frequent, and the runtime caps that at half the CPU.
const memoryLimit = 24 << 20

// Run exports.
func Run(o *Options) error {
	if err := o.FailOn.Check(); err != nil {
		return err
	}
	servers, err := input.ParseServers(o.Servers)
	if err != nil {
		return err
	}
	if err := o.Caps.Check(); err != nil {
		return err
	}
	files, err := inputs(o)
	if err != nil {
		return err
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	w, err := export.New(o.Dir)
	if err != nil {
		return exit.IOError(o.Dir, err)
	}
	w.Stale = func(path string, size int64) {
		fmt.Fprintf(o.IO.Err, "bcwire: warning: %s (%d bytes) was left by an export that was killed before it finished; remove it\n", path, size)
	}
	intr, stop := interrupt.Catch()
	defer stop()
	res, werr, err := exportFiles(o, w, files, servers, intr)
	if res != nil && res.Interrupted {
		w.Abort()
		return &exit.Error{Code: exit.CodeInterrupted, Err: fmt.Errorf("interrupted: nothing exported, %s left as it was", o.Dir)}
	}
	if cerr := w.Close(); werr == nil {
		werr = cerr
	}
	if err != nil {
		return err
	}
	if werr != nil {
		return exit.IOError(o.Dir, werr)
	}
	return res.ErrFailOn(o.FailOn)
}

// inputs checks the files (before the directory is made) and -o against
// them, and gives each capture once: the same capture given twice
// (a.pcap ./a.pcap) is exported once, as its parts are named by its key
// and two runs of it would be one file's rows twice.
func inputs(o *Options) ([]string, error) {
	if err := input.CheckCount(o.Count); err != nil {
		return nil, err
	}
	if err := input.CheckInputs(o.Files); err != nil {
		return nil, err // before the directory is made
	}
	for _, in := range o.Files {
		if t := (output.Target{Flag: "-o", Path: o.Dir}); !isDir(o.Dir) {
			if err := t.Check(in); err != nil {
				return nil, err
			}
		}
	}
	seen := map[string]bool{}
	var files []string
	for _, in := range o.Files {
		k := export.FileKey(in)
		if seen[k] {
			fmt.Fprintf(o.IO.Err, "%s: given more than once; exported once\n", in)
			continue
		}
		seen[k] = true
		files = append(files, in)
	}
	return files, nil
}

// exportFiles scans files into w: a row per record and per session. werr
// is the first error writing the tables, err the scan's.
func exportFiles(o *Options, w *export.Writer, files []string, servers []netip.AddrPort, intr <-chan struct{}) (res *scan.Result, werr, err error) {
	var (
		file string
		rows export.Rows
	)
	res, err = scan.Run(&scan.Options{IO: o.IO, Count: o.Count, Files: files, Servers: servers, Quiet: o.Quiet, Interrupt: intr,
		Session: o.Caps.Session(session.Options{}), Workers: o.Caps.Workers, Flow: o.Caps.Flow(), Capture: o.Caps.Capture(),
		File: func(path string) { file = path },
		Record: session.RecordFunc(func(r *flow.Record) {
			if werr != nil {
				return
			}
			var row *export.MessageRow
			if row, werr = w.NextMessage(file, r.Time.UTC()); werr == nil {
				rows.MessageRowOf(row, file, r)
			}
		})}, func(path string, s *session.Session) error {
		if werr != nil {
			return werr
		}
		var sr export.SessionRow
		export.SessionRowOf(&sr, path, s)
		return w.Session(sr)
	})
	return res, werr, err
}

func isDir(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}
