package dissect

import (
	"encoding/binary"
	"fmt"
)

// The transport splitter parses the common message, an unfragmented data
// message, inline (Datagram.Parse). This file keeps the splitter it
// replaced, one function per message type, as the reference the fast one
// must match exactly: same messages, same errors.

// refParse is the old Datagram.Parse.
func refParse(d *Datagram, b []byte) error {
	d.Messages = d.Messages[:0]
	d.Peer, d.Count = 0, 0
	if len(b) < 2 {
		return &Error{Offset: len(b), What: "datagram header", Err: ErrShort}
	}
	d.Peer, d.Count = b[0], b[1]
	off := 2
	for i := 0; i < int(d.Count); i++ {
		if off >= len(b) {
			return &Error{Offset: off, What: fmt.Sprintf("message %d of %d", i+1, d.Count),
				Err: fmt.Errorf("%w: datagram ends after %d messages", ErrShort, i)}
		}
		d.Messages = append(d.Messages, Message{})
		m := &d.Messages[len(d.Messages)-1]
		n, err := m.refParse(b, off)
		if err != nil {
			d.Messages = d.Messages[:len(d.Messages)-1]
			return err
		}
		off += n
	}
	if off != len(b) {
		return &Error{Offset: off, What: "datagram",
			Err: fmt.Errorf("%w: %d bytes", ErrTrailing, len(b)-off)}
	}
	return nil
}

// refParse decodes the message starting at b[off] and returns its length.
func (m *Message) refParse(b []byte, off int) (int, error) {
	rest := b[off:]
	m.Offset = off
	m.Type = TransportType(rest[0])
	switch {
	case m.Type == TypeAck:
		return m.refParseAck(rest, off)
	case m.Type == TypeData:
		return m.refParseData(rest, off)
	case m.Type <= TypeDisconnect:
		n, err := m.refParseControl(rest, off)
		if err != nil {
			if ln, lerr := m.refParseLegacy(rest, off); lerr == nil {
				return ln, nil
			}
		}
		return n, err
	}
	return 0, &Error{Offset: off, What: "transport type",
		Err: fmt.Errorf("%w: unknown type byte %#02x", ErrBadValue, rest[0])}
}

func (m *Message) refParseAck(rest []byte, off int) (int, error) {
	if len(rest) < 4 {
		return 0, &Error{Offset: off + len(rest), What: "ack", Err: ErrShort}
	}
	m.Seq = binary.LittleEndian.Uint16(rest[1:])
	m.AckFlags = rest[3]
	n := 4
	if m.AckFlags&AckFragment != 0 {
		if len(rest) < 5 {
			return 0, &Error{Offset: off + 4, What: "ack fragment index", Err: ErrShort}
		}
		m.AckFragIndex = rest[4]
		n = 5
	}
	m.Raw = rest[:n:n]
	return n, nil
}

func (m *Message) refParseData(rest []byte, off int) (int, error) {
	if len(rest) < 3 {
		return 0, &Error{Offset: off + len(rest), What: "data header", Err: ErrShort}
	}
	fl := binary.LittleEndian.Uint16(rest[1:])
	m.Reliable = fl&flagReliable != 0
	m.Ordered = fl&flagOrdered != 0
	m.Fragment = fl&flagFragment != 0
	n := int(fl & dataLenMask)
	hdr := 3
	if m.Reliable {
		hdr += 2
	}
	if m.Fragment {
		hdr++
		if n > hdr-1 && len(rest) > hdr-1 && rest[hdr-1] == 0 {
			hdr++ // fragment 0 also carries the total
		}
	}
	if err := refCheckLen(rest, off, n, hdr, "data"); err != nil {
		return 0, err
	}
	p := 3
	if m.Reliable {
		m.Seq = binary.LittleEndian.Uint16(rest[p:])
		p += 2
	}
	if m.Fragment {
		m.FragIndex = rest[p]
		p++
		if m.FragIndex == 0 {
			m.FragTotal = rest[p]
			p++
		}
	}
	m.Raw = rest[:n:n]
	m.Payload = rest[p:n:n]
	return n, nil
}

func (m *Message) refParseControl(rest []byte, off int) (int, error) {
	if len(rest) < 3 {
		return 0, &Error{Offset: off + len(rest), What: m.Type.String() + " header", Err: ErrShort}
	}
	fl := binary.LittleEndian.Uint16(rest[1:])
	m.Reliable = fl&flagReliable != 0
	m.Ordered = fl&flagOrdered != 0
	n := int(fl & ctrlLenMask)
	hdr := 3
	if m.Reliable {
		hdr += 2
	}
	if err := refCheckLen(rest, off, n, hdr, m.Type.String()); err != nil {
		return 0, err
	}
	if m.Reliable {
		m.Seq = binary.LittleEndian.Uint16(rest[3:])
	}
	m.Raw = rest[:n:n]
	m.Payload = rest[hdr:n:n]
	return n, nil
}

// refParseLegacy tries the [type][len:u8][flags:u8] header (flags bit 7 =
// reliable, then a u16 sequence number). It is only tried when the stock
// reading fails, and only accepted when the length fits the datagram.
func (m *Message) refParseLegacy(rest []byte, off int) (int, error) {
	if len(rest) < 3 {
		return 0, &Error{Offset: off, What: "legacy header", Err: ErrShort}
	}
	n, flags := int(rest[1]), rest[2]
	hdr := 3
	if flags&0x80 != 0 {
		hdr += 2
	}
	if err := refCheckLen(rest, off, n, hdr, "legacy "+m.Type.String()); err != nil {
		return 0, err
	}
	*m = Message{Offset: off, Type: m.Type, Legacy: true, LegacyFlags: flags, Reliable: flags&0x80 != 0, Ordered: flags&0x40 != 0}
	if m.Reliable {
		m.Seq = binary.LittleEndian.Uint16(rest[3:])
	}
	m.Raw = rest[:n:n]
	m.Payload = rest[hdr:n:n]
	return n, nil
}

// refCheckLen validates a header's total length n against the header size and
// the bytes left in the datagram.
func refCheckLen(rest []byte, off, n, hdr int, what string) error {
	if n < hdr {
		return &Error{Offset: off + 1, What: what + " length",
			Err: fmt.Errorf("%w: length %d is shorter than its %d-byte header", ErrBadValue, n, hdr)}
	}
	if n > len(rest) {
		return &Error{Offset: off + 1, What: what + " length",
			Err: fmt.Errorf("%w: length %d runs past the datagram (%d bytes left)", ErrShort, n, len(rest))}
	}
	return nil
}
