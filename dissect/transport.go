package dissect

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Transport framing. A decrypted datagram is [peer_id][msg_count] followed by
// msg_count self-describing transport messages:
//
//	0x01 ACK:             [0x01][seq:u16][flags:u8]([frag_idx:u8] if flags&1)
//	0x00, 0x02-0x05:      [type][flags_len:u16]([seq:u16] if reliable)[payload]
//	                      flags_len: bit15 reliable, bit14 ordered, bits13-0 length
//	0x32 data:            [0x32][flags_len:u16]([seq:u16])([frag_idx]([total] if idx 0))[payload]
//	                      flags_len: bit15 reliable, bit14 ordered, bit13 fragment, bits12-0 length
//
// Lengths count the whole message including its type byte.

// TransportType is the first byte of a transport message.
type TransportType uint8

// The transport message types the stock game registers.
const (
	TypePeerInfo   TransportType = 0x00 // keepalive carrying the peer's slot, address and name
	TypeAck        TransportType = 0x01
	TypeConnect    TransportType = 0x02
	TypeConnectAck TransportType = 0x03 // stock clients also send their connect request as 0x03
	TypeBoot       TransportType = 0x04
	TypeDisconnect TransportType = 0x05
	TypeData       TransportType = 0x32 // every game opcode travels in one of these
)

var transportNames = [...]string{
	TypePeerInfo: "peer-info", TypeAck: "ack", TypeConnect: "connect",
	TypeConnectAck: "connect-ack", TypeBoot: "boot", TypeDisconnect: "disconnect",
}

// Known reports whether t is one of the seven registered types.
func (t TransportType) Known() bool { return t <= TypeDisconnect || t == TypeData }

func (t TransportType) String() string {
	switch {
	case t == TypeData:
		return "data"
	case t == TypeDisconnect06:
		return "disconnect-0x06"
	case int(t) < len(transportNames):
		return transportNames[t]
	}
	return fmt.Sprintf("type(%#02x)", uint8(t))
}

// Channel is the reliable sequence space a message belongs to: types below
// 0x32 and type 0x32 count their sequence numbers separately.
func (t TransportType) Channel() Channel {
	if t == TypeData {
		return ChannelData
	}
	return ChannelControl
}

// Channel names a reliable sequence space.
type Channel uint8

const (
	ChannelData    Channel = 0 // type 0x32
	ChannelControl Channel = 1 // types 0x00 and 0x02-0x05
)

func (c Channel) String() string {
	if c == ChannelControl {
		return "control"
	}
	return "data"
}

// ACK flag bits.
const (
	AckFragment uint8 = 0x01 // a frag_idx byte follows: this ACKs one fragment
	AckControl  uint8 = 0x02 // the ACKed message was on the control channel
)

// Header bits of flags_len.
const (
	flagReliable = 0x8000
	flagOrdered  = 0x4000
	flagFragment = 0x2000
	dataLenMask  = 0x1FFF
	ctrlLenMask  = 0x3FFF
)

// Message is one transport message. Slices alias the datagram it came from.
type Message struct {
	Offset int           // offset of the type byte within the datagram
	Raw    []byte        // the whole message as on the wire
	Type   TransportType //

	// Data and control messages.
	Reliable  bool
	Ordered   bool
	Fragment  bool  // type 0x32 only
	FragIndex uint8 // with Fragment
	FragTotal uint8 // with Fragment, on fragment 0 only (0 elsewhere)
	Seq       uint16
	Payload   []byte // what follows the header: a game message, a fragment's chunk, or control data

	// ACK messages.
	AckFlags uint8
	// AckFragIndex is the ACKed fragment when AckFlags&AckFragment.
	AckFragIndex uint8

	// Legacy is set when the message only parsed under the old
	// [type][len:u8][flags:u8] reading that one third-party client uses;
	// LegacyFlags keeps that flags byte as sent.
	Legacy      bool
	LegacyFlags uint8

	// NonStock names the registry's form when the message is intact but
	// not in stock's form (the legacy framing, a type 0x06 disconnect);
	// FormUnknown (0) otherwise.
	NonStock FormID
}

