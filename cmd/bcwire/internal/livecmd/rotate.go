package livecmd

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/output"
	"github.com/bcwire/bcwire/dissect/capture"
)

// ringOptions are the -b conditions, as dumpcap's ring buffer takes them.
type ringOptions struct {
	FileSize int64         // switch once a file reaches this many bytes (filesize:kB, 1 kB = 1000 bytes)
	Duration time.Duration // switch once a file has been open this long (duration:SEC)
	Files    int           // keep only the last N files (files:N); 0 keeps all
}

func (r ringOptions) rotating() bool { return r.FileSize > 0 || r.Duration > 0 }

// parseRing reads -b values: filesize:kB, duration:SEC, files:N.
func parseRing(vals []string) (ringOptions, error) {
	var r ringOptions
	for _, v := range vals {
		key, num, ok := strings.Cut(v, ":")
		n, err := strconv.ParseInt(num, 10, 64)
		if !ok || err != nil || n <= 0 {
			return r, exit.Usage("-b %q: use filesize:kB, duration:SEC or files:N with a positive whole number", v)
		}
		switch key {
		case "filesize":
			if n > 1<<40 {
				return r, exit.Usage("-b %q: too big", v)
			}
			r.FileSize = n * 1000
		case "duration":
			r.Duration = time.Duration(n) * time.Second
		case "files":
			r.Files = int(n)
		default:
			return r, exit.Usage("-b %q: use filesize:kB, duration:SEC or files:N", v)
		}
	}
	if r.Files > 0 && !r.rotating() {
		return r, exit.Usage("-b files:N needs -b filesize:kB or -b duration:SEC (when to switch files)")
	}
	return r, nil
}

// captureFile is where a capture file's bytes go: an AtomicFile, or a
// failing one in tests.
type captureFile interface {
	io.Writer
	Commit() error
	Abort()
	Keep() // close, and leave the temporary file where it is
	Name() string
}

