package pcapfilter

import (
	"fmt"

	"golang.org/x/net/bpf"
)

// Link is the link layer the compiled program reads.
type Link int

const (
	// Ethernet frames (what a Linux packet socket gives on Ethernet and on
	// the loopback device). 802.1Q tags are not looked through: the kernel
	// moves them out of the frame before socket filters run.
	Ethernet Link = iota
	// RawIP packets with no link header (tun devices and the like).
	RawIP
)

// maxInstructions is the kernel's BPF_MAXINSNS.
const maxInstructions = 4096

// label names a place in the program; labels are resolved after generation.
type label int

const (
	next   label = -1 // the following instruction
	accept label = 0
	reject label = 1
)

// ins is an instruction whose conditional jumps still name labels.
type ins struct {
	in     bpf.Instruction
	jt, jf label // for bpf.JumpIf
	ja     label // for bpf.Jump (unconditional), or next
}

type gen struct {
	link   Link
	off    uint32 // link header length
	prog   []ins
	labels []int // label -> instruction index
}

func (g *gen) newLabel() label {
	g.labels = append(g.labels, -1)
	return label(len(g.labels) - 1)
}

func (g *gen) place(l label) { g.labels[l] = len(g.prog) }

func (g *gen) emit(in bpf.Instruction) {
	g.prog = append(g.prog, ins{in: in, jt: next, jf: next, ja: next})
}

func (g *gen) jump(cond bpf.JumpTest, val uint32, t, f label) {
	g.prog = append(g.prog, ins{in: bpf.JumpIf{Cond: cond, Val: val}, jt: t, jf: f, ja: next})
}

func (g *gen) goTo(l label) { g.prog = append(g.prog, ins{in: bpf.Jump{}, jt: next, jf: next, ja: l}) }

// Compile turns e into a program for link that accepts a matching packet
// with snaplen bytes and drops the rest.
func (e *Expr) Compile(link Link, snaplen uint32) ([]bpf.Instruction, error) {
	g := &gen{link: link}
	switch link {
	case Ethernet:
		g.off = 14
	case RawIP:
		g.off = 0
	default:
		return nil, fmt.Errorf("pcapfilter: unknown link %d", link)
	}
	g.newLabel() // accept
	g.newLabel() // reject
	g.expr(e, accept, reject)
	g.place(accept)
	g.emit(bpf.RetConstant{Val: snaplen})
	g.place(reject)
	g.emit(bpf.RetConstant{Val: 0})

	if len(g.prog) > maxInstructions {
		return nil, fmt.Errorf("pcapfilter: the filter needs %d instructions, more than the kernel's %d", len(g.prog), maxInstructions)
	}
	out := make([]bpf.Instruction, len(g.prog))
	for i, in := range g.prog {
		rel := func(l label) (uint8, error) {
			if l == next {
				return 0, nil
			}
			d := g.labels[l] - (i + 1)
			if d < 0 || d > 255 {
				return 0, fmt.Errorf("pcapfilter: the filter is too large (a jump of %d instructions)", d)
			}
			return uint8(d), nil
		}
		switch x := in.in.(type) {
		case bpf.JumpIf:
			t, err := rel(in.jt)
			if err != nil {
				return nil, err
			}
			f, err := rel(in.jf)
			if err != nil {
				return nil, err
			}
			x.SkipTrue, x.SkipFalse = t, f
			out[i] = x
		case bpf.Jump:
			if in.ja != next {
				d := g.labels[in.ja] - (i + 1)
				if d < 0 {
					return nil, fmt.Errorf("pcapfilter: internal error: backward jump")
				}
				x.Skip = uint32(d)
			}
			out[i] = x
		default:
			out[i] = in.in
		}
	}
	return out, nil
}

// Compile parses expr and compiles it (see Expr.Compile).
func Compile(expr string, link Link, snaplen uint32) ([]bpf.Instruction, error) {
	e, err := Parse(expr)
	if err != nil {
		return nil, err
	}
	return e.Compile(link, snaplen)
}

