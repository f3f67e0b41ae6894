// Package pcapfilter compiles a documented subset of the tcpdump (pcap-filter)
// expression language to classic BPF, without libpcap or cgo, so that
// `bcwire live` can hand the kernel a socket filter.
//
// The subset, all on IPv4:
//
//	ip | udp | tcp | icmp                  the protocol
//	[ip] [src|dst] host A.B.C.D            an address
//	[ip] [src|dst] net A.B.C.D/N           an address range (also net A.B.C.D mask M.M.M.M)
//	[udp|tcp] [src|dst] port N             a port (tcp, udp or sctp unless one is named)
//	[udp|tcp] [src|dst] portrange N-M      a port range
//	not X, X and Y, X or Y, ( X )          also written !, &&, ||
//
// A bare value repeats the previous primitive's qualifiers, as in tcpdump:
// "port 22101 or 22102" means "port 22101 or port 22102". Ports match only
// the first fragment of a fragmented datagram (later fragments carry no
// ports), as in tcpdump. Anything else (ip6, arp, ether, vlan, byte offsets
// like udp[8], len, ...) is refused with the column where it starts.
package pcapfilter

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// SyntaxError is a filter the package cannot compile. Col is the 1-based
// column in the expression where the problem starts.
type SyntaxError struct {
	Expr string
	Col  int
	Msg  string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("filter %q: column %d: %s", e.Expr, e.Col, e.Msg)
}

// Supported lists the supported primitives, for error messages and help.
const Supported = "ip, udp, tcp, icmp, [src|dst] host ADDR, [src|dst] net ADDR/BITS, [udp|tcp] [src|dst] port N, [udp|tcp] [src|dst] portrange N-M, not/and/or (!, &&, ||) and parentheses"

// Protocol numbers used by primitives.
const (
	protoAny  = 0
	protoICMP = 1
	protoTCP  = 6
	protoUDP  = 17
	protoSCTP = 132
	protoIP   = 256 // "ip": any IPv4 packet
)

type dir uint8

const (
	dirAny dir = iota
	dirSrc
	dirDst
)

type kind uint8

const (
	kAccept kind = iota // matches everything
	kAnd
	kOr
	kNot
	kProto     // IPv4 with protocol proto (or any IPv4 when proto == protoIP)
	kHost      // addr (with mask for net)
	kPort      // port range lo..hi; proto protoAny means tcp, udp or sctp
	kFirstByte // UDP payload's first byte is one of bytes (internal, for --auto)
)

// Expr is a parsed filter expression. Build one with Parse or with the
// constructors (UDPPort, UDPFirstByte, Or), then Compile it.
type Expr struct {
	k      kind
	a, b   *Expr
	proto  int
	dir    dir
	addr   uint32
	mask   uint32
	lo, hi uint16
	bytes  []byte
}

// Accept is the expression that matches every packet.
func Accept() *Expr { return &Expr{k: kAccept} }

// UDPPort matches UDP datagrams from or to port.
func UDPPort(port uint16) *Expr {
	return &Expr{k: kPort, proto: protoUDP, lo: port, hi: port}
}

// UDPFirstByte matches UDP datagrams (first fragments) whose payload starts
// with one of vals. tcpdump would write it udp[8] = V.
func UDPFirstByte(vals ...byte) *Expr {
	return &Expr{k: kFirstByte, proto: protoUDP, bytes: append([]byte(nil), vals...)}
}

// Or matches what any of es matches; nil entries are skipped.
func Or(es ...*Expr) *Expr {
	var out *Expr
	for _, e := range es {
		switch {
		case e == nil:
		case out == nil:
			out = e
		default:
			out = &Expr{k: kOr, a: out, b: e}
		}
	}
	if out == nil {
		return Accept()
	}
	return out
}

// And matches what all of es match; nil entries are skipped.
func And(es ...*Expr) *Expr {
	var out *Expr
	for _, e := range es {
		switch {
		case e == nil:
		case out == nil:
			out = e
		default:
			out = &Expr{k: kAnd, a: out, b: e}
		}
	}
	if out == nil {
		return Accept()
	}
	return out
}

