// This file holds Reader, which pairs a file source (classic pcap or pcapng,
// detected by magic) with a Decoder, and the buffered input both file
// formats read through.

package capture

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/google/gopacket"
)

// Reader reads UDP datagrams from a pcap or pcapng file.
//
// The gopacket pcapgo readers are not used for reading: on hostile input they
// can panic (a pcapng if_tsresol of 64 or more divides by zero), allocate
// whatever a length field asks for, cannot tell a truncated last record from
// a clean end, and cannot resynchronise after a bad record. The two small
// record readers in pcap.go and pcapng.go do all of that.
type Reader struct {
	src        source
	in         *input
	format     Format
	dec        *Decoder
	closer     io.Closer
	eof        bool
	incomplete []FragmentSetInfo
}

// source yields the raw records of one file format.
type source interface {
	// next returns the next packet record, io.EOF at a clean end, a
	// *recordError for damage that the source has already stepped past, or
	// any other error for I/O failure.
	next() (record, error)
	// iface describes interface i, if it exists.
	iface(i int) (InterfaceInfo, bool)
}

// record is one packet record; data is valid until the next call to next.
type record struct {
	data     []byte
	time     time.Time
	linkType LinkType
	iface    int
	origLen  int   // length of the frame on the wire
	offset   int64 // file offset of the record header or block
}

// recordError is damage found by a source, before any decoding.
type recordError struct {
	offset   int64
	isRecord bool // the damaged thing was a packet record (so it gets a frame number)
	err      error
}

func (e *recordError) Error() string { return e.err.Error() }

// InterfaceInfo describes a capture interface: the one link type of a pcap
// file, or one interface of the current pcapng section.
type InterfaceInfo struct {
	LinkType LinkType
	SnapLen  int
	Name     string // pcapng if_name option, if present
}

// Open opens a capture file. Close the Reader when done.
func Open(path string) (*Reader, error) { return OpenWithOptions(path, Options{}) }

// OpenWithOptions opens a capture file with the given reassembly caps.
func OpenWithOptions(path string, opts Options) (*Reader, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	r, err := NewReaderWithOptions(f, opts)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r.closer = f
	return r, nil
}

// NewReader reads a capture from r with default Options.
func NewReader(r io.Reader) (*Reader, error) {
	return NewReaderWithOptions(r, Options{})
}

// NewReaderWithOptions reads a capture from r. It reads the file header
// straight away; the only errors are I/O errors and input that is not a
// capture file at all.
func NewReaderWithOptions(r io.Reader, opts Options) (*Reader, error) {
	in := &input{br: bufio.NewReaderSize(r, bufSize)}
	magic, err := in.peek(4)
	if len(magic) < 4 {
		if err == nil || err == io.EOF {
			err = errors.New("capture: file too short to be a capture")
		}
		return nil, err
	}
	rd := &Reader{in: in, dec: NewDecoder(opts)}
	switch m := binary.LittleEndian.Uint32(magic); {
	case m == ngBlockSHB:
		rd.format = PCAPNG
		rd.src, err = newNgSource(in)
	case isPcapMagic(m):
		rd.format = PCAP
		rd.src, err = newPcapSource(in)
	default:
		return nil, fmt.Errorf("capture: not a pcap or pcapng file (magic %#08x)", m)
	}
	if err != nil {
		return nil, err
	}
	return rd, nil
}

// Close closes the file opened by Open; for NewReader it does nothing.
func (r *Reader) Close() error {
	if r.closer == nil {
		return nil
	}
	return r.closer.Close()
}

// Buffered is the number of file bytes already read into memory and not yet
// consumed. A consumer that wants to read ahead (flow.Run decrypts two
// datagrams at once) does so only while it is positive, so that a capture
// arriving on a pipe is never held back waiting for the next packet.
func (r *Reader) Buffered() int { return r.in.br.Buffered() }

// Format reports whether the file is pcap or pcapng.
func (r *Reader) Format() Format { return r.format }

// Interface describes interface i (for pcap, interface 0 is the file's link
// type; for pcapng, the interfaces of the current section).
func (r *Reader) Interface(i int) (InterfaceInfo, bool) { return r.src.iface(i) }

// Stats returns the counters so far.
func (r *Reader) Stats() Stats { return r.dec.Stats() }

// Incomplete lists the fragment sets that were unfinished at the end of the
// file. It is empty until Next has returned io.EOF.
func (r *Reader) Incomplete() []FragmentSetInfo { return r.incomplete }

// Next returns the next UDP datagram. The Packet and its Payload are valid
// until the next call to Next.
//
// At the end of the file it returns io.EOF. Damage to a record is returned as
// a *PacketError; call Next again to continue after it. Any other error is an
// I/O error from the underlying reader.
func (r *Reader) Next() (*Packet, error) {
	if r.eof {
		return nil, io.EOF
	}
	for {
		rec, err := r.src.next()
		if err != nil {
			if err == io.EOF {
				r.eof = true
				r.incomplete = r.dec.Flush()
				return nil, io.EOF
			}
			if re, ok := err.(*recordError); ok {
				frame := 0
				if re.isRecord {
					r.dec.stats.Records++
					frame = r.dec.stats.Records
				}
				r.dec.stats.Damaged++
				return nil, &PacketError{Frame: frame, Offset: re.offset, Err: re.err}
			}
			return nil, err
		}
		ci := gopacket.CaptureInfo{Timestamp: rec.time, CaptureLength: len(rec.data), Length: rec.origLen, InterfaceIndex: rec.iface}
		p, err := r.dec.Decode(rec.linkType, rec.data, ci)
		if err != nil {
			if pe, ok := err.(*PacketError); ok {
				pe.Offset = rec.offset
			}
			return nil, err
		}
		if p != nil {
			return p, nil
		}
	}
}

// bufSize is the read buffer size. Resynchronisation peeks at a whole
// candidate record plus the header after it, so it must exceed maxScanRecord
// by a margin.
const bufSize = 512 << 10

// maxScanRecord is the largest record or block that resynchronisation will
// accept as a candidate (the usual maximum snap length, plus headers).
const maxScanRecord = 262144 + 64

// input is the buffered file with the offset of the next unread byte.
type input struct {
	br  *bufio.Reader
	off int64
	buf []byte // record buffer, reused
}

// peek returns the next n bytes without consuming them. Near the end of the
// file it returns fewer, with io.EOF.
func (in *input) peek(n int) ([]byte, error) { return in.br.Peek(n) }

func (in *input) discard(n int) {
	k, _ := in.br.Discard(n)
	in.off += int64(k)
}

// read consumes n bytes into the reused record buffer. If the file ends early
// it returns what there was and io.ErrUnexpectedEOF (or io.EOF if nothing).
// The buffer grows only as data actually arrives, so a lying length field in
// a short file cannot force a large allocation.
func (in *input) read(n int) ([]byte, error) {
	buf := in.buf[:0]
	for len(buf) < n {
		step := n - len(buf)
		if len(buf)+step > cap(buf) {
			step = min(step, max(len(buf), 64<<10))
			buf = slices.Grow(buf, step)
		}
		k, err := io.ReadFull(in.br, buf[len(buf):len(buf)+step])
		buf = buf[:len(buf)+k]
		in.off += int64(k)
		if err != nil {
			in.buf = buf
			if err == io.EOF && len(buf) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return buf, err
		}
	}
	in.buf = buf
	return buf, nil
}

// isEOF reports whether err means the file simply ended.
func isEOF(err error) bool { return err == io.EOF || err == io.ErrUnexpectedEOF }
