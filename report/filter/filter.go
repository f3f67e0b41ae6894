// Package filter implements display filters (`-Y EXPR`) and field
// extraction (`-T fields -e FIELD`) over decoded records, with the names
// decode --json writes: frame, time, src, dst, dir, peer, type, reliable,
// seq, opcode, name, fields.PATH, file and the rest of Names.
//
// Expressions are parsed, type-checked and run by github.com/expr-lang/expr
// (comparisons, contains, matches, in, and/or/not, parentheses, hex and
// decimal numbers). Two rewrites of expr's syntax tree give tshark's
// meaning to what expr alone would not: fields.PATH becomes a lookup in the
// game message's JSON form, made only when the evaluation reaches it; and a
// comparison of a field the record does not have is false, not an error,
// so `not (seq > 5)` holds for a message without a sequence number, as
// tshark's `!(tcp.port > 5)` holds for a packet without TCP.
package filter

import (
	"errors"
	"fmt"
	"strings"

	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/parser"
	"github.com/expr-lang/expr/vm"
)

// Filter is a compiled display filter. It keeps scratch state between
// calls, so one Filter serves one goroutine.
type Filter struct {
	src     string
	prog    *vm.Program
	machine vm.VM
	env     map[string]any
	used    []fieldID // the record fields the expression names
	addrs   addrCache

	// The record being matched, and its game message's JSON, made on the
	// first fields.PATH lookup of the record.
	rec       *flow.Record
	json      []byte
	jsonState int // 0 not made yet, 1 made, 2 the record has no game message
	// The last fields.PATH looked up in the record: a comparison's nil
	// check and the comparison ask for the same path in turn.
	lastPath string
	lastVal  any
	paths    map[string]jsonPath // compiled on first use

	budget budget    // what is left of the record's bounds (limits.go)
	err    *RunError // the first failure, which stops matching
}

// Error is a display filter that does not compile. Column counts runes
// from 1.
type Error struct {
	Expr   string
	Column int
	Msg    string
}

func (e *Error) Error() string {
	return fmt.Sprintf("column %d: %s\n  %s\n  %s^", e.Column, e.Msg, e.Expr, strings.Repeat(" ", max(e.Column-1, 0)))
}

// fieldFunc is the name the fields.PATH rewrite calls; expr identifiers
// cannot hold the dots of a path.
const fieldFunc = "field__"

// guarded are the operators that fail on a missing (nil) operand in expr
// (an ordering of nil is an error; == and contains simply do not hold), and
// so get a nil check first.
var guarded = map[string]bool{"<": true, ">": true, "<=": true, ">=": true}

// Compile parses and checks a display filter.
func Compile(src string) (*Filter, error) {
	makeBoxedNames()
	makeSmallInts()
	f := &Filter{src: src, env: map[string]any{}}
	tr, err := translate(src) // tshark's spelling (syntax.go)
	if err != nil {
		return nil, err
	}
	text := tr.text
	// A lone field tests that the record has it, as in tshark (`-Y seq`).
	if tree, err := parser.Parse(text); err == nil {
		if err := checkLimits(tree.Node); err != nil {
			return nil, &Error{Expr: src, Column: 1, Msg: err.Error()}
		}
		switch n := tree.Node.(type) {
		case *ast.IdentifierNode:
			if id, ok := fieldByName[n.Value]; !ok || fieldDefs[id].typ != false {
				text += " != nil"
			}
		case *ast.MemberNode:
			text += " != nil"
		}
	}
	// Compiled twice: once with every field's type, for the errors a user
	// should see (an unknown name, a string compared with a number); then
	// for running, with the fields a record may lack left untyped, so that
	// expr compares them as values that may be nil rather than emitting
	// typed instructions that fail on nil.
	types, always := map[string]any{}, map[string]any{}
	for i, d := range fieldDefs {
		types[envName(fieldID(i))] = d.typ
		if d.always {
			always[envName(fieldID(i))] = d.typ
		}
	}
	fn := expr.Function(fieldFunc, f.field, new(func(string) any))
	repeat := expr.Function(repeatFunc, f.repeat, new(func(string, int) string))
	noRepeat := expr.DisableBuiltin(repeatFunc)
	if _, err := expr.Compile(text, expr.Env(types), expr.AsBool(), fn, noRepeat, repeat, expr.Patch(&patcher{})); err != nil {
		return nil, tr.compileError(err)
	}
	// For running, loops and + are counted (limits.go).
	p := &patcher{}
	prog, err := expr.Compile(text, expr.Env(always), expr.AllowUndefinedVariables(), expr.AsBool(), fn, noRepeat, repeat,
		expr.Function(tickFunc, f.tick, new(func(any) any)), expr.Function(addFunc, f.add, new(func(any, any) any)),
		expr.Patch(p), expr.Patch(budgetPatcher{}))
	if err != nil {
		return nil, tr.compileError(err)
	}
	f.prog = prog
	f.machine.MemoryBudget = MaxElements
	for id := range p.idents {
		f.used = append(f.used, id)
	}
	return f, nil
}

// String is the expression as given.
func (f *Filter) String() string { return f.src }