// String renders e in the filter language (fully parenthesised).
func (e *Expr) String() string {
	switch e.k {
	case kAccept:
		return ""
	case kAnd:
		return "(" + e.a.String() + " and " + e.b.String() + ")"
	case kOr:
		return "(" + e.a.String() + " or " + e.b.String() + ")"
	case kNot:
		return "not " + e.a.String()
	case kProto:
		return protoName(e.proto)
	case kHost:
		s := dirName(e.dir)
		a := netip.AddrFrom4(be4(e.addr))
		if e.mask == 0xffffffff {
			return s + "host " + a.String()
		}
		bits := 0
		for m := e.mask; m&0x80000000 != 0; m <<= 1 {
			bits++
		}
		return s + "net " + a.String() + "/" + strconv.Itoa(bits)
	case kPort:
		s := ""
		if e.proto != protoAny {
			s = protoName(e.proto) + " "
		}
		s += dirName(e.dir)
		if e.lo == e.hi {
			return s + "port " + strconv.Itoa(int(e.lo))
		}
		return s + "portrange " + strconv.Itoa(int(e.lo)) + "-" + strconv.Itoa(int(e.hi))
	case kFirstByte:
		parts := make([]string, len(e.bytes))
		for i, v := range e.bytes {
			parts[i] = fmt.Sprintf("udp[8] = 0x%02x", v)
		}
		return "(" + strings.Join(parts, " or ") + ")"
	}
	return "?"
}

func protoName(p int) string {
	switch p {
	case protoIP:
		return "ip"
	case protoUDP:
		return "udp"
	case protoTCP:
		return "tcp"
	case protoICMP:
		return "icmp"
	}
	return "proto " + strconv.Itoa(p)
}

func dirName(d dir) string {
	switch d {
	case dirSrc:
		return "src "
	case dirDst:
		return "dst "
	}
	return ""
}

func be4(v uint32) [4]byte { return [4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)} }

// token is one lexical element with its 1-based column.
type token struct {
	s   string
	col int
}

func isWordByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '.' || c == '/' || c == '-' || c == '_' || c == ':'
}

func lex(s string) ([]token, *SyntaxError) {
	var toks []token
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case c == '(' || c == ')':
			toks = append(toks, token{string(c), i + 1})
			i++
		case c == '!':
			if i+1 < len(s) && s[i+1] == '=' {
				return nil, &SyntaxError{Expr: s, Col: i + 1, Msg: `comparisons ("!=") are not supported (supported: ` + Supported + ")"}
			}
			toks = append(toks, token{"not", i + 1})
			i++
		case c == '&' || c == '|':
			if i+1 < len(s) && s[i+1] == c {
				op := "and"
				if c == '|' {
					op = "or"
				}
				toks = append(toks, token{op, i + 1})
				i += 2
				continue
			}
			return nil, &SyntaxError{Expr: s, Col: i + 1, Msg: fmt.Sprintf("%q is not supported; write %q", string(c), string(c)+string(c))}
		case isWordByte(c):
			j := i
			for j < len(s) && isWordByte(s[j]) {
				j++
			}
			toks = append(toks, token{strings.ToLower(s[i:j]), i + 1})
			i = j
		default:
			for _, t := range toks { // name an unsupported keyword before it, if any
				if unsupportedWords[t.s] {
					return nil, &SyntaxError{Expr: s, Col: t.col, Msg: fmt.Sprintf("%q is not supported (supported: %s)", t.s, Supported)}
				}
			}
			return nil, &SyntaxError{Expr: s, Col: i + 1, Msg: fmt.Sprintf("unexpected %q (supported: %s)", string(c), Supported)}
		}
	}
	return toks, nil
}

type parser struct {
	src  string
	toks []token
	pos  int
	// last primitive, for bare values ("port 80 or 443")
	last *Expr
}

// Parse reads a filter expression. An empty (or all-blank) expression
// matches everything.
func Parse(s string) (*Expr, error) {
	toks, serr := lex(s)
	if serr != nil {
		return nil, serr
	}
	if len(toks) == 0 {
		return Accept(), nil
	}
	p := &parser{src: s, toks: toks}
	e, err := p.or()
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.toks) {
		t := p.toks[p.pos]
		if t.s == ")" {
			return nil, p.errAt(t, `")" without a matching "("`)
		}
		return nil, p.errAt(t, fmt.Sprintf("expected \"and\" or \"or\" before %q", t.s))
	}
	return e, nil
}

func (p *parser) errAt(t token, msg string) *SyntaxError {
	return &SyntaxError{Expr: p.src, Col: t.col, Msg: msg}
}

func (p *parser) errEnd(msg string) *SyntaxError {
	return &SyntaxError{Expr: p.src, Col: len(p.src) + 1, Msg: msg}
}

