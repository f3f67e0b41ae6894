// This file makes a packet_trace.log a capture (the format PacketTrace):
// the text log of STBC-Dedicated-Server's packet logger, the form in which
// the community keeps its stock-server traffic. Its blocks become UDP/IPv4
// frames, built here, that go through the Decoder like any captured frame,
// so every reader of captures takes a log unchanged and `decode -w` writes
// them as a pcap (LINKTYPE_IPV4) that Wireshark opens.
//
// What the log does not say is made up, plainly: the logging process's own
// address is not in it, so it is a stand-in, 0.0.0.0:22101 for a server
// (the address a server binds), unless Options.TraceServer names the real
// one; a log written on a client has 0.0.0.0:0 for the client. The log
// holds game datagrams decrypted; they are encrypted again, so that what
// the frames carry is what was on the wire. Times are the logger's local
// time of day on the date of its header, read as UTC; a time earlier than
// the one before by more than twelve hours is the next day.
//
// A datagram the log shows only in part (a dump cut at 2048 bytes) is
// reported as damage (ErrCut) with what the log kept; so is a send that
// failed (rc < 0: ErrNotSent), which the log shows although it never
// reached the wire. Lines that belong to no block are damage too
// (ErrTraceLine), one report per run of them.

package capture

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"time"
)

// PacketTrace is the packet_trace.log format (read only).
const PacketTrace Format = PCAPNG + 1

// Damage classes of a packet_trace.log.
var (
	// ErrCut: the log kept only the first 2048 bytes of the datagram.
	ErrCut = errors.New("capture: damaged-cut")
	// ErrNotSent: the logged send failed (rc < 0); the datagram was never
	// on the wire.
	ErrNotSent = errors.New("capture: send failed, not on the wire")
	// ErrTraceLine: lines that are no part of any packet_trace.log block.
	ErrTraceLine = errors.New("capture: not packet_trace.log lines")
)

// DefaultTraceServer is the stand-in address of a logging server.
var DefaultTraceServer = netip.AddrPortFrom(netip.IPv4Unspecified(), 22101)

// traceClientStandIn is the stand-in address of a logging client.
var traceClientStandIn = netip.AddrPortFrom(netip.IPv4Unspecified(), 0)

// traceUnknownPeer stands for the peer of a block whose label is
// "unknown" (the logger had no address) or left out (quotations).
var traceUnknownPeer = netip.AddrPortFrom(netip.AddrFrom4([4]byte{0, 0, 0, 1}), 0)

// traceEncrypt is the game's cipher, which this package cannot import
// (the packages that hold it import this one); package dissect registers
// it. Reading a log's decrypted datagrams without it is an error.
var traceEncrypt func(dst, src []byte)

var errCipherMissing = errors.New("capture: re-encrypting a packet_trace.log or OBCTRACE needs the game cipher (import package dissect)")

// RegisterCipher gives the package the game's datagram cipher, to encrypt
// again the datagrams a packet_trace.log holds decrypted. Package dissect
// calls it when it is initialised.
func RegisterCipher(encrypt func(dst, src []byte)) { traceEncrypt = encrypt }

const (
	maxTraceLine  = 64 << 10 // longer lines are skipped as garbage
	maxUDPPayload = 65535 - 28
)

// sniffTraceLog reports whether b, the start of a file, is a
// packet_trace.log: its header, or a block (a quotation without header).
func sniffTraceLog(b []byte) bool {
	b = bytes.TrimPrefix(b, []byte("\xEF\xBB\xBF"))
	b = bytes.TrimLeft(b, " \t\r\n")
	if bytes.HasPrefix(b, []byte("# STBC Dedicated Server - Packet Trace")) {
		return true
	}
	if i := bytes.IndexByte(b, '\n'); i >= 0 {
		b = b[:i]
	}
	_, ok := parseTraceHeader(bytes.TrimRight(b, "\r"))
	return ok
}

