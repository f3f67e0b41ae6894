package replay

import (
	"encoding/binary"
	"fmt"
	"net/netip"

	"github.com/bcwire/bcwire/dissect"
)

// AddrField is one field of a decrypted datagram that carries the client's
// own address.
type AddrField struct {
	Offset int    // byte offset within the decrypted datagram
	Port   bool   // a u16 port (big-endian) rather than an IPv4 address
	Name   string // "connect-request ip", "peer-info ip", ...
}

func (f AddrField) len() int {
	if f.Port {
		return 2
	}
	return 4
}

// addrFields finds every address field of a decrypted datagram, whatever
// it holds. Messages after framing damage are not looked at.
func addrFields(plain []byte) []AddrField {
	var d dissect.Datagram
	_ = d.Parse(plain) // messages before any damage are still usable
	var out []AddrField
	for i := range d.Messages {
		m := &d.Messages[i]
		if m.Type == dissect.TypeData || m.Type == dissect.TypeAck || m.Legacy {
			continue
		}
		at := m.Offset + m.HeaderLen() // the payload's offset in the datagram
		if at+len(m.Payload) > len(plain) {
			continue
		}
		c, err := dissect.ParseControl(m)
		if err != nil {
			continue
		}
		switch c.Kind {
		case "connect-request":
			out = append(out, AddrField{Offset: at, Name: "connect-request ip"},
				AddrField{Offset: at + 4, Port: true, Name: "connect-request port"})
		case "peer-info":
			if len(m.Payload) >= 5 {
				out = append(out, AddrField{Offset: at + 1, Name: "peer-info ip"})
			}
		case "disconnect":
			out = append(out, AddrField{Offset: at + 1, Name: "disconnect ip"})
		}
	}
	return out
}

// clientFields keeps the address fields that hold client's IP or port.
func clientFields(plain []byte, client netip.AddrPort) []AddrField {
	var out []AddrField
	ip := client.Addr().Unmap()
	for _, f := range addrFields(plain) {
		if f.Port {
			if binary.BigEndian.Uint16(plain[f.Offset:]) == client.Port() {
				out = append(out, f)
			}
			continue
		}
		if ip.Is4() && netip.AddrFrom4([4]byte(plain[f.Offset:f.Offset+4])) == ip {
			out = append(out, f)
		}
	}
	return out
}

// Rewritten is one address field changed for a live run.
type Rewritten struct {
	Field string // "peer-info ip", ...
	From  string // the captured value
	To    string // the live value
}

func (r Rewritten) String() string { return fmt.Sprintf("%s %s -> %s", r.Field, r.From, r.To) }

// Rewrite returns d's wire bytes for a session whose client is live: every
// field in d.Fields gets live's address or port, and the datagram is
// re-encrypted. Without fields (or when live is not IPv4) it returns d.Wire
// itself. The plaintext is returned too.
func Rewrite(d *Datagram, live netip.AddrPort) (wire, plain []byte, changed []Rewritten) {
	ip := live.Addr().Unmap()
	if len(d.Fields) == 0 || !ip.Is4() {
		return d.Wire, d.Plain, nil
	}
	plain = append([]byte(nil), d.Plain...)
	a4 := ip.As4()
	for _, f := range d.Fields {
		if f.Port {
			from := binary.BigEndian.Uint16(plain[f.Offset:])
			binary.BigEndian.PutUint16(plain[f.Offset:], live.Port())
			if from != live.Port() {
				changed = append(changed, Rewritten{f.Name, fmt.Sprint(from), fmt.Sprint(live.Port())})
			}
			continue
		}
		from := netip.AddrFrom4([4]byte(plain[f.Offset : f.Offset+4]))
		copy(plain[f.Offset:], a4[:])
		if from != ip {
			changed = append(changed, Rewritten{f.Name, from.String(), ip.String()})
		}
	}
	if len(changed) == 0 {
		return d.Wire, d.Plain, nil
	}
	wire = make([]byte, len(plain))
	dissect.Encrypt(wire, plain)
	return wire, plain, changed
}

// masked returns a copy of a decrypted datagram with every address field
// zeroed, so that datagrams can be compared whatever address they carry.
func masked(plain []byte) []byte {
	fs := addrFields(plain)
	if len(fs) == 0 {
		return plain
	}
	out := append([]byte(nil), plain...)
	for _, f := range fs {
		clear(out[f.Offset : f.Offset+f.len()])
	}
	return out
}