// AckChannel is the channel an ACK refers to.
func (m *Message) AckChannel() Channel {
	if m.AckFlags&AckControl != 0 {
		return ChannelControl
	}
	return ChannelData
}

// HasTotal reports whether the message is fragment 0, which carries the count.
func (m *Message) HasTotal() bool { return m.Fragment && m.FragIndex == 0 }

// Datagram is a decrypted datagram split into its transport messages.
type Datagram struct {
	Peer     uint8
	Count    uint8 // msg_count as sent
	Messages []Message
}

// ErrTrailing reports bytes after the last counted message.
var ErrTrailing = errors.New("bytes after the last message")

// Parse splits the decrypted datagram b into d, reusing d.Messages' storage.
// On damage it returns an *Error whose Offset is within b, and d holds the
// messages that were parsed before the damage; none after it are trusted.
//
// Nearly all messages are data messages (type 0x32, a game message or a
// fragment each) and ACKs: their parsers are chosen first, and set every
// field of the reused Message themselves (TestParseSetsEveryField), as
// zeroing it first costs more than their parse.
func (d *Datagram) Parse(b []byte) error {
	d.Messages = d.Messages[:0]
	d.Peer, d.Count = 0, 0
	if len(b) < 2 {
		return &Error{Offset: len(b), What: "datagram header", Err: ErrShort}
	}
	d.Peer, d.Count = b[0], b[1]
	msgs := d.Messages[:cap(d.Messages)]
	if len(msgs) < int(d.Count) {
		msgs = make([]Message, d.Count)
	}
	msgs = msgs[:d.Count]
	off := 2
	for i := range msgs {
		if off >= len(b) {
			d.Messages = msgs[:i]
			return errCountShort(off, i, d.Count)
		}
		m, rest := &msgs[i], b[off:]
		var n int
		var err error
		switch TransportType(rest[0]) {
		case TypeData:
			n, err = m.parseData(rest, off)
		case TypeAck:
			n, err = m.parseAck(rest, off)
		default:
			n, err = m.parseControl(rest, off)
		}
		if err != nil {
			d.Messages = msgs[:i]
			return err
		}
		off += n
	}
	d.Messages = msgs
	if off != len(b) {
		return &Error{Offset: off, What: "datagram",
			Err: fmt.Errorf("%w: %d bytes", ErrTrailing, len(b)-off)}
	}
	return nil
}

// errCountShort is the error for a datagram that ends after i of its count
// messages.
func errCountShort(off, i int, count uint8) error {
	return &Error{Offset: off, What: fmt.Sprintf("message %d of %d", i+1, count),
		Err: fmt.Errorf("%w: datagram ends after %d messages", ErrShort, i)}
}

// parseAck parses the ACK at rest (b[off:]) into m and returns its length.
func (m *Message) parseAck(rest []byte, off int) (int, error) {
	if len(rest) < 4 {
		return 0, &Error{Offset: off + len(rest), What: "ack", Err: ErrShort}
	}
	n, frag := 4, uint8(0)
	if rest[3]&AckFragment != 0 {
		if len(rest) < 5 {
			return 0, &Error{Offset: off + 4, What: "ack fragment index", Err: ErrShort}
		}
		n, frag = 5, rest[4]
	}
	// Every field is set one by one: a composite literal would be built
	// on the stack and copied, and zeroing m first (*m = Message{}) calls
	// runtime.wbZero while the garbage collector runs.
	m.Offset, m.Raw, m.Type = off, rest[:n:n], TypeAck
	m.Reliable, m.Ordered, m.Fragment, m.FragIndex, m.FragTotal = false, false, false, 0, 0
	m.Seq, m.Payload = binary.LittleEndian.Uint16(rest[1:]), nil
	m.AckFlags, m.AckFragIndex = rest[3], frag
	m.Legacy, m.LegacyFlags, m.NonStock = false, 0, FormUnknown
	return n, nil
}

