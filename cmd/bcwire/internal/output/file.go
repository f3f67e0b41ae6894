// Package output writes the files bcwire's commands make. Every file a
// command writes goes through it, so that no command can overwrite one of
// its own inputs, a document (-o) never silently replaces a capture, and a
// failing run leaves whatever was at the target as it was: the bytes go to
// a temporary file beside the target, renamed over it only when complete,
// and removed when a signal kills the run. It also holds the flags about
// output every command shares (-q, --force).
package output

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/spf13/pflag"
)

// captureMagics are the first bytes of the files -o refuses to replace
// without --force: pcap (both byte orders, micro- and nanosecond), pcapng,
// gzip and zstd.
var captureMagics = []struct {
	name  string
	magic []byte
}{
	{"pcap", []byte{0xD4, 0xC3, 0xB2, 0xA1}},
	{"pcap", []byte{0xA1, 0xB2, 0xC3, 0xD4}},
	{"pcap", []byte{0x4D, 0x3C, 0xB2, 0xA1}},
	{"pcap", []byte{0xA1, 0xB2, 0x3C, 0x4D}},
	{"pcapng", []byte{0x0A, 0x0D, 0x0D, 0x0A}},
	{"gzip", []byte{0x1F, 0x8B}},
	{"zstd", []byte{0x28, 0xB5, 0x2F, 0xFD}},
}

// Target is a file a command is about to write: Flag names the flag that
// gave it ("-o", "-w"), Path is the file ("-" means stdout where the
// command allows it).
type Target struct {
	Flag string
	Path string
	// Document is set for -o: an existing file that starts like a capture
	// is refused unless Force.
	Document bool
	// NoClobber is set for -w: any existing non-empty file is refused
	// unless Force (a capture is replaced only on purpose).
	NoClobber bool
	Force     bool
}

// stdinStat describes standard input, the input "-" (tests replace it).
var stdinStat = func() (os.FileInfo, error) { return os.Stdin.Stat() }

// Check refuses a target that is one of inputs (by name or, through links
// and other spellings, by os.SameFile; "-" is standard input, compared with
// the file it reads, as in `-w v.pcap -r - < v.pcap`), a directory, or -
// without Force - an existing capture for a document, an existing non-empty
// file for NoClobber. The error is a usage error (exit 2) that names the
// file.
func (t Target) Check(inputs ...string) error {
	if t.Path == "" {
		return exit.Usage("%s: give a file name", t.Flag)
	}
	if t.Path == "-" {
		return nil
	}
	if err := t.checkDir(); err != nil {
		return err
	}
	st, statErr := os.Stat(t.Path)
	for _, in := range inputs {
		if in == "-" && statErr == nil {
			if ist, err := stdinStat(); err == nil && os.SameFile(st, ist) {
				return exit.Usage("%s %s: that is the file standard input reads (an input of this command); refusing to overwrite it", t.Flag, t.Path)
			}
		}
		if in == "" || in == "-" {
			continue
		}
		if samePath(t.Path, in) {
			return exit.Usage("%s %s: that is one of this command's inputs; refusing to overwrite it", t.Flag, t.Path)
		}
		if statErr == nil {
			if ist, err := os.Stat(in); err == nil && os.SameFile(st, ist) {
				return exit.Usage("%s %s: that is the same file as the input %s; refusing to overwrite it", t.Flag, t.Path, in)
			}
		}
	}
	if statErr != nil {
		return nil // a new file
	}
	if st.IsDir() {
		return exit.Usage("%s %s: is a directory; give a file name", t.Flag, t.Path)
	}
	if t.Document && !t.Force && st.Mode().IsRegular() { // (reading a named pipe would wait for a writer)
		if kind := captureKind(t.Path); kind != "" {
			return exit.Usage("%s %s: the file is a %s capture; refusing to replace it with this command's output (add --force if you mean to)", t.Flag, t.Path, kind)
		}
	}
	if t.NoClobber && !t.Force && st.Size() > 0 {
		return exit.Usage("%s %s: the file exists (%d bytes); refusing to replace it (add --force if you mean to, or give a new name)", t.Flag, t.Path, st.Size())
	}
	return nil
}

func samePath(a, b string) bool {
	aa, err1 := filepath.Abs(a)
	bb, err2 := filepath.Abs(b)
	return err1 == nil && err2 == nil && aa == bb
}

// captureKind names the capture format path starts with, or "".
func captureKind(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	head := make([]byte, 4)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	for _, m := range captureMagics {
		if bytes.HasPrefix(head, m.magic) {
			return m.name
		}
	}
	return ""
}

// AtomicFile is a file being written under a temporary name beside its
// target. Commit renames it over the target; Abort (safe to defer, a no-op
// after Commit) removes it, leaving the target as it was.
//
// While it is open, SIGINT and SIGTERM remove it before the process dies
// (see partial.go), unless it was made with CreateKept. The process holds
// a lock on it, so that the next run writing the same target can tell a
// partial left by a killed run from one still being written.
type AtomicFile struct {
	*os.File
	target string
	done   bool
	kept   bool
	// inPlace: the target is not a regular file (a device such as
	// /dev/null, a named pipe a reader waits on, a socket): it is opened
	// and written where it is, as tcpdump -w does. A temporary file renamed
	// over it would replace the device or pipe with a regular file.
	inPlace bool
}

