package jsongen

// The header's wire methods: reset, the two readers, the writer and the
// count of packed bits (see header.go for the tags).

import (
	"fmt"
	"go/types"
	"strings"
)

func (g *hgen) writeReset() error {
	fmt.Fprintf(g.out, "// resetHeader zeroes %s's header fields.\nfunc (m *%s) resetHeader() {\n", g.name, g.name)
	for _, f := range g.fields {
		zero := "0"
		switch u := f.v.Type().Underlying().(type) {
		case *types.Basic:
			if u.Kind() == types.Bool {
				zero = "false"
			}
		default:
			zero = g.typ(f.v.Type()) + "{}"
		}
		fmt.Fprintf(g.out, "m.%s = %s\n", f.v.Name(), zero)
	}
	g.out.WriteString("}\n\n")
	return nil
}

func (g *hgen) writeRead() error {
	g.imports[dissectPath] = true
	fmt.Fprintf(g.out, "// readHeader reads %s's header through r, field by field: the plain\n// form, which names the field a short message ends in.\n", g.name)
	fmt.Fprintf(g.out, "func (m *%s) readHeader(r *dissect.Reader) {\n", g.name)
	if err := g.flagged(g.localFlags(), func(f *hfield) (string, error) {
		code, err := g.read("m."+f.v.Name(), f.v.Type(), f.what)
		return ifCond(f, code), err
	}); err != nil {
		return err
	}
	g.out.WriteString("}\n\n")
	return nil
}

// read returns the statements that read dst, of type t, through the Reader r.
func (g *hgen) read(dst string, t types.Type, what string) (string, error) {
	if st, ok := t.Underlying().(*types.Struct); ok {
		var s strings.Builder
		for i := range st.NumFields() {
			code, err := g.read(dst+"."+st.Field(i).Name(), st.Field(i).Type(), what+" "+partName(st, i))
			if err != nil {
				return "", err
			}
			s.WriteString(code)
		}
		return s.String(), nil
	}
	if name, ok := g.ioMethod(t); ok {
		return fmt.Sprintf("%s = r.%s(%q)\n", dst, name, what), nil
	}
	b, _ := basicOf(t)
	if b.Kind() == types.Bool {
		return fmt.Sprintf("%s = r.Bit(%q)\n", dst, what), nil
	}
	m, k := readerMethod(b.Kind())
	if m == "" {
		return "", fmt.Errorf("%s: no Reader method", t)
	}
	return fmt.Sprintf("%s = %s\n", dst, g.conv(t, k, fmt.Sprintf("r.%s(%q)", m, what))), nil
}

// readerMethod names the Reader and Writer method of a basic kind and the
// kind it returns.
func readerMethod(k types.BasicKind) (string, types.BasicKind) {
	switch k {
	case types.Uint8:
		return "U8", types.Uint8
	case types.Int8:
		return "I8", types.Int8
	case types.Uint16:
		return "U16", types.Uint16
	case types.Uint32:
		return "U32", types.Uint32
	case types.Int32:
		return "I32", types.Int32
	case types.Float32:
		return "F32", types.Float32
	}
	return "", 0
}

func (g *hgen) writeReadFast() error {
	g.imports[dissectPath] = true
	fmt.Fprintf(g.out, `// readHeaderFast is readHeader by offset, straight from b, with bits the
// packed-bit state where b starts: it returns the header's size and the
// packed-bit state after it. ok is false, and m is partly read, when b is
// too short or holds a bit group byte that the strict Reader rejects
// (dissect.BitGroup.Opened); readHeader then names the damage. The tests
// hold it to readHeader.
func (m *%s) readHeaderFast(b []byte, bits dissect.BitGroup) (n int, after dissect.BitGroup, ok bool) {
rest := b
`, g.name)
	var run []*hfield // fixed-size fields not read yet
	flush := func() error {
		if len(run) == 0 {
			return nil
		}
		total := 0
		var reads strings.Builder
		for _, f := range run {
			n, _, _ := g.size(f.v.Type())
			dst := "m." + f.v.Name()
			if g.flags != nil && f.v == g.flags {
				dst = "f"
			}
			code, err := g.readAt(dst, f.v.Type(), total)
			if err != nil {
				return fmt.Errorf("%s: %v", f.v.Name(), err)
			}
			if dst == "f" {
				code = strings.Replace(code, "f = ", "f := ", 1) + "m." + f.v.Name() + " = f\n"
			}
			reads.WriteString(code)
			total += n
		}
		fmt.Fprintf(g.out, "if len(rest) < %d {\nreturn 0, bits, false\n}\n%srest = rest[%d:]\n", total, reads.String(), total)
		run = run[:0]
		return nil
	}
	const openBit = `if bits.Empty() {
if len(rest) == 0 {
return 0, bits, false
}
if bits, ok = bits.Opened(rest[0]); !ok {
return 0, bits, false
}
rest = rest[1:]
}
`
	err := g.blocks(func(flag string, fs []hfield) error {
		if flag != "" {
			fmt.Fprintf(g.out, "if f&%s != 0 {\n", flag)
		}
		for i := range fs {
			f := &fs[i]
			_, bit, _ := g.size(f.v.Type())
			if !bit && f.cond == "" {
				run = append(run, f)
				continue
			}
			if err := flush(); err != nil {
				return err
			}
			if f.cond != "" {
				fmt.Fprintf(g.out, "if m.%s {\n", f.cond)
			}
			if bit {
				fmt.Fprintf(g.out, "%sm.%s, bits = bits.Next()\n", openBit, f.v.Name())
			} else {
				run = append(run, f)
				if err := flush(); err != nil {
					return err
				}
			}
			if f.cond != "" {
				g.out.WriteString("}\n")
			}
		}
		if err := flush(); err != nil {
			return err
		}
		if flag != "" {
			g.out.WriteString("}\n")
		}
		return nil
	})
	if err != nil {
		return err
	}
	g.out.WriteString("return len(b) - len(rest), bits, true\n}\n\n")
	return nil
}