// parseData parses the data message at rest (b[off:]) into m and returns
// its length.
func (m *Message) parseData(rest []byte, off int) (int, error) {
	if len(rest) < 3 {
		return 0, &Error{Offset: off + len(rest), What: "data header", Err: ErrShort}
	}
	fl := binary.LittleEndian.Uint16(rest[1:])
	n := int(fl & dataLenMask)
	reliable, fragment := fl&flagReliable != 0, fl&flagFragment != 0
	hdr := 3
	if reliable {
		hdr += 2
	}
	if fragment {
		hdr++
		if n > hdr-1 && len(rest) > hdr-1 && rest[hdr-1] == 0 {
			hdr++ // fragment 0 also carries the total
		}
	}
	if n < hdr || n > len(rest) {
		return 0, errLen(rest, off, n, hdr, "data")
	}
	m.Offset, m.Raw, m.Type = off, rest[:n:n], TypeData
	m.Reliable, m.Ordered, m.Fragment = reliable, fl&flagOrdered != 0, fragment
	m.Seq, m.FragIndex, m.FragTotal = 0, 0, 0
	p := 3
	if reliable {
		m.Seq = binary.LittleEndian.Uint16(rest[p:])
		p += 2
	}
	if fragment {
		m.FragIndex = rest[p]
		p++
		if m.FragIndex == 0 {
			m.FragTotal = rest[p]
			p++
		}
	}
	m.Payload = rest[p:n:n]
	m.AckFlags, m.AckFragIndex, m.Legacy, m.LegacyFlags, m.NonStock = 0, 0, false, 0, FormUnknown
	return n, nil
}

// parseControl parses the control message (types 0x00 and 0x02-0x05) at
// rest (b[off:]) into m and returns its length, falling back to the
// legacy header when the stock one does not fit.
func (m *Message) parseControl(rest []byte, off int) (int, error) {
	*m = Message{Offset: off, Type: TransportType(rest[0])}
	if !m.Type.Known() {
		if m.Type == TypeDisconnect06 {
			if n, ok := m.parseDisconnect06(rest, off); ok {
				return n, nil
			}
		}
		return 0, &Error{Offset: off, What: "transport type",
			Err: fmt.Errorf("%w: unknown type byte %#02x", ErrBadValue, rest[0])}
	}
	if len(rest) < 3 { // too short for the legacy header too
		return 0, &Error{Offset: off + len(rest), What: m.Type.String() + " header", Err: ErrShort}
	}
	fl := binary.LittleEndian.Uint16(rest[1:])
	n := int(fl & ctrlLenMask)
	hdr := 3
	if fl&flagReliable != 0 {
		hdr += 2
	}
	if n < hdr || n > len(rest) {
		if ln, lerr := m.parseLegacy(rest, off); lerr == nil {
			return ln, nil
		}
		return 0, errLen(rest, off, n, hdr, m.Type.String())
	}
	m.Reliable, m.Ordered = fl&flagReliable != 0, fl&flagOrdered != 0
	if m.Reliable {
		m.Seq = binary.LittleEndian.Uint16(rest[3:])
	}
	m.Raw = rest[:n:n]
	m.Payload = rest[hdr:n:n]
	return n, nil
}

// parseLegacy tries the [type][len:u8][flags:u8] header (flags bit 7 =
// reliable, then a u16 sequence number). It is only tried when the stock
// reading fails, and only accepted when the length fits the datagram.
func (m *Message) parseLegacy(rest []byte, off int) (int, error) {
	if len(rest) < 3 {
		return 0, &Error{Offset: off, What: "legacy header", Err: ErrShort}
	}
	n, flags := int(rest[1]), rest[2]
	hdr := 3
	if flags&0x80 != 0 {
		hdr += 2
	}
	if n < hdr || n > len(rest) {
		return 0, errLen(rest, off, n, hdr, "legacy "+m.Type.String())
	}
	*m = Message{Offset: off, Type: m.Type, Legacy: true, LegacyFlags: flags, Reliable: flags&0x80 != 0, Ordered: flags&0x40 != 0,
		NonStock: FormLegacyConnect}
	if m.Reliable {
		m.Seq = binary.LittleEndian.Uint16(rest[3:])
	}
	m.Raw = rest[:n:n]
	m.Payload = rest[hdr:n:n]
	return n, nil
}

// TypeDisconnect06 is the transport type a third-party client sends its
// disconnect as (the registry's FormDisconnect06); stock's is 0x05.
const TypeDisconnect06 TransportType = 0x06