// Create starts writing path. The temporary file is in the same directory
// (so the rename cannot cross file systems) and hidden: ".NAME.*.partial".
// SIGINT or SIGTERM while it is open removes it (the process then dies of
// the signal, as it would have). A partial of the same target left by a
// run that was killed is reported on stderr.
func Create(path string) (*AtomicFile, error) { return create(path, false) }

// CreateKept is Create for a command that completes its file when told to
// stop (live -w, serve -w): SIGINT and SIGTERM leave the file to it.
func CreateKept(path string) (*AtomicFile, error) { return create(path, true) }

func create(path string, kept bool) (*AtomicFile, error) {
	path, special := resolveTarget(path)
	if special {
		f, err := os.OpenFile(path, os.O_WRONLY, 0)
		if err != nil {
			return nil, err
		}
		return &AtomicFile{File: f, target: path, kept: kept, inPlace: true}, nil
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	warnStale(dir, base)
	f, err := os.CreateTemp(dir, "."+base+".*.partial")
	if err != nil {
		return nil, err
	}
	lockPartial(f)
	af := &AtomicFile{File: f, target: path, kept: kept}
	if !kept {
		track(af)
	}
	return af, nil
}

// Target is the file Commit will replace.
func (f *AtomicFile) Target() string { return f.target }

// Commit closes the temporary file and renames it to the target. On error
// the temporary file is removed.
func (f *AtomicFile) Commit() error {
	if f.done {
		return errors.New("file already committed or aborted")
	}
	f.done = true
	if f.inPlace {
		return f.Close()
	}
	defer untrack(f)()    // no signal removes it between the rename and here
	err := f.Chmod(0o644) // CreateTemp makes 0600; the file is for the user to share
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), f.target)
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}

// Keep closes the temporary file and leaves it under its temporary name,
// not renamed (after a failure: it holds what was written until then).
func (f *AtomicFile) Keep() {
	if f.done {
		return
	}
	f.done = true
	if f.inPlace {
		f.Close()
		return
	}
	defer untrack(f)()
	f.Close()
}

// Abort closes and removes the temporary file; the target is untouched.
func (f *AtomicFile) Abort() {
	if f.done {
		return
	}
	f.done = true
	if f.inPlace {
		f.Close() // (never removed: it is the device or pipe itself)
		return
	}
	defer untrack(f)()
	f.Close()
	os.Remove(f.Name())
}

// resolveTarget is where create writes path: a symbolic link is followed,
// so that the file it names is replaced, not the link (when the link
// cannot be resolved, path itself); special reports that the file exists
// and is not a regular file, and is to be written in place.
func resolveTarget(path string) (target string, special bool) {
	if lst, err := os.Lstat(path); err == nil && lst.Mode()&os.ModeSymlink != 0 {
		if to, err := filepath.EvalSymlinks(path); err == nil {
			path = to
		} else if st, err := os.Stat(path); err == nil && !st.Mode().IsRegular() {
			return path, true // e.g. /dev/stdout, a link into /proc to a pipe
		}
	}
	st, err := os.Stat(path)
	return path, err == nil && !st.Mode().IsRegular() && !st.IsDir()
}

// WriteFile writes path through a buffered AtomicFile with write; when
// write fails nothing is renamed. "-" writes to stdout.
func WriteFile(path string, stdout io.Writer, write func(w io.Writer) error) error {
	if path == "-" {
		if stdout == nil {
			return errors.New(`"-" (stdout) is not possible here; give a file name`)
		}
		return write(stdout)
	}
	f, err := Create(path)
	if err != nil {
		return err
	}
	defer f.Abort()
	bw := bufio.NewWriterSize(f, 1<<16)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return f.Commit()
}

// ReplacedFlag registers a hidden flag that used to take a file and now
// fails with hint (e.g. "use -o FILE"), so an old command line stops with
// a usage error instead of doing something else.
func ReplacedFlag(f *pflag.FlagSet, name, shorthand, hint string) {
	f.VarP(replaced(hint), name, shorthand, hint)
	_ = f.MarkHidden(name)
}

type replaced string

func (r replaced) String() string   { return "" }
func (r replaced) Type() string     { return "string" }
func (r replaced) Set(string) error { return errors.New(string(r)) }

// CaptureFormat chooses a capture's format by its name: pcapng for
// .pcapng, pcap for .pcap and .cap; ok is false for any other name.
func CaptureFormat(path string) (f capture.Format, ok bool) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".pcapng":
		return capture.PCAPNG, true
	case ".pcap", ".cap":
		return capture.PCAP, true
	}
	return capture.PCAP, false
}
