// This file holds Reader, which pairs a file source (classic pcap or pcapng,
// detected by magic) with a Decoder, and the buffered input both file
// formats read through.

package capture

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"time"
)

// Reader reads UDP datagrams from a pcap or pcapng file.
//
// The gopacket pcapgo readers are not used for reading: on hostile input they
// can panic (a pcapng if_tsresol of 64 or more divides by zero), allocate
// whatever a length field asks for, cannot tell a truncated last record from
// a clean end, and cannot resynchronise after a bad record. The two small
// record readers in pcap.go and pcapng.go do all of that.
type Reader struct {
	src  source
	pcap *pcapSource // src when it is one, for Next's fused path (pcapfast.go)
	// plainLast says the last call of Next counted one record and one UDP
	// datagram and changed no other counter (see PlainLast).
	plainLast bool
	// fusedAt, when not -1, is where the record that nextPcapUDP took
	// last lies in the buffer; rec is built from it when asked for
	// (fusedRecord).
	fusedAt     int
	in          *input
	format      Format
	dec         *Decoder
	rec         record // the record being decoded, reused
	closer      io.Closer
	compression Compression
	eof         bool
	incomplete  []FragmentSetInfo

	// bounds (limits.go)
	compressed     *countingReader // under the decompressor; nil when not compressed
	maxUnreadable  int64
	lastGood       int64 // input offset just past the last readable record
	interrupt      <-chan struct{}
	polls          uint
	wasInterrupted bool
}

// source yields the raw records of one file format.
type source interface {
	// next fills rec with the next packet record. It returns io.EOF at a
	// clean end, a *recordError for damage that the source has already
	// stepped past, or any other error for I/O failure.
	next(rec *record) error
	// iface describes interface i, if it exists.
	iface(i int) (InterfaceInfo, bool)
}

// record is one packet record; data lies in the input buffer and is valid
// until the next call to next.
type record struct {
	data     []byte
	time     time.Time
	linkType LinkType
	iface    int
	origLen  int   // length of the frame on the wire
	offset   int64 // file offset of the record header or block
	// damage, set by a source that builds its frames (a packet_trace.log),
	// is what is wrong with a frame that decodes all the same: the
	// datagram is handed out with it, as a PacketError.
	damage error
}