// traceBlock is the block being read.
type traceBlock struct {
	h        traceHeader
	line     int
	off      int64
	section  traceSection
	dumped   bool // a dump section was seen
	wire     bool // the dump holds wire bytes (Hex:, Plaintext:)
	truncBy  int  // bytes the "... (N bytes truncated)" line says were left out; -1 if none
	data     []byte
	damage   error // the first thing found wrong with the block
	tooLarge bool
	// freeText counts the unindented lines still taken as the logger's
	// commentary (-1: any number). "Text:" and the lines of "DECODE:"
	// print strings of the datagram, whose line ends start lines of their
	// own: after "Text:", up to the dump that follows; after "DECODE:",
	// two for each line end the datagram holds, so that stray lines after
	// a block are still found.
	freeText int
	marked   bool // a part of the block has started (a marker line)
	bare     bool // the bytes came from bare rows (appendBareRow)
}

// appendBareRow takes a line of nothing but two-digit hex bytes as the
// next bytes of the block's datagram, and reports whether it did.
func (b *traceBlock) appendBareRow(t []byte) bool {
	n := 0
	for i := 0; i < len(t); i += 3 {
		if i+2 > len(t) || !isHex(t[i]) || !isHex(t[i+1]) || i+2 < len(t) && t[i+2] != ' ' {
			return false
		}
		n++
	}
	if n == 0 || n > 16 || len(b.data)+n > maxUDPPayload {
		return false
	}
	for i := 0; i < len(t); i += 3 {
		b.data = append(b.data, unhex(t[i])<<4|unhex(t[i+1]))
	}
	b.bare = true
	b.wire = b.data[0] == '\\'
	return true
}

// garbageRun is a run of lines that belong to no block.
type garbageRun struct {
	first, last  int
	off, lastOff int64 // file offsets of the first and the last line
}

type traceSource struct {
	in     *input
	server netip.AddrPort // stand-in or Options.TraceServer
	line   int            // lines read

	day     time.Time     // the header's date
	days    int           // midnights passed
	lastTOD time.Duration // time of day of the last timed block
	seenTOD bool
	last    time.Time // time of the last block

	side int8 // 0 unknown yet, 1 the log is a server's, -1 a client's

	blk     traceBlock
	inBlock bool
	// pending is a block header read and not yet started.
	pending    traceHeader
	hasPending bool
	lastSeq    int64 // the highest #seq read; 0 before the first block
	pendLn     int
	pendOff    int64
	garbage    garbageRun

	frameBuilder
}

func newTraceSource(in *input, opts Options) *traceSource {
	s := &traceSource{in: in, server: opts.TraceServer, day: time.Unix(0, 0).UTC()}
	if !s.server.IsValid() {
		s.server = DefaultTraceServer
	}
	s.blk.data = make([]byte, 0, 4096)
	return s
}

func (s *traceSource) iface(i int) (InterfaceInfo, bool) {
	if i != 0 {
		return InterfaceInfo{}, false
	}
	return InterfaceInfo{LinkType: RawIPv4, SnapLen: 65535, Name: "packet_trace.log"}, true
}

// ClientSide reports whether the log was written on a client, as its
// datagrams' peer ids say (known once the first game datagram is read).
func (s *traceSource) clientSide() bool { return s.side < 0 }

func (s *traceSource) next(rec *record) error {
	for {
		if s.hasPending {
			// A header read while a block was open: the block has been
			// handed out; stray lines before the header come next.
			if g := s.flushGarbage(); g != nil {
				return g
			}
			if g := s.seqGap(); g != nil {
				return g
			}
			s.hasPending = false
			s.start(s.pending, s.pendLn, s.pendOff)
		}
		line, off, err := s.readLine()
		if err != nil {
			if err != io.EOF {
				return err
			}
			if s.inBlock {
				s.inBlock = false
				return s.finish(rec)
			}
			if g := s.flushGarbage(); g != nil {
				return g
			}
			return io.EOF
		}
		t := bytes.TrimLeft(line, " \t")
		if h, ok := parseTraceHeader(t); ok {
			s.pending, s.hasPending, s.pendLn, s.pendOff = h, true, s.line, off
			if s.inBlock {
				s.inBlock = false
				return s.finish(rec)
			}
			continue
		}
		s.other(line, t, off)
		if g := &s.garbage; g.first != 0 && g.last > g.first && g.lastOff-g.off >= traceGarbageReport {
			// A long run is reported piece by piece, each at its end, so
			// that the Reader's cap on input without a readable record
			// (Options.MaxUnreadable) stops a file that is all garbage;
			// the block the run follows is handed out first.
			if s.inBlock {
				s.inBlock = false
				return s.finish(rec)
			}
			return s.flushGarbage()
		}
	}
}

