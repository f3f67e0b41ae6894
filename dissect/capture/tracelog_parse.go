// This file reads the lines of a packet_trace.log, the text log that the
// in-process packet logger of STBC-Dedicated-Server writes beside a stock
// dedicated server (its PktTraceOpen, PktLog and PktHexDump). One block per
// datagram the logging process sent or received:
//
//	[hh:mm:ss.mmm] #seq S->C Peer#N(a.b.c.d:port) len=N rc=N [label]
//	  Decrypted:
//	    0000: 02 03 05 0A ...  |....|
//	  DECODE: ...              (the logger's guesses: ignored)
//
// "Decrypted:" dumps a game datagram after decryption (byte 0 is sent in
// clear, so it is as on the wire); "Hex:" (and "Plaintext:" in older
// versions of the logger) dumps the datagram as it was on the wire, which
// the logger does for GameSpy datagrams and for game datagrams it could not
// decrypt. Published excerpts leave out the time, the peer label and rc=,
// and indent differently; all of that is accepted. Only the dump rows are
// data: every other line of a block is the logger's commentary.

package capture

import (
	"bytes"
	"net/netip"
	"strconv"
	"time"
)

// traceDumpCap is where the logger cuts a dump (PktHexDump prints at most
// 2048 bytes and then "... (N bytes truncated)"); it is also the size of
// its decryption buffer, so a longer game datagram is logged raw.
const traceDumpCap = 2048

// traceSection says which dump the rows being read belong to.
type traceSection uint8

const (
	sectionNone      traceSection = iota
	sectionDecrypted              // "Decrypted:": plaintext of a game datagram
	sectionWire                   // "Hex:" or "Plaintext:": the bytes as on the wire
	sectionDone                   // a dump ended; rows now are out of place
)

// traceHeader is what a block's first line says.
type traceHeader struct {
	seq     int64
	sent    bool // S->C or S->?: the logging process sent it (sendto)
	peer    netip.AddrPort
	hasPeer bool
	length  int // len=
	rc      int
	hasRC   bool
	tod     time.Duration // time of day
	hasTime bool
	gameSpy bool // labelled GAMESPY...: logged raw
}

// parseTraceHeader reads a block header, with or without its leading
// time. ok is false for any other line.
func parseTraceHeader(line []byte) (h traceHeader, ok bool) {
	s := line
	if len(s) > 0 && s[0] == '[' {
		tod, n, ok := parseTraceTime(s)
		if !ok {
			return h, false
		}
		h.tod, h.hasTime = tod, true
		s = s[n:]
		for len(s) > 0 && s[0] == ' ' {
			s = s[1:]
		}
	}
	if len(s) < 2 || s[0] != '#' || !isDigit(s[1]) {
		return h, false
	}
	seq, s, ok := field(s[1:])
	if !ok {
		return h, false
	}
	if h.seq, ok = atoi64(seq); !ok {
		return h, false
	}
	dir, s, ok := field(s)
	if !ok {
		return h, false
	}
	switch string(dir) {
	case "S->C", "S->?":
		h.sent = true
	case "C->S":
	default:
		return h, false
	}
	tok, s, ok := field(s)
	if !ok {
		return h, false
	}
	if !bytes.HasPrefix(tok, []byte("len=")) {
		// The peer label: Peer#N(a.b.c.d:port), a bare a.b.c.d:port (the
		// 17th peer on), or "unknown".
		if i := bytes.IndexByte(tok, '('); i >= 0 && tok[len(tok)-1] == ')' {
			tok = tok[i+1 : len(tok)-1]
		}
		if ap, ok := parseIPv4Port(tok); ok {
			h.peer, h.hasPeer = ap, true
		} else if string(tok) != "unknown" {
			return h, false
		}
		if tok, s, ok = field(s); !ok {
			return h, false
		}
	}
	n, ok := cutPrefix(tok, "len=")
	if !ok {
		return h, false
	}
	if h.length, ok = atoi(n); !ok {
		return h, false
	}
	if tok, rest, ok := field(s); ok {
		if v, ok := cutPrefix(tok, "rc="); ok {
			if h.rc, ok = atoi(v); !ok {
				return h, false
			}
			h.hasRC = true
			s = rest
		}
	}
	h.gameSpy = bytes.HasPrefix(bytes.TrimLeft(s, " "), []byte("GAMESPY"))
	return h, true
}

// parseIPv4Port reads a.b.c.d:port, as the logger prints it (%d.%d.%d.%d:%d),
// without the allocation of netip.ParseAddrPort(string(b)).
func parseIPv4Port(b []byte) (netip.AddrPort, bool) {
	var a [4]byte
	for i := range 4 {
		j := 0
		for j < len(b) && j < 4 && isDigit(b[j]) {
			j++
		}
		n, ok := atoi(b[:j])
		sep := byte('.')
		if i == 3 {
			sep = ':'
		}
		if !ok || j == 0 || j > 3 || n > 255 || j >= len(b) || b[j] != sep {
			return netip.AddrPort{}, false
		}
		a[i] = byte(n)
		b = b[j+1:]
	}
	port, ok := atoi(b)
	if !ok || len(b) == 0 || len(b) > 5 || port < 0 || port > 65535 {
		return netip.AddrPort{}, false
	}
	return netip.AddrPortFrom(netip.AddrFrom4(a), uint16(port)), true
}

