package pcapfilter

import (
	"encoding/binary"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/google/gopacket/pcapgo"
	"golang.org/x/net/bpf"
)

// frame describes a test packet.
type frame struct {
	proto        byte // 17, 6, 1; 0 = not IPv4 (an ARP frame)
	src, dst     [4]byte
	sport, dport uint16
	fragOff      uint16 // in 8-byte units; nonzero = a later fragment
	options      int    // IPv4 option words (IHL = 5 + options)
	payload      []byte
	raw          bool // no Ethernet header
}

func (f frame) bytes() []byte {
	var b []byte
	if !f.raw {
		b = append(b, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 1)
		if f.proto == 0 {
			return append(b, 0x08, 0x06, 0, 1, 8, 0, 6, 4, 0, 1)
		}
		b = append(b, 0x08, 0x00)
	}
	ihl := 5 + f.options
	l4 := []byte{}
	switch f.proto {
	case 17:
		l4 = binary.BigEndian.AppendUint16(l4, f.sport)
		l4 = binary.BigEndian.AppendUint16(l4, f.dport)
		l4 = binary.BigEndian.AppendUint16(l4, uint16(8+len(f.payload)))
		l4 = append(l4, 0, 0)
	case 6:
		l4 = binary.BigEndian.AppendUint16(l4, f.sport)
		l4 = binary.BigEndian.AppendUint16(l4, f.dport)
		l4 = append(l4, make([]byte, 16)...)
		l4[12] = 5 << 4
	case 1:
		l4 = append(l4, 8, 0, 0, 0, 0, 1, 0, 1)
	}
	if f.fragOff != 0 {
		l4 = nil // a later fragment: only payload bytes
	}
	l4 = append(l4, f.payload...)
	ip := []byte{byte(0x40 | ihl), 0}
	ip = binary.BigEndian.AppendUint16(ip, uint16(ihl*4+len(l4)))
	ip = append(ip, 0, 1)
	ip = binary.BigEndian.AppendUint16(ip, f.fragOff&0x1fff)
	ip = append(ip, 64, f.proto, 0, 0)
	ip = append(ip, f.src[:]...)
	ip = append(ip, f.dst[:]...)
	for i := 0; i < f.options; i++ {
		ip = append(ip, 1, 1, 1, 1) // NOPs
	}
	return append(append(b, ip...), l4...)
}

var (
	server = [4]byte{10, 0, 0, 1}
	client = [4]byte{10, 0, 1, 10}
	other  = [4]byte{192, 168, 7, 9}

	bcIn     = frame{proto: 17, src: client, dst: server, sport: 50000, dport: 22101, payload: []byte{0xff, 1, 2}}
	bcOut    = frame{proto: 17, src: server, dst: client, sport: 22101, dport: 50000, payload: []byte{0x01, 1, 2}}
	bcOpts   = frame{proto: 17, src: client, dst: server, sport: 50000, dport: 22101, options: 2, payload: []byte{2}}
	bcFrag   = frame{proto: 17, src: client, dst: server, fragOff: 185, payload: []byte{0x55, 0x56, 0x01, 0x01}}
	dns      = frame{proto: 17, src: other, dst: server, sport: 53, dport: 41000, payload: []byte{0x01, 0x02}}
	web      = frame{proto: 6, src: other, dst: server, sport: 40000, dport: 80}
	ping     = frame{proto: 1, src: server, dst: other}
	arp      = frame{}
	gamespy  = frame{proto: 17, src: server, dst: other, sport: 22101, dport: 6500, payload: []byte(`\gamename\bcommander`)}
	rawBCIn  = frame{proto: 17, src: client, dst: server, sport: 50000, dport: 22101, raw: true}
	rawOther = frame{proto: 17, src: other, dst: server, sport: 53, dport: 53, raw: true}
)

func run(t *testing.T, prog []bpf.Instruction, pkt []byte) bool {
	t.Helper()
	vm, err := bpf.NewVM(prog)
	if err != nil {
		t.Fatalf("NewVM: %v", err)
	}
	n, err := vm.Run(pkt)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return n > 0
}