// traceGarbageReport is how many bytes of a run of stray lines make one
// report.
const traceGarbageReport = 1 << 20

// seqGap reports the logger's blocks missing before the pending one: the
// logger numbers every datagram it logs (#seq), so a jump means blocks
// lost from the file (cut, or lines dropped in copying). Numbers that go
// back (another thread logged in between) are not gaps.
func (s *traceSource) seqGap() error {
	seq := s.pending.seq
	last := s.lastSeq
	if seq > s.lastSeq {
		s.lastSeq = seq
	}
	if last == 0 || seq <= last+1 {
		return nil
	}
	what := fmt.Sprintf("#%d", last+1)
	if seq-1 > last+1 {
		what = fmt.Sprintf("#%d-#%d", last+1, seq-1)
	}
	return &recordError{offset: s.pendOff, err: fmt.Errorf("%w: before line %d: %d logged datagrams missing from the file (%s)",
		ErrTraceLine, s.pendLn, seq-1-last, what)}
}

// start begins a block.
func (s *traceSource) start(h traceHeader, line int, off int64) {
	b := &s.blk
	*b = traceBlock{h: h, line: line, off: off, truncBy: -1, data: b.data[:0]}
	s.inBlock = true
}

// other takes a line that is not a block header; t is it without its
// indentation.
func (s *traceSource) other(line, t []byte, off int64) {
	b := &s.blk
	inDump := s.inBlock && (b.section == sectionDecrypted || b.section == sectionWire)
	switch {
	case len(t) == 0:
		if inDump {
			b.section = sectionDone
		}
		return
	case t[0] == '#':
		if d, ok := parseSessionStart(t); ok {
			s.day = time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
			s.lastTOD = time.Duration(d.Hour())*time.Hour + time.Duration(d.Minute())*time.Minute + time.Duration(d.Second())*time.Second
			s.seenTOD, s.days, s.last = true, 0, s.day.Add(s.lastTOD)
			s.lastSeq = 0 // a new session of the logger numbers from 1 again
		}
		if inDump {
			b.section = sectionDone
		}
		return
	}
	if !s.inBlock {
		s.addGarbage(off)
		return
	}
	if sec, ok := traceMarker(t); ok {
		b.marked = true
		if sec == sectionDecrypted || sec == sectionWire {
			if b.dumped {
				b.setDamage(ErrBadRecord, "line %d: a second dump in one block", s.line)
			}
			b.dumped, b.wire = true, sec == sectionWire
			b.section, b.freeText = sec, 0
			return
		}
		if b.section != sectionNone {
			b.section = sectionDone
		}
		switch {
		case bytes.HasPrefix(t, []byte("Text:")):
			b.freeText = -1
		case bytes.HasPrefix(t, []byte("DECODE:")):
			b.freeText = 2 * bytes.Count(b.data, []byte{'\n'})
		}
		return
	}
	if inDump {
		if n, ok := parseTruncated(t); ok {
			b.truncBy = n
			b.section = sectionDone
			return
		}
		row, ok := parseHexRow(t)
		switch {
		case !ok:
			b.setDamage(ErrBadRecord, "line %d: not a dump row", s.line)
			b.section = sectionDone
		case row.off != len(b.data):
			b.setDamage(ErrBadRecord, "line %d: dump row at offset %#x, expected %#x (rows missing or cut)", s.line, row.off, len(b.data))
			b.section = sectionDone
		case len(b.data)+row.n > maxUDPPayload:
			if !b.tooLarge {
				b.setDamage(ErrBadRecord, "line %d: the dump runs past the largest UDP datagram", s.line)
			}
			b.tooLarge = true
			b.section = sectionDone
		default:
			b.data = append(b.data, row.bytes[:row.n]...)
			if row.cut {
				b.setDamage(ErrBadRecord, "line %d: dump row cut short or garbled", s.line)
				b.section = sectionDone
			}
		}
		return
	}
	if !b.dumped && !b.marked && b.appendBareRow(t) {
		// A quotation that leaves out "Decrypted:" and the offsets (§9.3
		// of the disconnect-flow analysis: "#1765 S->C len=6 [ACK]", then
		// "  01 01 01 02 00 02"): the bytes right after the header. A
		// game datagram's, decrypted, unless it starts with '\'.
		return
	}
	if line[0] == ' ' || line[0] == '\t' {
		return // the logger's commentary (DECODE's lines, Decoded's pairs)
	}
	if b.freeText != 0 {
		if b.freeText > 0 {
			b.freeText--
		}
		return
	}
	s.addGarbage(off)
}

