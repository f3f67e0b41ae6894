package dissect

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"net/netip"
)

// The GameSpy master server's list protocol, on TCP (port 28900 by
// default), as a game client browsing for servers speaks it
// (STBC-Dedicated-Server docs/networking/gamespy-discovery.md §3 and §9,
// stock bytes in shared/vectors/stock-payloads-2.json):
//
//	master → client   \basic\\secure\LRPOPQ                     the challenge
//	client → master   \gamename\bcommander\gamever\1.6\location\0\validate\hMwdTNWS\final\\queryid\1.1\
//	client → master   \list\cmp\gamename\bcommander\final\      the list request
//	master → client   6 bytes a server (IPv4, port big-endian) … \final\
//
// The text messages are GameSpy key/value text, as on UDP; the list
// ("cmp", compressed) is binary. A stream is cut into messages where its
// sender's segments end (MasterSplitter), except the list, which runs to
// its \final\.

// MasterKind is what a message of the master protocol is.
type MasterKind uint8

// The master protocol's messages.
const (
	MasterText      MasterKind = iota // key/value text that is none of the below
	MasterChallenge                   // the master's \basic\\secure\CHALLENGE
	MasterValidate                    // the client's answer, with \validate\
	MasterListReq                     // the client's \list\FILTER\gamename\GAME
	MasterList                        // the master's binary list of servers
)

var masterKindNames = [...]string{"text", "challenge", "validate", "list-request", "list"}