func TestCompileMatches(t *testing.T) {
	all := map[string]frame{"bcIn": bcIn, "bcOut": bcOut, "bcOpts": bcOpts, "bcFrag": bcFrag, "dns": dns,
		"web": web, "ping": ping, "arp": arp, "gamespy": gamespy}
	cases := []struct {
		expr  string
		match []string // the rest of all must not match
	}{
		{"", []string{"bcIn", "bcOut", "bcOpts", "bcFrag", "dns", "web", "ping", "arp", "gamespy"}},
		{"ip", []string{"bcIn", "bcOut", "bcOpts", "bcFrag", "dns", "web", "ping", "gamespy"}},
		{"udp", []string{"bcIn", "bcOut", "bcOpts", "bcFrag", "dns", "gamespy"}},
		{"tcp", []string{"web"}},
		{"icmp", []string{"ping"}},
		{"not ip", []string{"arp"}},
		{"udp port 22101", []string{"bcIn", "bcOut", "bcOpts", "gamespy"}},
		{"port 22101", []string{"bcIn", "bcOut", "bcOpts", "gamespy"}},
		{"udp dst port 22101", []string{"bcIn", "bcOpts"}},
		{"udp src port 22101", []string{"bcOut", "gamespy"}},
		{"tcp port 22101", nil},
		{"port 80", []string{"web"}},
		{"udp port 22101 or 53", []string{"bcIn", "bcOut", "bcOpts", "gamespy", "dns"}},
		{"portrange 22100-22110", []string{"bcIn", "bcOut", "bcOpts", "gamespy"}},
		{"udp portrange 50-60", []string{"dns"}},
		{"dst portrange 6000-7000", []string{"gamespy"}},
		{"src portrange 40000-50000", []string{"bcIn", "bcOpts", "web"}},
		{"host 10.0.1.10", []string{"bcIn", "bcOut", "bcOpts", "bcFrag"}},
		{"src host 10.0.0.1", []string{"bcOut", "ping", "gamespy"}},
		{"dst host 10.0.0.1", []string{"bcIn", "bcOpts", "bcFrag", "dns", "web"}},
		{"ip host 192.168.7.9", []string{"dns", "web", "ping", "gamespy"}},
		{"net 10.0.0.0/16", []string{"bcIn", "bcOut", "bcOpts", "bcFrag", "dns", "web", "ping", "gamespy"}},
		{"src net 192.168.0.0/16", []string{"dns", "web"}},
		{"net 10.0.1.0 mask 255.255.255.0", []string{"bcIn", "bcOut", "bcOpts", "bcFrag"}},
		{"10.0.1.10", []string{"bcIn", "bcOut", "bcOpts", "bcFrag"}},
		{"udp and not port 22101", []string{"bcFrag", "dns"}},
		{"udp && !port 22101", []string{"bcFrag", "dns"}},
		{"(tcp or icmp) and host 192.168.7.9", []string{"web", "ping"}},
		{"tcp || icmp && host 10.0.1.10", []string{"web"}}, // and binds tighter
		{"not (udp or tcp)", []string{"ping", "arp"}},
		{"not not udp port 53", []string{"dns"}},
		{"UDP PORT 22101 AND SRC HOST 10.0.0.1", []string{"bcOut", "gamespy"}},
	}
	for _, c := range cases {
		prog, err := Compile(c.expr, Ethernet, 65535)
		if err != nil {
			t.Errorf("%q: %v", c.expr, err)
			continue
		}
		want := map[string]bool{}
		for _, m := range c.match {
			want[m] = true
		}
		for name, f := range all {
			if got := run(t, prog, f.bytes()); got != want[name] {
				t.Errorf("%q on %s: match = %v, want %v", c.expr, name, got, want[name])
			}
		}
	}
}

func TestCompileRawIP(t *testing.T) {
	prog, err := Compile("udp dst port 22101", RawIP, 65535)
	if err != nil {
		t.Fatal(err)
	}
	if !run(t, prog, rawBCIn.bytes()) {
		t.Error("raw BC packet not matched")
	}
	if run(t, prog, rawOther.bytes()) {
		t.Error("raw DNS packet matched")
	}
	if run(t, prog, []byte{0x60, 0, 0, 0}) {
		t.Error("IPv6 matched")
	}
}