// parseTraceTime reads "[hh:mm:ss.mmm]" and returns the time of day and
// the bytes it took.
func parseTraceTime(s []byte) (time.Duration, int, bool) {
	if len(s) < 14 || s[0] != '[' || s[3] != ':' || s[6] != ':' || s[9] != '.' || s[13] != ']' {
		return 0, 0, false
	}
	var v [4]int
	for i, r := range [4][2]int{{1, 3}, {4, 6}, {7, 9}, {10, 13}} {
		n, ok := atoi(s[r[0]:r[1]])
		if !ok {
			return 0, 0, false
		}
		v[i] = n
	}
	if v[0] > 23 || v[1] > 59 || v[2] > 60 {
		return 0, 0, false
	}
	return time.Duration(v[0])*time.Hour + time.Duration(v[1])*time.Minute +
		time.Duration(v[2])*time.Second + time.Duration(v[3])*time.Millisecond, 14, true
}

// parseSessionStart reads the date and time of "# Session started:
// YYYY-MM-DD hh:mm:ss".
func parseSessionStart(line []byte) (time.Time, bool) {
	v, ok := cutPrefix(line, "# Session started:")
	if !ok {
		return time.Time{}, false
	}
	t, err := time.Parse("2006-01-02 15:04:05", string(bytes.TrimSpace(v)))
	return t, err == nil
}

// traceRow is one dump row parsed.
type traceRow struct {
	off   int
	n     int // bytes in the row
	bytes [16]byte
	cut   bool // the row ends before its ASCII column does: cut or garbled
}

// parseHexRow reads "XXXX: XX XX … |ascii|" (leading blanks already
// trimmed). ok is false when the line is not a row at all.
func parseHexRow(s []byte) (r traceRow, ok bool) {
	i := 0
	for i < len(s) && i < 9 && isHex(s[i]) {
		i++
	}
	if i < 4 || i > 8 || i+1 >= len(s) || s[i] != ':' || s[i+1] != ' ' {
		return r, false
	}
	off, _ := strconv.ParseUint(string(s[:i]), 16, 32)
	r.off = int(off)
	s = s[i+2:]
	for len(s) >= 2 && isHex(s[0]) && isHex(s[1]) && (len(s) == 2 || s[2] == ' ') {
		if r.n == 16 {
			r.cut = true // more than 16 bytes: not a row the logger wrote
			return r, true
		}
		r.bytes[r.n] = unhex(s[0])<<4 | unhex(s[1])
		r.n++
		s = s[min(3, len(s)):]
	}
	if r.n == 0 {
		r.cut = true
		return r, true
	}
	s = bytes.TrimLeft(s, " ")
	switch {
	case len(s) == 0:
		// No ASCII column (as some quotations leave it out).
	case s[0] == '|' && len(s) == r.n+2 && s[len(s)-1] == '|':
		// The ASCII column, one character per byte, complete.
	default:
		r.cut = true
	}
	return r, true
}

// parseTruncated reads "... (N bytes truncated)".
func parseTruncated(s []byte) (int, bool) {
	v, ok := cutPrefix(s, "... (")
	if !ok {
		return 0, false
	}
	num, rest, ok := field(v)
	if !ok || string(bytes.TrimSpace(rest)) != "bytes truncated)" {
		return 0, false
	}
	return atoi(num)
}

// field splits off the first space-separated token of s.
func field(s []byte) (tok, rest []byte, ok bool) {
	for len(s) > 0 && s[0] == ' ' {
		s = s[1:]
	}
	if len(s) == 0 {
		return nil, nil, false
	}
	i := bytes.IndexByte(s, ' ')
	if i < 0 {
		return s, nil, true
	}
	return s[:i], s[i:], true
}

func cutPrefix(s []byte, p string) ([]byte, bool) {
	if len(s) < len(p) || string(s[:len(p)]) != p {
		return nil, false
	}
	return s[len(p):], true
}

// atoi reads a decimal number of at most 9 digits, with an optional sign.
func atoi(s []byte) (int, bool) {
	n, ok := atoi64(s)
	return int(n), ok && n > -1e9 && n < 1e9
}

func atoi64(s []byte) (int64, bool) {
	neg := len(s) > 0 && s[0] == '-'
	if neg {
		s = s[1:]
	}
	if len(s) == 0 || len(s) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range s {
		if !isDigit(c) {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	if neg {
		n = -n
	}
	return n, true
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool { return isDigit(c) || c >= 'A' && c <= 'F' || c >= 'a' && c <= 'f' }

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
