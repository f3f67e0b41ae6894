package input

import (
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"sync/atomic"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
)

// CaptureFile is a capture file opened for reading by a command: errors
// name the file once, and the bytes read so far are counted (for progress).
type CaptureFile struct {
	R    *capture.Reader // pass this to flow.Run, which special-cases it
	Path string
	Size int64
	f    *os.File
	cr   *countingReader
}

// OpenCapture opens path as a pcap or pcapng capture, gzip- or
// zstd-compressed or not; "-" (capture.Stdin) reads standard input. The
// error is an *exit.Error (exit 2) that names the file once and says what
// is wrong in terms a person can act on (a directory, not a capture).
func OpenCapture(path string, opts capture.Options) (*CaptureFile, error) {
	f := os.Stdin
	var size int64
	if path != capture.Stdin {
		var err error
		if f, err = os.Open(path); err != nil {
			return nil, exit.IOError(path, err)
		}
		st, err := f.Stat()
		if err != nil {
			f.Close()
			return nil, exit.IOError(path, err)
		}
		if st.IsDir() {
			f.Close()
			return nil, &exit.Error{Code: exit.CodeUsage, Err: fmt.Errorf("%s: is a directory, not a capture file", path)}
		}
		size = st.Size()
	}
	cr := &countingReader{r: f}
	rd, err := capture.NewReaderWithOptions(cr, opts)
	if err != nil {
		if f != os.Stdin {
			f.Close()
		}
		return nil, exit.IOError(path, err)
	}
	return &CaptureFile{R: rd, Path: path, Size: size, f: f, cr: cr}, nil
}

// TraceServer makes the one server --server names the address a
// packet_trace.log's logging server is shown with (the log does not hold
// it); with none or several, the stand-in capture.DefaultTraceServer is.
func TraceServer(opts capture.Options, servers []netip.AddrPort) capture.Options {
	if len(servers) == 1 {
		opts.TraceServer = servers[0]
	}
	return opts
}

// Read is the number of bytes read from the file so far (compressed bytes
// for a compressed file, as Size is); safe to call while another goroutine
// reads.
func (c *CaptureFile) Read() int64 { return c.cr.n.Load() }

// Close releases the reader (its decompressor) and closes the file.
func (c *CaptureFile) Close() error {
	err := c.R.Close()
	if c.f != os.Stdin {
		if cerr := c.f.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// countingReader counts the bytes read, for the progress indicator; the
// count is atomic because with workers the reading runs on another
// goroutine.
type countingReader struct {
	r io.Reader
	n atomic.Int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// FirstPackets is src cut after its first n capture records (-c N): the
// record that would be the n+1st is not delivered, and the counts stay
// those of the first n records.
func FirstPackets(src flow.Source, n int) flow.Source {
	return &firstPackets{src: src, limit: n}
}

type firstPackets struct {
	src   flow.Source
	limit int
	done  bool
	stats capture.Stats // at the end
}

func (l *firstPackets) Next() (*capture.Packet, error) {
	if l.done {
		return nil, io.EOF
	}
	before := l.src.Stats()
	if before.Records >= l.limit {
		l.done, l.stats = true, before
		return nil, io.EOF
	}
	p, err := l.src.Next()
	if l.src.Stats().Records > l.limit {
		// This datagram was completed by a record past the limit (an IPv4
		// fragment, or the records skipped before it).
		l.done, l.stats = true, before
		return nil, io.EOF
	}
	return p, err
}

func (l *firstPackets) Stats() capture.Stats {
	if l.done {
		return l.stats
	}
	return l.src.Stats()
}

func (l *firstPackets) Incomplete() []capture.FragmentSetInfo { return l.src.Incomplete() }

// CheckCapturePath refuses, before a library opens it, a capture path that
// is a directory or missing, with the message OpenCapture gives.
func CheckCapturePath(path string) error {
	if path == capture.Stdin {
		return nil
	}
	st, err := os.Stat(path)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = &os.PathError{Op: "open", Path: pe.Path, Err: pe.Err} // the user asked to read it
		}
		return exit.IOError(path, err)
	}
	if st.IsDir() {
		return &exit.Error{Code: exit.CodeUsage, Err: fmt.Errorf("%s: is a directory, not a capture file", path)}
	}
	return nil
}

// ReadsPipe reports whether one of files is a pipe (or standard input that
// is not a regular file): a capture that arrives as it is made, whose
// lines should be printed as they come.
func ReadsPipe(files []string) bool {
	for _, path := range files {
		var st os.FileInfo
		var err error
		if path == capture.Stdin {
			st, err = os.Stdin.Stat()
		} else {
			st, err = os.Stat(path)
		}
		if err == nil && !st.Mode().IsRegular() {
			return true
		}
	}
	return false
}
