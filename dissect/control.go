package dissect

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strconv"
	"unicode/utf16"
)

// Payloads of the control-channel transport messages (types 0x00 and
// 0x02-0x05), as stock traffic shows them:
//
//	peer-info 0x00:   [slot][ipv4:4][name: UTF-16LE, NUL-terminated]   (may be empty)
//	connect 0x03 C->S: [ipv4:4][port:u16 BE][4 reserved bytes]          (from peer 0xFF)
//	connect 0x03 S->C: [slot]                                           (slot assignment)
//	disconnect 0x05:  [slot][ipv4:4]
//
// The connect request's port is read in network byte order, like the
// address beside it (both look copied from a socket address).

// Control is the decoded payload of a control message. Which fields are set
// depends on Kind.
type Control struct {
	Kind     string     `json:"kind"`           // "peer-info", "connect-request", "slot-assignment", "disconnect", "boot", "raw"
	Slot     *uint8     `json:"slot,omitempty"` // wire slot (0x02 = first client)
	Addr     netip.Addr `json:"ip,omitzero"`
	Port     uint16     `json:"port,omitempty"`
	Name     string     `json:"name,omitempty"`
	Reserved []byte     `json:"-"` // connect request's trailing bytes, kept for re-encoding
	Extra    []byte     `json:"-"` // bytes the layout does not explain
}

// slotValues backs Control.Slot, so that parsing does not allocate: Slot
// points into this table and must be treated as read-only.
var slotValues = func() (t [256]uint8) {
	for i := range t {
		t[i] = uint8(i)
	}
	return t
}()

// Names remembers recently decoded peer names, so that the keepalives a
// session sends every few seconds reuse one string instead of allocating
// one each. The zero value is ready; it is not safe for concurrent use.
type Names struct {
	raw  [8][]byte
	name [8]string
	next int
}

// decode returns the string for the UTF-16LE bytes u (without terminator).
func (n *Names) decode(u []byte) string {
	if n == nil {
		return decodeUTF16(u)
	}
	for i := range n.raw {
		if n.raw[i] != nil && string(n.raw[i]) == string(u) {
			return n.name[i]
		}
	}
	i := n.next
	n.next = (n.next + 1) % len(n.raw)
	n.raw[i] = append(n.raw[i][:0], u...)
	if n.raw[i] == nil {
		n.raw[i] = []byte{}
	}
	n.name[i] = decodeUTF16(u)
	return n.name[i]
}

// ParseControl decodes the payload of control message m. Payloads that do not
// match a known layout come back as Kind "raw" with the bytes in Extra and a
// non-nil error saying why; the caller shows them raw. Slot, when set,
// points to shared read-only storage.
func ParseControl(m *Message) (Control, error) { return ParseControlNames(m, nil) }

// ParseControlNames is ParseControl with a cache of peer names (which may be
// nil).
func ParseControlNames(m *Message, names *Names) (Control, error) {
	p := m.Payload
	switch m.Type {
	case TypePeerInfo:
		if len(p) == 0 {
			return Control{Kind: "peer-info"}, nil
		}
		if len(p) < 5 {
			return Control{Kind: "raw", Extra: p}, &Error{Offset: len(p), What: "peer-info", Err: ErrShort}
		}
		c := Control{Kind: "peer-info", Slot: &slotValues[p[0]], Addr: netip.AddrFrom4([4]byte(p[1:5]))}
		name, rest, err := decodeUTF16Z(p[5:], names)
		c.Name, c.Extra = name, rest
		if err != nil {
			return c, &Error{Offset: 5, What: "peer-info name", Err: err}
		}
		return c, nil
	case TypeConnect, TypeConnectAck:
		switch {
		case len(p) == 1:
			return Control{Kind: "slot-assignment", Slot: &slotValues[p[0]]}, nil
		case len(p) >= 6:
			return Control{Kind: "connect-request", Addr: netip.AddrFrom4([4]byte(p[0:4])),
				Port: binary.BigEndian.Uint16(p[4:6]), Reserved: p[6:]}, nil
		}
	case TypeDisconnect:
		if len(p) == 5 {
			return Control{Kind: "disconnect", Slot: &slotValues[p[0]], Addr: netip.AddrFrom4([4]byte(p[1:5]))}, nil
		}
	case TypeBoot:
		return Control{Kind: "boot", Extra: p}, nil
	}
	return Control{Kind: "raw", Extra: p}, &Error{Offset: 0, What: m.Type.String() + " payload",
		Err: fmt.Errorf("%w: unexpected %d-byte layout", ErrBadValue, len(p))}
}