// Match reports whether r passes the filter. Any failure - comparing
// values of kinds that do not compare (a number with a string: tshark
// refuses such a filter), a budget of limits.go - is an error: Match
// returns false, and Err says what failed on which record. A Filter that
// failed matches nothing more.
func (f *Filter) Match(r *flow.Record, c *Context) bool {
	if f.err != nil {
		return false
	}
	for _, id := range f.used {
		f.env[envName(id)] = value(id, r, c, &f.addrs)
	}
	f.rec, f.jsonState = r, 0
	f.budget.reset()
	out, err := f.machine.Run(f.prog, f.env)
	f.rec = nil
	if err != nil {
		var fe *file.Error
		if typeMismatch(err) {
			err = errors.New(runtimeMessage(err)) // in a filter's words (syntax.go)
		} else if errors.As(err, &fe) { // its message without the expression and caret
			err = errors.New(fe.Message)
		}
		f.err = &RunError{Expr: f.src, Frame: r.Frame, Err: err}
		if c != nil {
			f.err.File = c.File
		}
		return false
	}
	ok, _ := out.(bool)
	return ok
}

// Err is the failure that stopped the filter, or nil.
func (f *Filter) Err() error {
	if f.err == nil {
		return nil
	}
	return f.err
}

// typeMismatch reports whether err is expr's failure to compare or
// combine values of types that do not go together.
func typeMismatch(err error) bool {
	var fe *file.Error
	if errors.As(err, &fe) {
		return strings.HasPrefix(fe.Message, "invalid operation")
	}
	return strings.HasPrefix(err.Error(), "invalid operation")
}

// GameJSON is the JSON form of the game message of the record Match saw
// last, when the filter made it (it looked into fields.PATH); nil
// otherwise. It is valid until the next Match.
func (f *Filter) GameJSON() []byte {
	if f.jsonState != 1 {
		return nil
	}
	return f.json
}

// field is fields.PATH at run time: the value at path in the game message's
// JSON form, or nil.
func (f *Filter) field(params ...any) (any, error) {
	path, _ := params[0].(string)
	if f.jsonState == 0 {
		var ok bool
		f.jsonState = 2
		if f.rec != nil {
			if f.json, ok = gameJSON(f.json[:0], f.rec); ok {
				f.jsonState = 1
			}
			f.lastPath = ""
		}
	}
	if f.jsonState != 1 {
		return nil, nil
	}
	if path == "" {
		return string(f.json), nil
	}
	if f.jsonState == 1 && path == f.lastPath && f.lastPath != "" {
		return f.lastVal, nil
	}
	jp, ok := f.paths[path]
	if !ok {
		jp = compilePath(path)
		if f.paths == nil {
			f.paths = map[string]jsonPath{}
		}
		f.paths[path] = jp
	}
	f.lastPath, f.lastVal = path, jsonValue(jp.lookup(f.json))
	return f.lastVal, nil
}

// patcher rewrites expr's syntax tree (see the package comment) and notes
// the identifiers used.
type patcher struct {
	idents map[fieldID]bool
}

func (p *patcher) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.IdentifierNode:
		if n.Value == fieldsRoot {
			*node = fieldCall("", n)
			return
		}
		if id, ok := fieldByName[n.Value]; ok {
			n.Value = envName(id)
			if p.idents == nil {
				p.idents = map[fieldID]bool{}
			}
			p.idents[id] = true
		}
	case *ast.MemberNode:
		path, ok := fieldPath(n.Node)
		if !ok {
			return
		}
		var key string
		switch prop := n.Property.(type) {
		case *ast.StringNode:
			key = prop.Value
		case *ast.IntegerNode:
			key = fmt.Sprint(prop.Value)
		default:
			return
		}
		if path != "" {
			key = path + "." + key
		}
		*node = fieldCall(key, n)
	case *ast.BinaryNode:
		if !guarded[n.Operator] {
			return
		}
		var check ast.Node
		for _, side := range []ast.Node{n.Left, n.Right} {
			c := nilCheck(side)
			if c == nil {
				continue
			}
			if check == nil {
				check = c
			} else {
				check = &ast.BinaryNode{Operator: "and", Left: check, Right: c}
			}
		}
		if check != nil {
			and := &ast.BinaryNode{Operator: "and", Left: check, Right: n}
			and.SetLocation(n.Location())
			*node = and
		}
	}
}

// fieldCall builds the call that looks path up in the game message.
func fieldCall(path string, at ast.Node) ast.Node {
	c := &ast.CallNode{Callee: &ast.IdentifierNode{Value: fieldFunc}, Arguments: []ast.Node{&ast.StringNode{Value: path}}}
	c.SetLocation(at.Location())
	return c
}

// fieldPath returns the path of a fields.PATH call made by fieldCall.
func fieldPath(n ast.Node) (string, bool) {
	c, ok := n.(*ast.CallNode)
	if !ok || len(c.Arguments) != 1 {
		return "", false
	}
	if id, ok := c.Callee.(*ast.IdentifierNode); !ok || id.Value != fieldFunc {
		return "", false
	}
	s, ok := c.Arguments[0].(*ast.StringNode)
	if !ok {
		return "", false
	}
	return s.Value, true
}

// nilCheck returns `n != nil` for a field a record may lack, on a copy of
// n, or nil when n cannot be missing.
func nilCheck(n ast.Node) ast.Node {
	var ref ast.Node
	if path, ok := fieldPath(n); ok {
		ref = fieldCall(path, n)
	} else if id, ok := n.(*ast.IdentifierNode); ok {
		for fid, d := range fieldDefs {
			if envName(fieldID(fid)) == id.Value && !d.always {
				ref = &ast.IdentifierNode{Value: id.Value}
			}
		}
	}
	if ref == nil {
		return nil
	}
	return &ast.BinaryNode{Operator: "!=", Left: ref, Right: &ast.NilNode{}}
}
