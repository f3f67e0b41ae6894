package report

// The openings of decode's lines and JSON objects: frame, time, addresses
// and direction. A datagram's messages are consecutive records with the
// same opening, and a capture's records come from a few address pairs, so
// each printer keeps the last opening it wrote and the address pairs'
// texts: a line of the bundled battle repeated the last one's opening
// about half the time, and formatting the two addresses had been a
// seventh of text decode's formatting.

import (
	"net/netip"
	"time"
	"unicode/utf8"

	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/internal/jsonenc"
)

// openingKey is what a record's opening is made of, beside the printer's
// clock (text) or nothing else (JSON).
type openingKey struct {
	frame    int
	time     time.Time
	src, dst netip.AddrPort
	dir      game.Direction
}

func keyOf(r *flow.Record) openingKey {
	return openingKey{frame: r.Frame, time: r.Time, src: r.Src, dst: r.Dst, dir: r.Dir}
}

// of reports whether k is r's key (k == keyOf(r)), the frame first: the
// records of another datagram differ there, and nothing is copied.
func (k *openingKey) of(r *flow.Record) bool {
	return k.frame == r.Frame && k.time == r.Time && k.src == r.Src && k.dst == r.Dst && k.dir == r.Dir
}

// lastOpening is the opening written last and what it was made of. Keys
// compare time.Time with ==, which is stricter than the instant (the
// location and monotonic reading too): a miss at worst.
type lastOpening struct {
	valid bool
	key   openingKey
	clock Clock // text only
	text  []byte
}

// addrPair is the text of a source and destination address pair, as the
// opening writes them.
type addrPair struct {
	src, dst netip.AddrPort
	text     []byte // nil while the slot is empty
}

// addrPairs holds the texts of recent address pairs in sets of two slots,
// one set per hash of the ports; a set holds the two pairs of its hash
// written last, the later first. (With one slot per hash, OpenBC's battle
// of three clients had two hashes shared by two pairs each.)
type addrPairs [64]addrPair

// lookup returns the slot for src and dst and whether it holds their
// text; a slot returned without it is for the caller to fill.
func (c *addrPairs) lookup(src, dst netip.AddrPort) (*addrPair, bool) {
	h := (uint32(src.Port())*0x9E3779B1 ^ uint32(dst.Port())*0x85EBCA77) >> 27 << 1
	s0, s1 := &c[h], &c[h+1]
	switch {
	case s0.text != nil && s0.src == src && s0.dst == dst:
		return s0, true
	case s1.text != nil && s1.src == src && s1.dst == dst:
		*s0, *s1 = *s1, *s0
		return s0, true
	}
	*s0, *s1 = *s1, *s0 // the older pair's slot (and storage) is reused
	return s0, false
}

// appendTextOpening appends the text line's opening, fmt's
//
//	"%6d %11.6f %21s -> %-21s %s "
//
// (frame, time in the clock's format and width, addresses, direction),
// appended directly: this opening is on every line decode prints.
func (p *DecodePrinter) appendTextOpening(b []byte, r *flow.Record) []byte {
	m := &p.lastText
	if m.valid && m.key.of(r) && m.clock == p.clock {
		return append(b, m.text...)
	}
	start := len(b)
	// The frame number and the time are ASCII: a byte is a column.
	p.scratch = jsonenc.Int(p.scratch[:0], int64(r.Frame))
	b = appendPaddedASCII(b, 6, p.scratch)
	b = append(b, ' ')
	p.scratch = p.clock.Append(p.scratch[:0], r)
	b = appendPaddedASCII(b, p.clock.Width(), p.scratch)
	b = append(b, ' ')
	pair, ok := p.textPairs.lookup(r.Src, r.Dst)
	if !ok {
		t := appendPadded(pair.text[:0], 21, appendAddr(p.scratch[:0], r.Src))
		t = append(t, " -> "...)
		n := len(t)
		t = appendAddr(t, r.Dst)
		for range 21 - utf8.RuneCount(t[n:]) {
			t = append(t, ' ')
		}
		pair.src, pair.dst, pair.text = r.Src, r.Dst, t
	}
	b = append(b, pair.text...)
	b = append(b, ' ')
	b = append(b, r.Dir.String()...)
	b = append(b, ' ')
	if m.valid = !lastOfDatagram(r); m.valid {
		m.key, m.clock = keyOf(r), p.clock
		m.text = append(m.text[:0], b[start:]...)
	}
	return b
}

// jsonOpenings writes the openings of JSON records:
// {"frame":N,"time":"...","src":"...","dst":"...","dir":"..." (no time
// for a record without one, no addresses and direction for one without
// a source).
type jsonOpenings struct {
	times recordTimes
	last  lastOpening
	pairs addrPairs
}

func (o *jsonOpenings) append(b []byte, r *flow.Record) []byte {
	m := &o.last
	if m.valid && m.key.of(r) {
		return append(b, m.text...)
	}
	start := len(b)
	b = appendJSONOpening(b, r, &o.times, &o.pairs)
	if m.valid = !lastOfDatagram(r); m.valid {
		m.key = keyOf(r)
		m.text = append(m.text[:0], b[start:]...)
	}
	return b
}

// lastOfDatagram reports whether r is its datagram's last message, after
// which no record has its opening: the opening is not kept for one (most
// of OpenBC's datagrams hold one message). Another record of the same
// frame, time and addresses would only make its opening again.
func lastOfDatagram(r *flow.Record) bool {
	return r.Kind == flow.KindMessage && r.MsgIndex+1 >= r.MsgCount
}

// appendJSONOpening appends r's opening, the addresses' text from pairs
// when it is not nil.
func appendJSONOpening(b []byte, r *flow.Record, times *recordTimes, pairs *addrPairs) []byte {
	b = jsonenc.Int(append(b, `{"frame":`...), int64(r.Frame))
	// A damaged capture record has no time, addresses or direction (nor a
	// pasted datagram a time): those keys are left out rather than given
	// zero values.
	if !r.Time.IsZero() {
		// RFC 3339 in UTC is digits and -T:.Z only: nothing to escape.
		b = append(times.append(append(b, `,"time":"`...), r.Time), '"')
	}
	if !r.Src.IsValid() {
		return b
	}
	if pairs == nil {
		b = appendQuotedAddr(append(b, `,"src":`...), r.Src)
		b = appendQuotedAddr(append(b, `,"dst":`...), r.Dst)
	} else {
		pair, ok := pairs.lookup(r.Src, r.Dst)
		if !ok {
			t := appendQuotedAddr(append(pair.text[:0], `,"src":`...), r.Src)
			t = appendQuotedAddr(append(t, `,"dst":`...), r.Dst)
			pair.src, pair.dst, pair.text = r.Src, r.Dst, t
		}
		b = append(b, pair.text...)
	}
	return append(append(b, `,"dir":`...), dirNameJSON[r.Dir]...)
}

// appendPaddedASCII is appendPadded for a field of ASCII bytes.
func appendPaddedASCII(b []byte, width int, field []byte) []byte {
	for range width - len(field) {
		b = append(b, ' ')
	}
	return append(b, field...)
}