func (p *parser) peek() (token, bool) {
	if p.pos < len(p.toks) {
		return p.toks[p.pos], true
	}
	return token{}, false
}

func (p *parser) or() (*Expr, error) {
	e, err := p.and()
	if err != nil {
		return nil, err
	}
	for {
		t, ok := p.peek()
		if !ok || t.s != "or" {
			return e, nil
		}
		p.pos++
		r, err := p.and()
		if err != nil {
			return nil, err
		}
		e = &Expr{k: kOr, a: e, b: r}
	}
}

func (p *parser) and() (*Expr, error) {
	e, err := p.unary()
	if err != nil {
		return nil, err
	}
	for {
		t, ok := p.peek()
		if !ok || t.s != "and" {
			return e, nil
		}
		p.pos++
		r, err := p.unary()
		if err != nil {
			return nil, err
		}
		e = &Expr{k: kAnd, a: e, b: r}
	}
}

func (p *parser) unary() (*Expr, error) {
	t, ok := p.peek()
	if !ok {
		return nil, p.errEnd("the expression ends where a primitive was expected")
	}
	switch t.s {
	case "not":
		p.pos++
		e, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &Expr{k: kNot, a: e}, nil
	case "(":
		p.pos++
		e, err := p.or()
		if err != nil {
			return nil, err
		}
		c, ok := p.peek()
		if !ok {
			return nil, p.errEnd(fmt.Sprintf(`missing ")" for the "(" at column %d`, t.col))
		}
		if c.s != ")" {
			return nil, p.errAt(c, fmt.Sprintf("expected \")\" or an operator before %q", c.s))
		}
		p.pos++
		return e, nil
	case ")", "and", "or":
		return nil, p.errAt(t, fmt.Sprintf("%q where a primitive was expected", t.s))
	}
	return p.primitive()
}

var unsupportedWords = map[string]bool{
	"ip6": true, "arp": true, "rarp": true, "ether": true, "vlan": true, "mpls": true,
	"len": true, "greater": true, "less": true, "broadcast": true, "multicast": true,
	"gateway": true, "proto": true, "icmp6": true, "sctp": true, "igmp": true, "link": true,
	"inbound": true, "outbound": true, "ifname": true, "fddi": true, "wlan": true,
	"decnet": true, "atalk": true, "ipx": true, "iso": true, "pppoed": true, "pppoes": true,
	"geneve": true, "ah": true, "esp": true, "tr": true, "type": true, "subtype": true,
}

// primitive reads [proto] [dir] [kind] [value], or a bare value.
func (p *parser) primitive() (*Expr, error) {
	start, _ := p.peek()
	proto, d, k := -1, dirAny, ""
	var protoTok, dirTok token
	if t, ok := p.peek(); ok {
		switch t.s {
		case "ip":
			proto, protoTok = protoIP, t
			p.pos++
		case "udp":
			proto, protoTok = protoUDP, t
			p.pos++
		case "tcp":
			proto, protoTok = protoTCP, t
			p.pos++
		case "icmp":
			proto, protoTok = protoICMP, t
			p.pos++
		}
	}
	if t, ok := p.peek(); ok && (t.s == "src" || t.s == "dst") {
		dirTok = t
		d = dirSrc
		if t.s == "dst" {
			d = dirDst
		}
		p.pos++
		if n, ok := p.peek(); ok && (n.s == "or" || n.s == "and") && p.pos+1 < len(p.toks) &&
			(p.toks[p.pos+1].s == "dst" || p.toks[p.pos+1].s == "src") {
			return nil, p.errAt(t, `"src or dst" and "src and dst" are not supported; write "host X" or "src host X and dst host Y"`)
		}
	}
	if t, ok := p.peek(); ok {
		switch t.s {
		case "host", "net", "port", "portrange":
			k = t.s
			p.pos++
		}
	}
	if k == "" {
		if d != dirAny {
			t, ok := p.peek()
			if !ok {
				return nil, p.errEnd(`expected "host", "net", "port" or "portrange" after "` + dirTok.s + `"`)
			}
			return nil, p.errAt(t, fmt.Sprintf(`expected "host", "net", "port" or "portrange" after %q, not %q`, dirTok.s, t.s))
		}
		if proto >= 0 {
			return &Expr{k: kProto, proto: proto}, nil
		}
		// A bare value: repeat the previous primitive's qualifiers.
		t := start
		if unsupportedWords[t.s] {
			return nil, p.errAt(t, fmt.Sprintf("%q is not supported (supported: %s)", t.s, Supported))
		}
		if p.last == nil {
			if _, err := netip.ParseAddr(t.s); err == nil {
				k = "host" // tcpdump reads a bare address as a host
			} else {
				return nil, p.errAt(t, fmt.Sprintf("%q is not a primitive (supported: %s)", t.s, Supported))
			}
		} else {
			return p.value(p.last.k, p.last.proto, p.last.dir, p.lastKind(), t)
		}
	}
	t, ok := p.peek()
	if !ok {
		return nil, p.errEnd(fmt.Sprintf("%q needs a value", k))
	}
	switch {
	case (k == "host" || k == "net") && proto != -1 && proto != protoIP:
		return nil, p.errAt(protoTok, fmt.Sprintf("%q cannot qualify %q (only \"ip\" can)", protoTok.s, k))
	case (k == "port" || k == "portrange") && (proto == protoIP || proto == protoICMP):
		return nil, p.errAt(protoTok, fmt.Sprintf("%q has no ports; use udp or tcp", protoTok.s))
	}
	if proto == -1 || proto == protoIP {
		proto = protoAny
	}
	ek := kHost
	if k == "port" || k == "portrange" {
		ek = kPort
	}
	return p.value(ek, proto, d, k, t)
}