// traceMarker recognises the lines that start the parts of a block.
func traceMarker(t []byte) (traceSection, bool) {
	switch {
	case bytes.HasPrefix(t, []byte("Decrypted:")):
		return sectionDecrypted, true
	case bytes.HasPrefix(t, []byte("Hex:")), bytes.HasPrefix(t, []byte("Plaintext:")):
		return sectionWire, true
	case bytes.HasPrefix(t, []byte("Text:")), bytes.HasPrefix(t, []byte("Decoded:")), bytes.HasPrefix(t, []byte("DECODE:")):
		return sectionNone, true
	}
	return sectionNone, false
}

func (b *traceBlock) setDamage(class error, format string, args ...any) {
	if b.damage == nil {
		b.damage = fmt.Errorf("%w: "+format, append([]any{class}, args...)...)
	}
}

func (s *traceSource) addGarbage(off int64) {
	if s.garbage.first == 0 {
		s.garbage = garbageRun{first: s.line, off: off}
	}
	s.garbage.last, s.garbage.lastOff = s.line, off
}

// flushGarbage reports the run of garbage lines that has just ended.
func (s *traceSource) flushGarbage() error {
	g := s.garbage
	if g.first == 0 {
		return nil
	}
	s.garbage = garbageRun{}
	what := fmt.Sprintf("line %d", g.first)
	if g.last > g.first {
		what = fmt.Sprintf("lines %d-%d", g.first, g.last)
	}
	return &recordError{offset: g.lastOff, err: fmt.Errorf("%w: %s", ErrTraceLine, what)}
}

// finish turns the block read into a frame in rec.
func (s *traceSource) finish(rec *record) error {
	b := &s.blk
	h := &b.h
	when := s.timeOf(h)
	id := blockID{b.line, h.seq}
	if len(b.data) == 0 {
		msg := "no dump"
		if b.damage != nil {
			msg = b.damage.Error()
		}
		return &recordError{offset: b.off, isRecord: true, err: fmt.Errorf("%w: %s: %s", ErrBadRecord, id, msg)}
	}
	data := b.data
	damage := b.damage
	gameRaw := b.wire && data[0] != '\\'
	switch {
	case b.truncBy >= 0 || h.length > len(data) && len(data) == traceDumpCap:
		what := "the log kept"
		if gameRaw {
			what = "a game datagram over the logger's 2048-byte buffer, logged undecrypted; the log kept"
		}
		damage = fmt.Errorf("%w: %s: %s %d of its %d bytes", ErrCut, id, what, len(data), max(h.length, len(data)+b.truncBy))
	case damage != nil:
		damage = fmt.Errorf("%s: %w", id, damage)
	case len(data) != h.length:
		damage = fmt.Errorf("%w: %s: the dump holds %d bytes, the header says len=%d", ErrBadRecord, id, len(data), h.length)
	case h.hasRC && h.rc < 0:
		damage = fmt.Errorf("%w: %s: rc=%d", ErrNotSent, id, h.rc)
	}
	if !b.wire && traceEncrypt == nil {
		return errCipherMissing
	}
	if s.side == 0 {
		s.side = traceSide(h.sent, data, !b.wire || gameRaw)
	}
	local := s.server
	if s.side < 0 {
		local = traceClientStandIn
	}
	peer := traceUnknownPeer
	if h.hasPeer {
		peer = h.peer
	}
	src, dst := peer, local
	if h.sent {
		src, dst = local, peer
	}
	frame := s.frame(src, dst, len(data))
	if b.wire {
		copy(frame[udpFrameHeader:], data)
	} else {
		traceEncrypt(frame[udpFrameHeader:], data)
	}
	rec.data, rec.time, rec.linkType, rec.iface = frame, when, RawIPv4, 0
	rec.origLen, rec.offset, rec.damage = len(frame), b.off, damage
	if errors.Is(damage, ErrCut) {
		rec.origLen = udpFrameHeader + max(h.length, len(data)+b.truncBy)
	}
	return nil
}