// AppendControl encodes c as a payload of the kind it names.
func AppendControl(b []byte, c *Control) []byte {
	slot := func() byte {
		if c.Slot != nil {
			return *c.Slot
		}
		return 0
	}
	ip4 := func() []byte {
		a := c.Addr.As4()
		return a[:]
	}
	switch c.Kind {
	case "peer-info":
		if c.Slot == nil && c.Name == "" && !c.Addr.IsValid() {
			return append(b, c.Extra...)
		}
		b = append(b, slot())
		b = append(b, ip4()...)
		b = appendUTF16Z(b, c.Name)
	case "slot-assignment":
		b = append(b, slot())
	case "connect-request":
		b = append(b, ip4()...)
		b = binary.BigEndian.AppendUint16(b, c.Port)
		b = append(b, c.Reserved...)
	case "disconnect":
		b = append(b, slot())
		b = append(b, ip4()...)
	}
	return append(b, c.Extra...)
}

// decodeUTF16Z reads a NUL-terminated UTF-16LE string and returns the bytes
// after the terminator.
func decodeUTF16Z(b []byte, names *Names) (string, []byte, error) {
	for i := 0; i+1 < len(b); i += 2 {
		if b[i] == 0 && b[i+1] == 0 {
			return names.decode(b[:i]), b[i+2:], nil
		}
	}
	return names.decode(b[:len(b)&^1]), nil, fmt.Errorf("%w: name has no NUL terminator", ErrShort)
}

// decodeUTF16 decodes UTF-16LE code units (an odd trailing byte is ignored).
func decodeUTF16(b []byte) string {
	u := make([]uint16, 0, len(b)/2)
	for i := 0; i+1 < len(b); i += 2 {
		u = append(u, binary.LittleEndian.Uint16(b[i:]))
	}
	return string(utf16.Decode(u))
}

func appendUTF16Z(b []byte, s string) []byte {
	for _, c := range utf16.Encode([]rune(s)) {
		b = binary.LittleEndian.AppendUint16(b, c)
	}
	return append(b, 0, 0)
}

// String is the one-line text form of c, as the decode output shows it:
// the kind, then the fields present (slot, ip, port, name, extra bytes).
func (c *Control) String() string { return string(c.AppendString(make([]byte, 0, 64))) }

// AppendString appends String's form. decode prints it for every control
// message (the keepalives among them), and appends it to its line
// directly; TestControlTextMatchesFmt holds it to the fmt form it replaced.
func (c *Control) AppendString(b []byte) []byte {
	b = append(b, c.Kind...)
	if c.Slot != nil {
		b = strconv.AppendUint(append(b, " slot="...), uint64(*c.Slot), 10)
	}
	if c.Addr.IsValid() {
		b = c.Addr.AppendTo(append(b, " ip="...))
	}
	if c.Port != 0 {
		b = strconv.AppendUint(append(b, " port="...), uint64(c.Port), 10)
	}
	if c.Name != "" {
		b = AppendQuote(append(b, " name="...), c.Name)
	}
	if len(c.Extra) > 0 {
		b = append(b, " data="...)
		for _, x := range c.Extra { // fmt's %X
			b = append(b, hexUpperDigits[x>>4], hexUpperDigits[x&0xF])
		}
	}
	return b
}

const hexUpperDigits = "0123456789ABCDEF"
