package jsongen

// The header's text and JSON forms (see header.go for the tags), and
// HeaderUses, which finds hand-written code that names a header field.

import (
	"fmt"
	"go/token"
	"go/types"
	"slices"
	"strings"
)

// needs checks that the package has a helper the generated code calls.
func (g *hgen) needs(name string) error {
	if _, ok := g.pkg.Scope().Lookup(name).(*types.Func); !ok {
		return fmt.Errorf("the package has no function %s for the generated code", name)
	}
	return nil
}

func (g *hgen) writeText() error {
	fmt.Fprintf(g.out, "// appendHeaderText appends the text form of %s's header.\nfunc (m *%s) appendHeaderText(b []byte) []byte {\n", g.name, g.name)
	first := true
	if err := g.flagged(g.localFlags(), func(f *hfield) (string, error) {
		if f.label == "" {
			return "", nil
		}
		open := " " + f.label + "="
		if first {
			open, first = f.label+"=", false
		}
		code, err := g.text(f, "m."+f.v.Name(), open)
		if err != nil {
			return "", err
		}
		if f.cond != "" && f.hasElse {
			return fmt.Sprintf("if m.%s {\n%s} else {\nb = append(b, %q...)\n}\n", f.cond, code, " "+f.label+"="+f.elseText), nil
		}
		return ifCond(f, code), nil
	}); err != nil {
		return err
	}
	g.out.WriteString("return b\n}\n\n")
	return nil
}

// text returns the statement that appends open and the text of v, field f.
func (g *hgen) text(f *hfield, v, open string) (string, error) {
	t := f.v.Type()
	dst := fmt.Sprintf("append(b, %q...)", open)
	switch {
	case f.hex:
		n, _, _ := g.size(t)
		if err := g.needs("appendHex"); err != nil {
			return "", err
		}
		return fmt.Sprintf("b = appendHex(append(b, %q...), uint64(%s), %d)\n", open+"0x", v, 2*n), nil
	case f.prec >= 0:
		g.imports[dissectPath] = true
		return fmt.Sprintf("b = dissect.AppendFixed(%s, %s, %d)\n", dst, g.conv(types.Typ[types.Float32], types.Float32, v), f.prec), nil
	case g.hasMethod(t, "AppendString"):
		return fmt.Sprintf("b = %s.AppendString(%s)\n", v, dst), nil
	case g.hasMethod(t, "appendString"):
		return fmt.Sprintf("b = %s.appendString(%s)\n", v, dst), nil
	case isBool(t):
		g.imports["strconv"] = true
		return fmt.Sprintf("b = strconv.AppendBool(%s, %s)\n", dst, v), nil
	case isInteger(t):
		g.imports["strconv"] = true
		if b, _ := basicOf(t); b.Info()&types.IsUnsigned != 0 {
			return fmt.Sprintf("b = strconv.AppendUint(%s, uint64(%s), 10)\n", dst, v), nil
		}
		return fmt.Sprintf("b = strconv.AppendInt(%s, int64(%s), 10)\n", dst, v), nil
	}
	return "", fmt.Errorf("no text form for %s (give it AppendString, or a text option)", t)
}

func (g *hgen) writeJSON() error {
	fmt.Fprintf(g.out, "// appendHeaderJSON appends the JSON form of %s's header: the object's\n// opening brace and its first members.\n", g.name)
	fmt.Fprintf(g.out, "func (m *%s) appendHeaderJSON(b []byte) []byte {\n", g.name)
	first := true
	if err := g.flagged(g.localFlags(), func(f *hfield) (string, error) {
		if f.key == "" {
			return "", nil
		}
		open := `,"` + f.key + `":`
		if first {
			open, first = `{"`+f.key+`":`, false
		}
		code, err := g.json(f, "m."+f.v.Name(), open)
		return ifCond(f, code), err
	}); err != nil {
		return err
	}
	g.out.WriteString("return b\n}\n\n")
	return nil
}

// json returns the statement that appends open and the JSON of v, field f.
func (g *hgen) json(f *hfield, v, open string) (string, error) {
	t := f.v.Type()
	dst := "append(b, `" + open + "`...)"
	switch {
	case f.hex:
		n, _, _ := g.size(t)
		if err := g.needs("appendHex"); err != nil {
			return "", err
		}
		return fmt.Sprintf("b = append(appendHex(append(b, `%s\"0x`...), uint64(%s), %d), '\"')\n", open, v, 2*n), nil
	case g.hasMethod(t, "AppendJSON"):
		return fmt.Sprintf("b = %s.AppendJSON(%s)\n", v, dst), nil
	case isBool(t):
		g.imports["github.com/bcwire/bcwire/internal/jsonenc"] = true
		return fmt.Sprintf("b = jsonenc.Bool(%s, %s)\n", dst, v), nil
	case isFloat32(t):
		// Never refusing, unlike jsonenc.Float32: a NaN becomes null.
		if err := g.needs("appendJSONF32"); err != nil {
			return "", err
		}
		return fmt.Sprintf("b = appendJSONF32(%s, %s)\n", dst, g.conv(types.Typ[types.Float32], types.Float32, v)), nil
	case isInteger(t):
		g.imports["github.com/bcwire/bcwire/internal/jsonenc"] = true
		if b, _ := basicOf(t); b.Info()&types.IsUnsigned != 0 {
			return fmt.Sprintf("b = jsonenc.Uint(%s, uint64(%s))\n", dst, v), nil
		}
		return fmt.Sprintf("b = jsonenc.Int(%s, int64(%s))\n", dst, v), nil
	}
	return "", fmt.Errorf("no JSON form for %s (give it AppendJSON)", t)
}

// A HeaderUse is a place where hand-written code names a header field or a
// flag constant of one.
type HeaderUse struct {
	Pos  token.Position
	Name string // Type.Field, or the constant's name
}

// HeaderUses lists the places in the package in dir, its tests and
// generated files left out, that name a header field or a flag constant of
// one (the declarations themselves are not uses): each is a place that a
// change of the header must keep in step by hand.
func HeaderUses(dir string) ([]HeaderUse, error) {
	l, err := load(dir, JSONFile, HeaderFile)
	if err != nil {
		return nil, err
	}
	names := map[types.Object]string{}
	for _, t := range headerTypes(l.pkg) {
		g := &hgen{pkg: l.pkg, name: t.Obj().Name(), imports: map[string]bool{}}
		if err := g.parse(t.Underlying().(*types.Struct)); err != nil {
			return nil, err
		}
		for _, f := range g.fields {
			names[f.v] = g.name + "." + f.v.Name()
			if f.flag != "" {
				names[l.pkg.Scope().Lookup(f.flag)] = f.flag
			}
		}
	}
	var uses []HeaderUse
	for id, obj := range l.info.Uses {
		if name, ok := names[obj]; ok {
			uses = append(uses, HeaderUse{l.fset.Position(id.Pos()), name})
		}
	}
	slices.SortFunc(uses, func(a, b HeaderUse) int {
		if c := strings.Compare(a.Pos.Filename, b.Pos.Filename); c != 0 {
			return c
		}
		return a.Pos.Offset - b.Pos.Offset
	})
	return uses, nil
}