// readAt returns the statements that read dst, of type t, from rest at
// offset off.
func (g *hgen) readAt(dst string, t types.Type, off int) (string, error) {
	at := func(o int) string {
		if o == 0 {
			return "rest"
		}
		return fmt.Sprintf("rest[%d:]", o)
	}
	switch u := t.Underlying().(type) {
	case *types.Struct:
		var s strings.Builder
		for i := range u.NumFields() {
			code, err := g.readAt(dst+"."+u.Field(i).Name(), u.Field(i).Type(), off)
			if err != nil {
				return "", err
			}
			s.WriteString(code)
			n, _, _ := g.size(u.Field(i).Type())
			off += n
		}
		return s.String(), nil
	case *types.Array:
		// Element by element: a value built and then assigned goes
		// through the stack.
		el := g.typ(u.Elem())
		var l, r []string
		for i := range int(u.Len()) {
			l = append(l, fmt.Sprintf("%s[%d]", dst, i))
			r = append(r, fmt.Sprintf("%s(rest[%d])", el, off+i))
		}
		return strings.Join(l, ", ") + " = " + strings.Join(r, ", ") + "\n", nil
	case *types.Basic:
		var expr string
		switch n, _, _ := g.size(t); n {
		case 1:
			expr = g.conv(t, types.Uint8, fmt.Sprintf("rest[%d]", off))
		case 2:
			g.imports["encoding/binary"] = true
			expr = g.conv(t, types.Uint16, "binary.LittleEndian.Uint16("+at(off)+")")
		case 4:
			g.imports["encoding/binary"] = true
			expr = "binary.LittleEndian.Uint32(" + at(off) + ")"
			if u.Kind() == types.Float32 {
				g.imports["math"] = true
				expr = g.conv(t, types.Float32, "math.Float32frombits("+expr+")")
			} else {
				expr = g.conv(t, types.Uint32, expr)
			}
		}
		return dst + " = " + expr + "\n", nil
	}
	return "", fmt.Errorf("%s is not a wire form jsongen reads by offset", t)
}

func (g *hgen) writeAppend() error {
	g.imports[dissectPath] = true
	fmt.Fprintf(g.out, "// appendHeader writes %s's header to w.\nfunc (m *%s) appendHeader(w *dissect.Writer) {\n", g.name, g.name)
	if err := g.flagged(g.localFlags(), func(f *hfield) (string, error) {
		code, err := g.write1("m."+f.v.Name(), f.v.Type())
		return ifCond(f, code), err
	}); err != nil {
		return err
	}
	g.out.WriteString("}\n\n")
	return nil
}

// write1 returns the statements that write src, of type t, to the Writer w.
func (g *hgen) write1(src string, t types.Type) (string, error) {
	if st, ok := t.Underlying().(*types.Struct); ok {
		var s strings.Builder
		for i := range st.NumFields() {
			code, err := g.write1(src+"."+st.Field(i).Name(), st.Field(i).Type())
			if err != nil {
				return "", err
			}
			s.WriteString(code)
		}
		return s.String(), nil
	}
	if name, ok := g.ioMethod(t); ok {
		return fmt.Sprintf("w.%s(%s)\n", name, src), nil
	}
	b, _ := basicOf(t)
	if b.Kind() == types.Bool {
		return fmt.Sprintf("w.Bit(%s)\n", src), nil
	}
	m, k := readerMethod(b.Kind())
	if m == "" {
		return "", fmt.Errorf("%s: no Writer method", t)
	}
	if !types.Identical(t, types.Typ[k]) {
		src = types.Typ[k].Name() + "(" + src + ")"
	}
	return fmt.Sprintf("w.%s(%s)\n", m, src), nil
}

func (g *hgen) writeBits() error {
	fmt.Fprintf(g.out, "// headerBits is the number of packed bits appendHeader writes for m.\nfunc (m *%s) headerBits() int {\nn := 0\n", g.name)
	for _, f := range g.fields {
		if _, bit, _ := g.size(f.v.Type()); !bit {
			continue
		}
		var conds []string
		if f.flag != "" {
			conds = append(conds, fmt.Sprintf("m.%s&%s != 0", g.flags.Name(), f.flag))
		}
		if f.cond != "" {
			conds = append(conds, "m."+f.cond)
		}
		if len(conds) == 0 {
			g.out.WriteString("n++\n")
		} else {
			fmt.Fprintf(g.out, "if %s {\nn++\n}\n", strings.Join(conds, " && "))
		}
	}
	g.out.WriteString("return n\n}\n\n")
	return nil
}
