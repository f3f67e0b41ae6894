package dissect

import (
	"net/netip"
	"strconv"

	"github.com/bcwire/bcwire/internal/jsonenc"
)

// Control and GameSpy have no MarshalJSON: encoding/json writes them from
// their struct tags. Their AppendJSON methods write the same bytes without
// reflection (a test holds them to json.Marshal).

// AppendJSON appends c as json.Marshal writes it: kind, then slot, ip,
// port and name when set.
func (c *Control) AppendJSON(b []byte) []byte {
	b = jsonenc.String(append(b, `{"kind":`...), c.Kind)
	if c.Slot != nil {
		b = strconv.AppendUint(append(b, `,"slot":`...), uint64(*c.Slot), 10)
	}
	if c.Addr != (netip.Addr{}) { // omitzero: netip.Addr has no IsZero
		// At most an IPv6 address with a zone; the array stays on the
		// stack.
		var text [64]byte
		b = jsonenc.String(append(b, `,"ip":`...), c.Addr.AppendTo(text[:0]))
	}
	if c.Port != 0 {
		b = strconv.AppendUint(append(b, `,"port":`...), uint64(c.Port), 10)
	}
	if c.Name != "" {
		b = jsonenc.String(append(b, `,"name":`...), c.Name)
	}
	return append(b, '}')
}

// AppendJSON appends g as json.Marshal writes it.
func (g *GameSpy) AppendJSON(b []byte) []byte {
	b = jsonenc.Bool(append(b, `{"query":`...), g.Query)
	b = jsonenc.String(append(b, `,"kind":`...), g.Kind)
	if g.QueryID != "" {
		b = jsonenc.String(append(b, `,"queryid":`...), g.QueryID)
	}
	if g.Final {
		b = append(b, `,"final":true`...)
	}
	if len(g.Fields) > 0 {
		b = append(b, `,"fields":[`...)
		for i, f := range g.Fields {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonenc.String(append(b, `{"key":`...), f.Key)
			b = jsonenc.String(append(b, `,"value":`...), f.Value)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	return append(b, '}')
}

var (
	_ jsonenc.Appender = (*Control)(nil)
	_ jsonenc.Appender = (*GameSpy)(nil)
)