func TestFirstByteAndComposition(t *testing.T) {
	e := Or(UDPPort(22101), And(UDPFirstByte(0x01, '\\'), Accept()))
	prog, err := e.Compile(Ethernet, 1500)
	if err != nil {
		t.Fatal(err)
	}
	// dns's payload starts with 0x01; bcFrag is a later fragment whose
	// bytes must not be read as a UDP payload.
	for f, want := range map[*frame]bool{&bcIn: true, &bcOut: true, &gamespy: true, &dns: true,
		&bcFrag: false, &web: false, &arp: false} {
		if got := run(t, prog, f.bytes()); got != want {
			t.Errorf("%s on %+v: %v, want %v", e, *f, got, want)
		}
	}
	gs := frame{proto: 17, src: other, dst: client, sport: 7000, dport: 7001, payload: []byte(`\status\`)}
	if !run(t, prog, gs.bytes()) {
		t.Error("GameSpy datagram on another port not matched")
	}
	if vm, _ := bpf.NewVM(prog); vm != nil {
		if n, _ := vm.Run(bcIn.bytes()); n != 1500 {
			t.Errorf("accept returns %d, want the snap length 1500", n)
		}
	}
}

// TestRealFrames runs the default live filter over every frame of a bundled
// capture (all Bridge Commander traffic on port 22101) and a negated one.
func TestRealFrames(t *testing.T) {
	f, err := os.Open("../../testdata/pcaps/join.pcap")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := pcapgo.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	yes, err := Compile("udp port 22101", Ethernet, 65535)
	if err != nil {
		t.Fatal(err)
	}
	no, err := Compile("not udp port 22101 or tcp", Ethernet, 65535)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for {
		data, _, err := r.ReadPacketData()
		if err != nil {
			break
		}
		n++
		if !run(t, yes, data) {
			t.Fatalf("frame %d: udp port 22101 did not match", n)
		}
		if run(t, no, data) {
			t.Fatalf("frame %d: negated filter matched", n)
		}
	}
	if n < 10 {
		t.Fatalf("only %d frames read", n)
	}
}

func TestSyntaxErrors(t *testing.T) {
	cases := []struct {
		expr string
		col  int
		msg  string
	}{
		{"ip6", 1, `"ip6" is not supported`},
		{"udp and ip6", 9, `"ip6" is not supported`},
		{"udp port", 9, `needs a value`},
		{"udp port x", 10, "not a port number"},
		{"port 70000", 6, "not a port number"},
		{"host 10.0.0", 6, "not an IPv4 address"},
		{"host fe80::1", 6, "not an IPv4 address"},
		{"tcp host 10.0.0.1", 1, `cannot qualify "host"`},
		{"icmp port 3", 1, "has no ports"},
		{"(udp", 5, `missing ")"`},
		{"udp)", 4, `")" without a matching "("`},
		{"udp tcp", 5, `expected "and" or "or"`},
		{"udp and", 8, "ends where a primitive"},
		{"udp & tcp", 5, `write "&&"`},
		{"udp[8] = 1", 4, `unexpected "["`},
		{"src foo", 5, `expected "host"`},
		{"src or dst host 10.0.0.1", 1, "not supported"},
		{"portrange 10", 11, "not a port range"},
		{"net 10.0.0.1/8", 5, "host bits set"},
		{"22101", 1, "not a primitive"},
		{"len > 100", 1, `"len" is not supported`},
		{"and udp", 1, "where a primitive was expected"},
	}
	for _, c := range cases {
		_, err := Compile(c.expr, Ethernet, 65535)
		var se *SyntaxError
		if !errors.As(err, &se) {
			t.Errorf("%q: error %v, want a *SyntaxError", c.expr, err)
			continue
		}
		if se.Col != c.col || !strings.Contains(se.Msg, c.msg) {
			t.Errorf("%q: column %d %q, want column %d containing %q", c.expr, se.Col, se.Msg, c.col, c.msg)
		}
		if !strings.Contains(err.Error(), "column") {
			t.Errorf("%q: message %q does not name the column", c.expr, err)
		}
	}
}

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		"udp port 22101":                "udp port 22101",
		"not src net 10.0.0.0/8 or tcp": "(not src net 10.0.0.0/8 or tcp)",
		"dst portrange 2-1":             "dst portrange 1-2",
		"host 1.2.3.4 and udp":          "(host 1.2.3.4 and udp)",
	} {
		e, err := Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := e.String(); got != want {
			t.Errorf("%q: String() = %q, want %q", in, got, want)
		}
		// The rendering parses to the same program.
		p1, _ := e.Compile(Ethernet, 100)
		p2, err := Compile(e.String(), Ethernet, 100)
		if err != nil || len(p1) != len(p2) {
			t.Errorf("%q: rendering does not recompile the same: %v", in, err)
		}
	}
}

func FuzzCompile(f *testing.F) {
	for _, s := range []string{"udp port 22101", "not (tcp or icmp) and host 1.2.3.4", "portrange 1-2 or 3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		prog, err := Compile(s, Ethernet, 65535)
		if err != nil {
			return
		}
		if _, err := bpf.Assemble(prog); err != nil {
			t.Fatalf("%q compiled to an unassemblable program: %v", s, err)
		}
		vm, err := bpf.NewVM(prog)
		if err != nil {
			t.Fatalf("%q: %v", s, err)
		}
		_, _ = vm.Run(bcIn.bytes())
	})
}