// blockID names a block in messages: its line and the logger's number.
type blockID struct {
	line int
	seq  int64
}

func (id blockID) String() string { return fmt.Sprintf("line %d (#%d)", id.line, id.seq) }

// traceSide tells from a datagram whether the log is a server's (1) or a
// client's (-1), or cannot tell (0). A game datagram's byte 0 is the
// sender's peer id, 0x01 for the server; a GameSpy query goes from client
// to server.
func traceSide(sent bool, data []byte, game bool) int8 {
	fromServer := false
	switch {
	case game:
		fromServer = data[0] == 0x01
	case isGameSpyQuery(data):
	default:
		return 0
	}
	if sent == fromServer {
		return 1
	}
	return -1
}

func isGameSpyQuery(b []byte) bool {
	for _, q := range [...]string{`\status\`, `\basic\`, `\info\`, `\rules\`, `\players\`} {
		if bytes.HasPrefix(b, []byte(q)) {
			return true
		}
	}
	return false
}

// timeOf is the time of a block: the day of the header plus the midnights
// passed, and its time of day (or, without one, the time of the block
// before).
func (s *traceSource) timeOf(h *traceHeader) time.Time {
	if !h.hasTime {
		return s.last
	}
	if s.seenTOD && h.tod+12*time.Hour < s.lastTOD {
		s.days++
	}
	s.lastTOD, s.seenTOD = h.tod, true
	s.last = s.day.AddDate(0, 0, s.days).Add(h.tod)
	return s.last
}

// readLine returns the next line without its line end (LF or CRLF), and
// the file offset where it starts. A line longer than maxTraceLine is
// returned cut to that length, the rest of it skipped. At the end it
// returns io.EOF, or the I/O error that ended reading.
func (s *traceSource) readLine() ([]byte, int64, error) {
	in := s.in
	off := in.off
	scanned := 0
	for {
		b := in.buf[in.pos:in.end]
		if i := bytes.IndexByte(b[scanned:], '\n'); i >= 0 {
			n := scanned + i
			line := b[:n]
			in.discard(n + 1)
			s.line++
			return bytes.TrimSuffix(line, []byte("\r")), off, nil
		}
		scanned = len(b)
		if scanned >= maxTraceLine {
			return s.skipLong(off)
		}
		if in.err != nil {
			if len(b) == 0 {
				if in.err == io.EOF {
					return nil, off, io.EOF
				}
				return nil, off, in.err
			}
			in.discard(len(b))
			s.line++
			return bytes.TrimSuffix(b, []byte("\r")), off, nil
		}
		in.fill(len(b) + 4096)
	}
}

// skipLong consumes a line too long to be the logger's, up to and with its
// line end, and returns something that is no packet_trace.log line.
func (s *traceSource) skipLong(off int64) ([]byte, int64, error) {
	in := s.in
	for {
		b := in.buf[in.pos:in.end]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			in.discard(i + 1)
			break
		}
		in.discard(len(b))
		if in.err != nil {
			break
		}
		in.fill(4096)
	}
	s.line++
	return []byte("\x00"), off, nil
}

// Note says, for a file of a format that does not hold everything a
// capture does (packet_trace.log, OBCTRACE), what the Reader made up, so
// that a command can tell its user; it is "" for pcap and pcapng. The side
// of a packet_trace.log is known once its first game datagram is read.
func (r *Reader) Note() string {
	switch s := r.src.(type) {
	case *traceSource:
		if s.clientSide() {
			return "a packet_trace.log written on a client (its datagrams' peer ids say so): the client is shown as " +
				traceClientStandIn.String() + ", a stand-in; times are the logger's local clock, read as UTC"
		}
		return "a packet_trace.log: the logging server is shown as " + s.server.String() +
			" (the log does not hold its address; --server names it); times are the logger's local clock, read as UTC; game datagrams are encrypted again as on the wire"
	case *obcSource:
		return "an OBCTRACE (game messages only): each message is put in a datagram of its own, so transport figures are not the wire's; the server is " +
			s.server.String() + " and the client of slot N 0.0.1.N:5000N, stand-ins; time is the tick times 100 ms"
	}
	return ""
}