func (k MasterKind) String() string {
	if int(k) < len(masterKindNames) {
		return masterKindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// MarshalText gives the name, for JSON.
func (k MasterKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// MasterMessage is one message of the master list protocol.
type MasterMessage struct {
	Kind MasterKind `json:"kind"`
	// Text holds a text message's key/value pairs (nil for the list).
	Text *GameSpy `json:"text,omitempty"`
	// Servers are the list's entries, in order.
	Servers []netip.AddrPort `json:"servers,omitempty"`
	// Final: the list ended with \final\.
	Final bool `json:"final,omitempty"`
	// Trailing: the text ended with a backslash after its last value, as
	// the stock client's validate message does (\queryid\1.1\).
	Trailing bool `json:"-"`
}

// masterFinal ends the binary list.
var masterFinal = []byte(`\final\`)

// ParseMasterMessage parses one message; fromMaster says which side sent
// it (the list is binary only from the master).
func ParseMasterMessage(b []byte, fromMaster bool) (MasterMessage, error) {
	if fromMaster && bytes.Equal(b, masterFinal) {
		return MasterMessage{Kind: MasterList, Servers: []netip.AddrPort{}, Final: true}, nil // an empty list
	}
	if fromMaster && (!IsGameSpy(b) || !printable(b)) {
		return parseMasterList(b)
	}
	g, err := ParseGameSpy(b)
	if err != nil {
		return MasterMessage{Kind: MasterText}, err
	}
	if fromMaster && len(g.Fields) == 0 {
		// No key, only \final (a cut \final\): the end of a list, not text
		// (GameSpy text of no fields re-encodes as the empty list).
		return parseMasterList(b)
	}
	m := MasterMessage{Kind: MasterText, Text: &g}
	if enc := g.Append(nil); len(enc)+1 == len(b) && b[len(b)-1] == '\\' && bytes.HasPrefix(b, enc) {
		m.Trailing = true
	}
	switch {
	case fromMaster && g.Query && g.has("secure"):
		m.Kind = MasterChallenge
	case !fromMaster && g.has("validate"):
		m.Kind = MasterValidate
	case !fromMaster && len(g.Fields) > 0 && g.Fields[0].Key == "list":
		m.Kind = MasterListReq
	}
	return m, nil
}

// printable tells a binary list that happens to start with a backslash (a
// server at 92.x.x.x) from text: the master's text holds only printable
// bytes, so a message from it with any other byte is a list (damaged if it
// does not fit one). Text with such a byte could not be told from a list
// by its re-encoding (GameSpy text puts \final\ last).
func printable(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7E {
			return false
		}
	}
	return true
}

func (g *GameSpy) has(key string) bool {
	for _, f := range g.Fields {
		if f.Key == key {
			return true
		}
	}
	return false
}

func parseMasterList(b []byte) (MasterMessage, error) {
	m := MasterMessage{Kind: MasterList}
	body := b
	if bytes.HasSuffix(b, masterFinal) {
		m.Final = true
		body = b[:len(b)-len(masterFinal)]
	}
	n := len(body) / 6
	m.Servers = make([]netip.AddrPort, 0, n)
	for i := range n {
		e := body[6*i:]
		m.Servers = append(m.Servers, netip.AddrPortFrom(netip.AddrFrom4([4]byte(e[:4])), binary.BigEndian.Uint16(e[4:6])))
	}
	if r := len(body) % 6; r != 0 {
		return m, &Error{Offset: 6 * n, What: "server list entry", Err: fmt.Errorf("%w: %d of 6 bytes", ErrShort, r)}
	}
	if !m.Final {
		return m, &Error{Offset: len(b), What: "server list", Err: fmt.Errorf("%w: no \\final\\", ErrShort)}
	}
	return m, nil
}

// Append encodes m.
func (m *MasterMessage) Append(b []byte) []byte {
	if m.Kind == MasterList {
		for _, s := range m.Servers {
			a := s.Addr().As4()
			b = binary.BigEndian.AppendUint16(append(b, a[:]...), s.Port())
		}
		if m.Final {
			b = append(b, masterFinal...)
		}
		return b
	}
	if m.Text == nil {
		return b
	}
	b = m.Text.Append(b)
	if m.Trailing {
		b = append(b, '\\')
	}
	return b
}

// String is decode's text form.
func (m *MasterMessage) String() string {
	if m.Kind == MasterList {
		s := fmt.Sprintf("master list: %d servers", len(m.Servers))
		for i, a := range m.Servers {
			if i == 8 {
				s += fmt.Sprintf(" …(%d more)", len(m.Servers)-8)
				break
			}
			s += " " + a.String()
		}
		if !m.Final {
			s += " (no \\final\\)"
		}
		return s
	}
	var b bytes.Buffer
	b.WriteString("master " + m.Kind.String() + ":")
	if m.Text != nil {
		for _, f := range m.Text.Fields {
			fmt.Fprintf(&b, " %s=%q", f.Key, f.Value)
		}
		if m.Text.QueryID != "" {
			fmt.Fprintf(&b, " queryid=%q", m.Text.QueryID)
		}
	}
	return b.String()
}

// MasterSplitter cuts one direction of a master TCP stream into messages:
// each delivery of in-order bytes is a message, except that the master's
// binary list is held until its \final\ (it may span segments). Held
// bytes are capped at MaxMasterMessage; past that the held bytes are
// returned as they are, to be reported.
type MasterSplitter struct {
	FromMaster bool
	held       []byte
}

// MaxMasterMessage caps a message held across segments: a list of 10,000
// servers is 60 KB.
const MaxMasterMessage = 256 << 10

// Push adds in-order stream bytes and returns the messages they complete
// (aliasing an internal buffer until the next Push).
func (s *MasterSplitter) Push(p []byte) [][]byte {
	if !s.FromMaster {
		return [][]byte{p}
	}
	if len(s.held) == 0 && IsGameSpy(p) && printable(p) {
		return [][]byte{p}
	}
	s.held = append(s.held, p...)
	if bytes.HasSuffix(s.held, masterFinal) || len(s.held) >= MaxMasterMessage {
		out := s.held
		s.held = nil
		return [][]byte{out}
	}
	return nil
}

// Flush returns bytes still held (a list cut off by the end of the
// stream), or nil.
func (s *MasterSplitter) Flush() []byte {
	out := s.held
	s.held = nil
	return out
}