func (p *parser) lastKind() string {
	switch {
	case p.last.k == kHost && p.last.mask == 0xffffffff:
		return "host"
	case p.last.k == kHost:
		return "net"
	case p.last.lo == p.last.hi:
		return "port"
	}
	return "portrange"
}

// value reads the value token t of a primitive of kind k.
func (p *parser) value(ek kind, proto int, d dir, k string, t token) (*Expr, error) {
	p.pos++
	e := &Expr{k: ek, proto: proto, dir: d}
	switch k {
	case "host":
		a, err := netip.ParseAddr(t.s)
		if err != nil || !a.Is4() {
			return nil, p.errAt(t, fmt.Sprintf("%q is not an IPv4 address (host names and IPv6 are not supported)", t.s))
		}
		e.addr, e.mask = u32(a), 0xffffffff
	case "net":
		pf, err := netip.ParsePrefix(t.s)
		if err != nil {
			a, aerr := netip.ParseAddr(t.s)
			if aerr != nil || !a.Is4() {
				return nil, p.errAt(t, fmt.Sprintf("%q is not an IPv4 network (write A.B.C.D/BITS)", t.s))
			}
			mask := uint32(0xffffffff)
			if m, ok := p.peek(); ok && m.s == "mask" {
				p.pos++
				mt, ok := p.peek()
				if !ok {
					return nil, p.errEnd(`"mask" needs a value`)
				}
				ma, merr := netip.ParseAddr(mt.s)
				if merr != nil || !ma.Is4() {
					return nil, p.errAt(mt, fmt.Sprintf("%q is not an IPv4 mask", mt.s))
				}
				p.pos++
				mask = u32(ma)
			}
			e.addr, e.mask = u32(a)&mask, mask
		} else {
			if !pf.Addr().Is4() {
				return nil, p.errAt(t, fmt.Sprintf("%q is not an IPv4 network", t.s))
			}
			if pf.Masked() != pf {
				return nil, p.errAt(t, fmt.Sprintf("%q has host bits set (did you mean %s?)", t.s, pf.Masked()))
			}
			e.mask = ^uint32(0) << (32 - pf.Bits())
			if pf.Bits() == 0 {
				e.mask = 0
			}
			e.addr = u32(pf.Addr())
		}
	case "port":
		n, err := strconv.ParseUint(t.s, 10, 16)
		if err != nil {
			return nil, p.errAt(t, fmt.Sprintf("%q is not a port number (0-65535; service names are not supported)", t.s))
		}
		e.lo, e.hi = uint16(n), uint16(n)
	case "portrange":
		a, b, ok := strings.Cut(t.s, "-")
		lo, err1 := strconv.ParseUint(a, 10, 16)
		hi, err2 := strconv.ParseUint(b, 10, 16)
		if !ok || err1 != nil || err2 != nil {
			return nil, p.errAt(t, fmt.Sprintf("%q is not a port range (write LOW-HIGH, e.g. 22101-22110)", t.s))
		}
		if lo > hi {
			lo, hi = hi, lo
		}
		e.lo, e.hi = uint16(lo), uint16(hi)
	}
	p.last = e
	return e, nil
}

func u32(a netip.Addr) uint32 {
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}