// ringWriter writes the -w capture, switching to a new file when a -b
// condition is met, as dumpcap does: FILE's name with a five-digit counter
// and the local start time (prefix_00001_20261125183000.pcapng). Without
// -b it writes FILE itself. Every file grows under a temporary name and is
// renamed when complete. A frame goes to exactly one file: the switch
// happens between two writes.
type ringWriter struct {
	path  string
	ring  ringOptions
	link  capture.LinkType
	iface string
	// create opens a file (output.Create; tests inject failures).
	create func(path string) (captureFile, error)
	// onSwitch is told of every completed file (stderr note).
	onSwitch func(name string, frames int)

	f       captureFile
	w       *capture.Writer
	counted *countingWriter
	start   time.Time // wall clock when the current file was opened
	size    int64     // bytes of the current file, header and records
	frames  int       // frames in the current file
	counter int
	done    []string // completed files, oldest first (for files:N)
	err     error    // the first error; nothing is written after it

	// ends are the end offsets in the current file of its frames not yet
	// known to be in it (still in the writer's buffer), oldest first;
	// written counts the frames known to be in files.
	ends    []int64
	written int
	// partial is the temporary file kept after a write failed: it holds
	// the frames written until then.
	partial string
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// format is the -w name's: pcap for .pcap and .cap, as decode -w and
// synth -w choose; pcapng (dumpcap's default) for any other name.
func (r *ringWriter) format() capture.Format {
	if f, ok := output.CaptureFormat(r.path); ok {
		return f
	}
	return capture.PCAPNG
}

// recordSize is the bytes a frame takes in the file: a pcap record header,
// or a pcapng enhanced packet block padded to 32 bits.
func (r *ringWriter) recordSize(frame []byte) int64 {
	if r.format() == capture.PCAP {
		return int64(16 + len(frame))
	}
	return int64(32 + len(frame) + (-len(frame) & 3))
}

// name is the file the current counter writes.
func (r *ringWriter) name(start time.Time) string {
	if !r.ring.rotating() {
		return r.path
	}
	ext := filepath.Ext(r.path)
	return fmt.Sprintf("%s_%05d_%s%s", strings.TrimSuffix(r.path, ext), r.counter, start.Local().Format("20060102150405"), ext)
}

// open starts the next file.
func (r *ringWriter) open(now time.Time) error {
	r.counter++
	f, err := r.create(r.name(now))
	if err != nil {
		return err
	}
	r.counted = &countingWriter{w: f}
	w, err := capture.NewWriterInterface(r.counted, r.format(), r.link, r.iface)
	if err == nil {
		err = w.Flush() // the header, so that its size is counted
	}
	if err != nil {
		f.Abort()
		return err
	}
	r.f, r.w, r.start, r.size, r.frames, r.ends = f, w, now, r.counted.n, 0, r.ends[:0]
	return nil
}

// settle drops the frames the file now holds whole from ends.
func (r *ringWriter) settle() {
	n := 0
	for n < len(r.ends) && r.ends[n] <= r.counted.n {
		n++
	}
	r.written += n
	r.ends = r.ends[:copy(r.ends, r.ends[n:])]
}

// fail records the first error and keeps the current file's temporary
// name with what reached it: after a full disk, the packets written until
// then are not thrown away with the rest.
func (r *ringWriter) fail(err error) error {
	if r.err == nil {
		r.err = err
	}
	if r.f != nil {
		r.settle()
		r.partial = r.f.Name()
		r.f.Keep()
		r.f = nil
	}
	return r.err
}

// Written is the number of frames known to be in the files: completed,
// or in the temporary file kept after a failure.
func (r *ringWriter) Written() int { return r.written }

// Partial is the temporary file kept after a write failed ("" if none).
func (r *ringWriter) Partial() string { return r.partial }

// Start opens the first file, so that a bad path fails before capturing.
func (r *ringWriter) Start(now time.Time) error {
	if r.err == nil && r.f == nil {
		r.err = r.open(now)
	}
	return r.err
}

// WriteFrame writes one captured frame, switching files first when the
// current one is full or old enough.
func (r *ringWriter) WriteFrame(now time.Time, ts time.Time, frame []byte) error {
	if r.err != nil {
		return r.err
	}
	if r.f != nil && r.frames > 0 && r.due(now, r.recordSize(frame)) {
		r.err = r.next()
	}
	if r.err == nil && r.f == nil {
		r.err = r.open(now)
	}
	if r.err != nil {
		return r.err
	}
	if err := r.w.WriteRaw(ts, frame); err != nil {
		return r.fail(err)
	}
	r.size += r.recordSize(frame)
	r.frames++
	r.ends = append(r.ends, r.size)
	if r.counted.n >= r.ends[0] {
		r.settle()
	}
	return nil
}

// due reports whether the current file should be closed before adding a
// record of add bytes: past the size (dumpcap switches once a file reaches
// it; so do we, before the record that would cross it) or the duration.
func (r *ringWriter) due(now time.Time, add int64) bool {
	return (r.ring.FileSize > 0 && r.size+add > r.ring.FileSize) ||
		(r.ring.Duration > 0 && now.Sub(r.start) >= r.ring.Duration)
}

// Tick switches files on the duration condition even when no frame comes
// (as dumpcap does, so a quiet hour still gets its file), and flushes.
func (r *ringWriter) Tick(now time.Time) error {
	if r.err != nil || r.f == nil {
		return r.err
	}
	if r.ring.Duration > 0 && now.Sub(r.start) >= r.ring.Duration {
		r.err = r.next()
		if r.err == nil {
			r.err = r.open(now)
		}
		return r.err
	}
	if err := r.w.Flush(); err != nil {
		return r.fail(err)
	}
	r.settle()
	return r.err
}

// next completes the current file and removes the oldest beyond files:N.
func (r *ringWriter) next() error {
	if err := r.finish(); err != nil {
		return err
	}
	r.f = nil
	return nil
}

func (r *ringWriter) finish() error {
	if err := r.w.Flush(); err != nil {
		return r.fail(err)
	}
	target := r.name(r.start)
	if err := r.f.Commit(); err != nil { // the file is gone
		r.written -= r.frames - len(r.ends)
		r.f, r.ends = nil, r.ends[:0]
		return err
	}
	r.written += len(r.ends) // flushed: all of them are in it
	r.ends = r.ends[:0]
	if r.onSwitch != nil {
		r.onSwitch(target, r.frames)
	}
	r.done = append(r.done, target)
	if r.ring.Files > 0 {
		for len(r.done) > r.ring.Files {
			if err := os.Remove(r.done[0]); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			r.done = r.done[1:]
		}
	}
	return nil
}

// Close completes the current file.
func (r *ringWriter) Close() error {
	if r.f == nil {
		return r.err
	}
	if r.err != nil {
		r.f.Abort()
		r.f = nil
		return r.err
	}
	r.err = r.finish()
	r.f = nil
	return r.err
}

// Abort removes the file being written (after a failure).
func (r *ringWriter) Abort() {
	if r.f != nil {
		r.f.Abort()
		r.f = nil
	}
}

// Current is the temporary name of the file being written.
func (r *ringWriter) Current() string {
	if r.f == nil {
		return ""
	}
	return r.f.Name()
}

// Files are the completed files still on disk, oldest first.
func (r *ringWriter) Files() []string { return r.done }

// explainWriteError words a write failure for people: a full disk says so.
func explainWriteError(err error) error {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EDQUOT) {
		return fmt.Errorf("the disk is full (%w): free some space, or keep fewer files with -b files:N", err)
	}
	return err
}

// createAtomic creates a -w file: kept on SIGINT and SIGTERM, which end the
// capture, and the file is then completed.
func createAtomic(path string) (captureFile, error) { return output.CreateKept(path) }

// stdoutCapture is -w -: the capture goes to standard output as it is
// written, and there is nothing to rename.
type stdoutCapture struct{ io.Writer }

func (stdoutCapture) Commit() error { return nil }
func (stdoutCapture) Abort()        {}
func (stdoutCapture) Keep()         {}
func (stdoutCapture) Name() string  { return "standard output" }