// expr generates code that jumps to t when e matches and to f when not.
// Every jump goes forward: t and f are placed after the code.
func (g *gen) expr(e *Expr, t, f label) {
	switch e.k {
	case kAccept:
		g.goTo(t)
	case kAnd:
		mid := g.newLabel()
		g.expr(e.a, mid, f)
		g.place(mid)
		g.expr(e.b, t, f)
	case kOr:
		mid := g.newLabel()
		g.expr(e.a, t, mid)
		g.place(mid)
		g.expr(e.b, t, f)
	case kNot:
		g.expr(e.a, f, t)
	case kProto:
		g.ipv4(f)
		if e.proto == protoIP {
			g.goTo(t)
			return
		}
		g.emit(bpf.LoadAbsolute{Off: g.off + 9, Size: 1})
		g.jump(bpf.JumpEqual, uint32(e.proto), t, f)
	case kHost:
		g.ipv4(f)
		g.addr(e, t, f)
	case kPort:
		g.transport(e.proto, f)
		g.port(e, t, f)
	case kFirstByte:
		g.transport(protoUDP, f)
		g.emit(bpf.LoadIndirect{Off: g.off + 8, Size: 1})
		for i, v := range e.bytes {
			fl := next
			if i == len(e.bytes)-1 {
				fl = f
			}
			g.jump(bpf.JumpEqual, uint32(v), t, fl)
		}
		if len(e.bytes) == 0 {
			g.goTo(f)
		}
	}
}

// ipv4 jumps to f unless the packet is IPv4.
func (g *gen) ipv4(f label) {
	switch g.link {
	case Ethernet:
		g.emit(bpf.LoadAbsolute{Off: 12, Size: 2})
		g.jump(bpf.JumpEqual, 0x0800, next, f)
	case RawIP:
		g.emit(bpf.LoadAbsolute{Off: 0, Size: 1})
		g.emit(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: 0xf0})
		g.jump(bpf.JumpEqual, 0x40, next, f)
	}
}

// addr compares the source and/or destination address with e's.
func (g *gen) addr(e *Expr, t, f label) {
	load := func(off uint32) {
		g.emit(bpf.LoadAbsolute{Off: g.off + off, Size: 4})
		if e.mask != 0xffffffff {
			g.emit(bpf.ALUOpConstant{Op: bpf.ALUOpAnd, Val: e.mask})
		}
	}
	switch e.dir {
	case dirSrc:
		load(12)
		g.jump(bpf.JumpEqual, e.addr, t, f)
	case dirDst:
		load(16)
		g.jump(bpf.JumpEqual, e.addr, t, f)
	default:
		load(12)
		g.jump(bpf.JumpEqual, e.addr, t, next)
		load(16)
		g.jump(bpf.JumpEqual, e.addr, t, f)
	}
}

// transport jumps to f unless the packet is IPv4 of the protocol (tcp, udp
// or sctp for protoAny) and the first (or only) fragment, and leaves the
// IPv4 header length in X.
func (g *gen) transport(proto int, f label) {
	g.ipv4(f)
	g.emit(bpf.LoadAbsolute{Off: g.off + 9, Size: 1})
	if proto == protoAny {
		ok := g.newLabel()
		g.jump(bpf.JumpEqual, protoUDP, ok, next)
		g.jump(bpf.JumpEqual, protoTCP, ok, next)
		g.jump(bpf.JumpEqual, protoSCTP, ok, f)
		g.place(ok)
	} else {
		g.jump(bpf.JumpEqual, uint32(proto), next, f)
	}
	g.emit(bpf.LoadAbsolute{Off: g.off + 6, Size: 2})
	g.jump(bpf.JumpBitsSet, 0x1fff, f, next) // a later fragment: no ports
	g.emit(bpf.LoadMemShift{Off: g.off})
}

// port compares the source and/or destination port (X holds the IPv4
// header length) with e's range.
func (g *gen) port(e *Expr, t, f label) {
	one := func(off uint32, t, f label) {
		g.emit(bpf.LoadIndirect{Off: g.off + off, Size: 2})
		if e.lo == e.hi {
			g.jump(bpf.JumpEqual, uint32(e.lo), t, f)
			return
		}
		above := g.newLabel()
		g.jump(bpf.JumpGreaterOrEqual, uint32(e.lo), above, f)
		g.place(above)
		g.jump(bpf.JumpGreaterThan, uint32(e.hi), f, t)
	}
	switch e.dir {
	case dirSrc:
		one(0, t, f)
	case dirDst:
		one(2, t, f)
	default:
		dst := g.newLabel()
		one(0, t, dst)
		g.place(dst)
		one(2, t, f)
	}
}