// parseDisconnect06 reads a type 0x06 disconnect, [0x06][len:u8] and
// len-2 payload bytes, when its length fits the datagram; it is not a
// stock type, so nothing else is accepted under it.
func (m *Message) parseDisconnect06(rest []byte, off int) (int, bool) {
	if len(rest) < 2 {
		return 0, false
	}
	n := int(rest[1])
	if n < 2 || n > len(rest) {
		return 0, false
	}
	*m = Message{Offset: off, Type: TypeDisconnect06, Raw: rest[:n:n], Payload: rest[2:n:n], NonStock: FormDisconnect06}
	return n, true
}

// errLen is the error for a header whose total length n is shorter than
// its hdr-byte header or runs past the bytes left in the datagram.
func errLen(rest []byte, off, n, hdr int, what string) error {
	if n < hdr {
		return &Error{Offset: off + 1, What: what + " length",
			Err: fmt.Errorf("%w: length %d is shorter than its %d-byte header", ErrBadValue, n, hdr)}
	}
	return &Error{Offset: off + 1, What: what + " length",
		Err: fmt.Errorf("%w: length %d runs past the datagram (%d bytes left)", ErrShort, n, len(rest))}
}

// HeaderLen is the size of m's header as Append writes it.
func (m *Message) HeaderLen() int {
	switch {
	case m.Type == TypeAck:
		return 0
	case m.Type == TypeDisconnect06:
		return 2
	case m.Legacy:
		if m.Reliable {
			return 5
		}
		return 3
	}
	n := 3
	if m.Reliable {
		n += 2
	}
	if m.Type == TypeData && m.Fragment {
		n++
		if m.FragIndex == 0 {
			n++
		}
	}
	return n
}

// Len is the encoded size of m.
func (m *Message) Len() int {
	if m.Type == TypeAck {
		if m.AckFlags&AckFragment != 0 {
			return 5
		}
		return 4
	}
	return m.HeaderLen() + len(m.Payload)
}

// Append encodes m (from its fields, not Raw) and appends it to b. A message
// produced by parsing appends to exactly the bytes it came from.
func (m *Message) Append(b []byte) []byte {
	if m.Type == TypeAck {
		b = append(b, byte(TypeAck))
		b = binary.LittleEndian.AppendUint16(b, m.Seq)
		b = append(b, m.AckFlags)
		if m.AckFlags&AckFragment != 0 {
			b = append(b, m.AckFragIndex)
		}
		return b
	}
	n := m.Len()
	if m.Type == TypeDisconnect06 {
		return append(append(b, byte(m.Type), byte(n)), m.Payload...)
	}
	b = append(b, byte(m.Type))
	if m.Legacy {
		flags := m.LegacyFlags &^ 0xC0
		if m.Reliable {
			flags |= 0x80
		}
		if m.Ordered {
			flags |= 0x40
		}
		b = append(b, byte(n), flags)
	} else {
		fl := uint16(n)
		if m.Reliable {
			fl |= flagReliable
		}
		if m.Ordered {
			fl |= flagOrdered
		}
		if m.Type == TypeData && m.Fragment {
			fl |= flagFragment
		}
		b = binary.LittleEndian.AppendUint16(b, fl)
	}
	if m.Reliable {
		b = binary.LittleEndian.AppendUint16(b, m.Seq)
	}
	if m.Type == TypeData && m.Fragment && !m.Legacy {
		b = append(b, m.FragIndex)
		if m.FragIndex == 0 {
			b = append(b, m.FragTotal)
		}
	}
	return append(b, m.Payload...)
}

// MaxLen is the largest total length a message of type t can declare.
func MaxLen(t TransportType) int {
	if t == TypeData {
		return dataLenMask
	}
	return ctrlLenMask
}

// Append encodes d's header and messages and appends them to b. Count is
// written as len(d.Messages).
func (d *Datagram) Append(b []byte) []byte {
	b = append(b, d.Peer, byte(len(d.Messages)))
	for i := range d.Messages {
		b = d.Messages[i].Append(b)
	}
	return b
}