// recordError is damage found by a source, before any decoding.
type recordError struct {
	offset   int64
	isRecord bool // the damaged thing was a packet record (so it gets a frame number)
	err      error
	time     time.Time // the record's time stamp, when its header was read and plausible
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

// OpenWithOptions opens a capture file with the given reassembly caps; the
// path Stdin ("-") reads standard input. The file may be gzip- or
// zstd-compressed (see NewReaderWithOptions).
func OpenWithOptions(path string, opts Options) (*Reader, error) {
	f, closer, err := openPath(path)
	if err != nil {
		return nil, err
	}
	r, err := NewReaderWithOptions(f, opts)
	if err != nil {
		if closer != nil {
			closer.Close()
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r.closer = closeAll{r.closer, closer}
	return r, nil
}

// NewReader reads a capture from r with default Options.
func NewReader(r io.Reader) (*Reader, error) {
	return NewReaderWithOptions(r, Options{})
}

// NewReaderWithOptions reads a capture from r. It reads the file header
// straight away; the only errors are I/O errors and input that is not a
// capture file at all. A gzip or zstd stream (known by its magic) is
// decompressed on the way; Close then releases the decompressor.
func NewReaderWithOptions(r io.Reader, opts Options) (*Reader, error) {
	size := -1 // what the source says it holds, read before decompress wraps it
	if l, ok := r.(interface{ Len() int }); ok {
		size = l.Len()
	}
	counted := &countingReader{r: r}
	r, compression, closer, err := decompress(counted)
	if err != nil {
		return nil, err
	}
	if compression != Uncompressed {
		size = -1
	}
	rd, err := newReader(r, opts, size)
	if err != nil {
		if closer != nil {
			closer.Close()
		}
		if compression != Uncompressed {
			err = fmt.Errorf("%v-compressed: %w", compression, err)
		}
		return nil, err
	}
	rd.compression, rd.closer = compression, closer
	if compression != Uncompressed {
		rd.compressed = counted
	}
	return rd, nil
}

func newReader(r io.Reader, opts Options, size int) (*Reader, error) {
	in := newInput(r, size)
	magic, err := in.peek(4)
	if len(magic) < 4 {
		if err == nil || err == io.EOF {
			err = errors.New("capture: file too short to be a capture")
		}
		return nil, err
	}
	rd := &Reader{in: in, dec: NewDecoder(opts), interrupt: opts.Interrupt, maxUnreadable: opts.MaxUnreadable, fusedAt: -1}
	if rd.maxUnreadable == 0 {
		rd.maxUnreadable = DefaultMaxUnreadable
	}
	switch m := binary.LittleEndian.Uint32(magic); {
	case m == ngBlockSHB:
		rd.format = PCAPNG
		rd.src, err = newNgSource(in)
	case isPcapMagic(m):
		rd.format = PCAP
		var s *pcapSource
		if s, err = newPcapSource(in); err == nil {
			rd.src, rd.pcap = s, s
		}
	default:
		if head, _ := in.peek(512); isOBCTrace(head) {
			rd.format = OBCTrace
			rd.src, err = newOBCSource(in, opts)
			break
		} else if sniffTraceLog(head) {
			rd.format = PacketTrace
			rd.src = newTraceSource(in, opts)
			break
		}
		return nil, fmt.Errorf("capture: not a pcap or pcapng file, nor a packet_trace.log or OBCTRACE (magic %#08x)", m)
	}
	if err != nil {
		return nil, err
	}
	rd.lastGood = in.off // the span counts from the end of the file header
	return rd, nil
}

// Close closes the file opened by Open and the decompressor of a compressed
// capture; for an uncompressed NewReader it does nothing.
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
func (r *Reader) Buffered() int { return r.in.end - r.in.pos }

// Hold makes the Payloads of the Packets that Next returns from now on stay
// valid until Release, except those of reassembled datagrams (Packet.
// Reassembled), so that a consumer reading ahead (flow.Run) need not copy
// them. Without it a Payload is only valid until the next call to Next.
func (r *Reader) Hold() {
	if h, ok := r.src.(holder); ok {
		h.hold()
		return
	}
	r.in.held, r.in.handed, r.in.heldFrom = true, false, r.in.pos
}

// holder is a source that builds the frames it hands out (rather than
// handing out the file's bytes), and so keeps them itself while held.
type holder interface {
	hold()
	release()
}

// Release ends Hold: the Payloads it kept are only valid until the next call
// to Next.
func (r *Reader) Release() {
	if h, ok := r.src.(holder); ok {
		h.release()
	}
	r.in.held, r.in.swapped = false, false
}

// Format reports whether the file is pcap or pcapng.
func (r *Reader) Format() Format { return r.format }

// Interface describes interface i (for pcap, interface 0 is the file's link
// type; for pcapng, the interfaces of the current section).
func (r *Reader) Interface(i int) (InterfaceInfo, bool) { return r.src.iface(i) }

// Stats returns the counters so far.
func (r *Reader) Stats() Stats { return r.dec.stats }

// StatsTo copies the counters so far to *s, which is cheaper than Stats
// where a copy is kept for every datagram (as flow.Run does while it reads
// ahead). It copies field by field: Next has just incremented counters
// with 8-byte stores, and a whole-struct copy reads them back with 16-byte
// loads, which the CPU cannot forward from those stores (a store-forwarding
// stall: perf annotate put a fifth of flow.Run's own samples on it).
// BenchmarkStatsTo compares the two; TestStatsToCopiesEveryField holds it
// to Stats.
func (r *Reader) StatsTo(s *Stats) {
	c := &r.dec.stats
	s.Records, s.UDP, s.NonIPv4, s.NonUDP = c.Records, c.UDP, c.NonIPv4, c.NonUDP
	s.TCP, s.UnknownLink, s.Damaged, s.BadChecksums = c.TCP, c.UnknownLink, c.Damaged, c.BadChecksums
	s.FragmentsSeen, s.Reassembled, s.FragmentsEvicted = c.FragmentsSeen, c.Reassembled, c.FragmentsEvicted
	s.FragmentsExpired, s.FragmentsIncomplete = c.FragmentsExpired, c.FragmentsIncomplete
}

// PlainLast reports that the last call of Next changed the counters
// (Stats) by one record and one UDP datagram and nothing else, as it does
// for the usual datagram; false means they may have changed otherwise. A
// consumer keeping the counters as they were before each datagram it
// reads ahead (flow.Run) then need not copy them all.
func (r *Reader) PlainLast() bool { return r.plainLast }

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
		r.plainLast = false
		return nil, io.EOF
	}
	skipped := false
	for {
		if r.interrupted() {
			r.plainLast = false
			r.eof = true
			r.incomplete = r.dec.Flush()
			return nil, io.EOF
		}
		if r.pcap != nil {
			if p := r.nextPcapUDP(r.pcap); p != nil {
				// One record, one datagram, no fragments waiting (so
				// none expired): plain, unless records were skipped
				// before it in this call.
				r.plainLast, r.in.handed = !skipped, true
				return p, nil
			}
		}
		// Any record this iteration reads takes the general path, which
		// does not tell how the counters change.
		r.plainLast, skipped, r.fusedAt = false, true, -1
		rec := &r.rec
		err := r.src.next(rec)
		if err != nil {
			if err == io.EOF {
				r.eof = true
				r.incomplete = r.dec.Flush()
				return nil, io.EOF
			}
			if re, ok := err.(*recordError); ok {
				r.dec.rec = nil // no record to show (LastRecord)
				if pe := r.checkSpan(re.offset, re.err); pe != nil {
					return nil, pe
				}
				frame := 0
				if re.isRecord {
					r.dec.stats.Records++
					frame = r.dec.stats.Records
				}
				r.dec.stats.Damaged++
				return nil, &PacketError{Frame: frame, Offset: re.offset, Err: re.err, Time: re.time}
			}
			return nil, err
		}
		p, pe := r.dec.decode(rec)
		if pe != nil {
			if gu := r.checkSpan(rec.offset, pe.Err); gu != nil {
				r.dec.stats.Damaged-- // counted once, as the give-up
				return nil, gu
			}
			pe.Offset = rec.offset
			return nil, pe
		}
		r.lastGood = r.in.off
		if p != nil {
			r.in.handed = true
			if rec.damage != nil {
				r.dec.stats.Damaged++
				return nil, &PacketError{Frame: p.Frame, Offset: rec.offset, Err: rec.damage, Packet: p}
			}
			return p, nil
		}
	}
}

// bufSize is the initial read buffer size. Resynchronisation peeks at a
// whole candidate record plus the header after it, so it must exceed
// maxScanRecord by a margin.
const bufSize = 512 << 10

// maxScanRecord is the largest record or block that resynchronisation will
// accept as a candidate (the usual maximum snap length, plus headers).
const maxScanRecord = 262144 + 64

// input is the buffered file. Records are parsed where they lie in the
// buffer: one large read serves thousands of them, and nothing is copied
// per record. The sources look into buf[pos:end] directly for a record that
// is all there, and call peek and read for the rest.
type input struct {
	r        io.Reader
	buf      []byte
	pos, end int   // buf[pos:end] is read but not yet consumed
	off      int64 // file offset of buf[pos]
	err      error // what ended reading: io.EOF or an I/O error

	// While held (see Reader.Hold), once a Packet has been handed out
	// (handed), fill leaves the bytes from heldFrom on where they are,
	// and reads into the free room before them or after the data (as it
	// can when a batch of held datagrams meets the buffer's end).
	// Otherwise it moves the tail to spare, a second buffer, and swaps
	// the two; a second swap in the same hold takes a new buffer, as
	// spare then holds handed-out bytes too.
	held     bool
	handed   bool
	heldFrom int // pos at Hold, or 0 after the buffer's bytes moved
	swapped  bool
	spare    []byte
}

// newInput sizes the buffer down to size, what the source said it holds
// (-1 when it did not), when that is less (a capture in memory, as the
// fuzz targets read: a whole bufSize per capture of a few hundred bytes
// made them slow).
func newInput(r io.Reader, size int) *input {
	n := bufSize
	if size >= 0 {
		n = min(n, max(size+1, 4096))
	}
	return &input{r: r, buf: make([]byte, n)}
}

// peek returns the next n bytes without consuming them. Near the end of the
// file it returns fewer, with io.EOF (or the I/O error that stopped
// reading). The bytes stay valid until the next peek or read.
func (in *input) peek(n int) ([]byte, error) {
	if in.end-in.pos < n {
		in.fill(n)
		if in.end-in.pos < n {
			return in.buf[in.pos:in.end], in.err
		}
	}
	return in.buf[in.pos : in.pos+n], nil
}

// discard consumes n bytes, which must have been peeked.
func (in *input) discard(n int) {
	in.pos += n
	in.off += int64(n)
}

// read consumes n bytes and returns them in place, valid until the next
// peek or read. If the file ends early it consumes and returns what there
// was, with io.ErrUnexpectedEOF (or io.EOF if nothing).
func (in *input) read(n int) ([]byte, error) {
	b, err := in.peek(n)
	in.discard(len(b))
	if err == io.EOF && len(b) > 0 {
		err = io.ErrUnexpectedEOF
	}
	return b, err
}

// fill reads until n bytes are buffered or reading ends. The buffer grows
// past its initial size only for a record that does not fit, and only by
// doubling once it is full of data that actually arrived, so a lying
// length field in a short file cannot force a large allocation.
func (in *input) fill(n int) {
	if in.err != nil {
		return // reading has ended: nothing to make room for
	}
	limit := len(in.buf) // what this fill may read into
	if in.pos > 0 {
		// Move the unread tail to the front; it is short next to the
		// buffer, so this costs little per read.
		to := in.buf
		if in.held && in.handed {
			// The bytes from heldFrom to pos stay where they are. Read
			// into the larger free room: after the data (an earlier
			// refill stopped below the bytes held then), or before
			// heldFrom, the tail moved there. The two make the buffer
			// less the held bytes and the tail, so with batches of an
			// eighth of it no read is much under half of it. When
			// neither room takes the record, take the spare.
			tail := in.end - in.pos
			after, before := len(in.buf)-in.end, in.heldFrom
			if before < tail {
				before = 0
			}
			switch {
			case after >= before && after >= n-tail:
				to = nil
			case before > after && before >= n:
				limit = before
			default:
				if in.swapped || len(in.spare) < len(in.buf) {
					in.spare = make([]byte, len(in.buf))
				}
				to, in.spare = in.spare, in.buf
				in.swapped = true
			}
		}
		if to != nil {
			in.end = copy(to, in.buf[in.pos:in.end])
			in.buf, in.pos, in.heldFrom = to, 0, 0
		}
	}
	empty := 0
	for in.end-in.pos < n && in.err == nil {
		if in.end == limit {
			// Reached only with pos 0: the other cases leave room
			// enough. A new array leaves held bytes where they are too.
			in.buf = slices.Grow(in.buf, min(n, 2*len(in.buf))-len(in.buf))
			in.buf = in.buf[:cap(in.buf)]
			limit = len(in.buf)
		}
		k, err := in.r.Read(in.buf[in.end:limit])
		in.end += k
		switch {
		case err != nil:
			in.err = err
		case k > 0:
			empty = 0
		default:
			// A reader that keeps returning nothing would hang us.
			if empty++; empty >= 100 {
				in.err = io.ErrNoProgress
			}
		}
	}
}

// fileOrder is the byte order of a capture file (or pcapng section). It is a
// flag rather than a binary.ByteOrder because a call through that interface
// cannot be inlined, and every record has several fields to read.
type fileOrder struct{ big bool }

func (o fileOrder) Uint16(b []byte) uint16 {
	if o.big {
		return binary.BigEndian.Uint16(b)
	}
	return binary.LittleEndian.Uint16(b)
}

func (o fileOrder) Uint32(b []byte) uint32 {
	if o.big {
		return binary.BigEndian.Uint32(b)
	}
	return binary.LittleEndian.Uint32(b)
}

func (o fileOrder) Uint64(b []byte) uint64 {
	if o.big {
		return binary.BigEndian.Uint64(b)
	}
	return binary.LittleEndian.Uint64(b)
}

// isEOF reports whether err means the file simply ended.
func isEOF(err error) bool { return err == io.EOF || err == io.ErrUnexpectedEOF }
