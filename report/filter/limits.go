package filter

// What one record's evaluation of a filter may cost. expr bounds the
// arrays and ranges it makes (its memory budget) but not repeat's output
// before making it (`repeat(repeat("a", 999999), 1000000)` died out of
// memory), not string concatenation, and not loop iterations (three nested
// sums over 1..1000 took 51 s for one record). Here: literal sizes past the
// bounds are rejected when the filter compiles, and the rest is counted
// while it runs; a record that exhausts a budget is an error (RunError),
// not a non-match.

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm/runtime"
)

// Bounds of one record's evaluation.
const (
	// MaxIterations caps the loop iterations (all, any, map, filter,
	// count, sum, find, ...) over all the loops of one evaluation: each
	// loop counts its collection's length when it starts.
	MaxIterations = 10_000
	// MaxElements is expr's memory budget: elements of the arrays, maps
	// and ranges one evaluation makes; also the largest literal range.
	MaxElements = 10_000
	// MaxStringBytes caps the bytes of the strings one evaluation makes
	// with + and repeat.
	MaxStringBytes = 64 << 10
)

// forbidden are the builtins a display filter does without, each of which
// makes output as large as a whole collection of strings (join, toJSON)
// or lets one evaluation double what it holds step by step (reduce,
// concat, flatten), or sorts (sort, sortBy, groupBy).
var forbidden = map[string]bool{"join": true, "toJSON": true, "reduce": true, "concat": true,
	"flatten": true, "sort": true, "sortBy": true, "groupBy": true}

// loopBuiltins take a collection and a predicate run for each element.
var loopBuiltins = map[string]bool{"all": true, "none": true, "any": true, "one": true, "filter": true,
	"map": true, "count": true, "sum": true, "find": true, "findIndex": true, "findLast": true,
	"findLastIndex": true}

// Names of the functions the run-time rewrite calls.
const (
	tickFunc   = "tick__"
	addFunc    = "add__"
	repeatFunc = "repeat"
)

// errBudget is the class of a run-time budget failure.
var errBudget = errors.New("filter budget exceeded")

// RunError is a filter that failed on a record.
type RunError struct {
	Expr  string
	File  string
	Frame int
	Err   error
}

func (e *RunError) Error() string {
	where := fmt.Sprintf("frame %d", e.Frame)
	if e.File != "" {
		where = e.File + ": " + where
	}
	return fmt.Sprintf("display filter %q failed on %s: %v", excerpt(e.Expr, 80), where, e.Err)
}

func (e *RunError) Unwrap() error { return e.Err }

// excerpt shortens s to about n bytes for a message.
func excerpt(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

// budget is what is left of one evaluation's bounds.
type budget struct {
	iterations, stringBytes int
}

func (b *budget) reset() { *b = budget{MaxIterations, MaxStringBytes} }

// tick is called with a loop's collection before the loop runs.
func (f *Filter) tick(params ...any) (any, error) {
	n := 0
	if v := reflect.ValueOf(params[0]); v.IsValid() {
		switch v.Kind() {
		case reflect.Slice, reflect.Array, reflect.Map, reflect.String:
			n = v.Len()
		}
	}
	if f.budget.iterations -= n; f.budget.iterations < 0 {
		return nil, fmt.Errorf("%w: more than %d loop iterations in one record", errBudget, MaxIterations)
	}
	return params[0], nil
}

// add is expr's + with the bytes of strings made counted.
func (f *Filter) add(params ...any) (any, error) {
	a, b := params[0], params[1]
	if sa, ok := a.(string); ok {
		if sb, ok := b.(string); ok {
			if err := f.makeString(len(sa) + len(sb)); err != nil {
				return nil, err
			}
			return sa + sb, nil
		}
	}
	return runtime.Add(a, b), nil
}

// repeat is expr's repeat, refused before it makes too much.
func (f *Filter) repeat(params ...any) (any, error) {
	s, _ := params[0].(string)
	n := runtime.ToInt(params[1])
	if n < 0 {
		return nil, fmt.Errorf("repeat: negative count %d", n)
	}
	if len(s) > 0 && n > MaxStringBytes/len(s) {
		return nil, fmt.Errorf("%w: repeat would make more than %d bytes", errBudget, MaxStringBytes)
	}
	if err := f.makeString(len(s) * n); err != nil {
		return nil, err
	}
	return strings.Repeat(s, n), nil
}

func (f *Filter) makeString(n int) error {
	if f.budget.stringBytes -= n; f.budget.stringBytes < 0 {
		return fmt.Errorf("%w: more than %d bytes of strings made in one record", errBudget, MaxStringBytes)
	}
	return nil
}

// checkLimits rejects what a filter's text alone shows to be past the
// bounds: a forbidden builtin, a literal range or repeat too large, nested
// loops over collections of known sizes whose product is past
// MaxIterations.
func checkLimits(n ast.Node) error {
	return (&limitCheck{vars: map[string]int{}}).walk(n, 1)
}

type limitCheck struct {
	vars map[string]int // let names bound to collections of known size
}

// walk checks n, inside loops whose known sizes multiply to mult.
func (c *limitCheck) walk(n ast.Node, mult int) error {
	switch n := n.(type) {
	case nil:
		return nil
	case *ast.BuiltinNode:
		if forbidden[n.Name] {
			return fmt.Errorf("%s() is not available in a display filter", n.Name)
		}
		if loopBuiltins[n.Name] && len(n.Arguments) > 0 {
			if err := c.walk(n.Arguments[0], mult); err != nil {
				return err
			}
			m := mult * max(c.size(n.Arguments[0]), 1)
			if m > MaxIterations {
				return fmt.Errorf("%s() inside loops makes %d iterations a record; at most %d", n.Name, m, MaxIterations)
			}
			for _, a := range n.Arguments[1:] {
				if err := c.walk(a, m); err != nil {
					return err
				}
			}
			return nil
		}
		if n.Name == repeatFunc {
			return c.checkRepeat(n.Arguments, mult)
		}
	case *ast.CallNode:
		if id, ok := n.Callee.(*ast.IdentifierNode); ok && id.Value == repeatFunc {
			return c.checkRepeat(n.Arguments, mult)
		}
	case *ast.BinaryNode:
		if n.Operator == ".." {
			if s := c.size(n); s > MaxElements {
				return fmt.Errorf("a range of %d elements; at most %d", s, MaxElements)
			}
		}
	case *ast.VariableDeclaratorNode:
		if err := c.walk(n.Value, mult); err != nil {
			return err
		}
		if s := c.size(n.Value); s > 0 {
			c.vars[n.Name] = s
		}
		return c.walk(n.Expr, mult)
	}
	return c.children(n, mult)
}

func (c *limitCheck) checkRepeat(args []ast.Node, mult int) error {
	if len(args) == 2 {
		if k, ok := args[1].(*ast.IntegerNode); ok {
			l := 1
			if s, ok := args[0].(*ast.StringNode); ok {
				l = max(len(s.Value), 1)
			}
			if k.Value > MaxStringBytes/l || k.Value*l*mult > MaxStringBytes {
				return fmt.Errorf("repeat() makes more than %d bytes a record", MaxStringBytes)
			}
		}
	}
	for _, a := range args {
		if err := c.walk(a, mult); err != nil {
			return err
		}
	}
	return nil
}

// size is the length of a collection known from the text (a literal
// range or array, or a let name bound to one), or 0.
func (c *limitCheck) size(n ast.Node) int {
	switch n := n.(type) {
	case *ast.BinaryNode:
		l, lok := n.Left.(*ast.IntegerNode)
		r, rok := n.Right.(*ast.IntegerNode)
		if n.Operator == ".." && lok && rok && r.Value >= l.Value {
			return r.Value - l.Value + 1
		}
	case *ast.ArrayNode:
		return len(n.Nodes)
	case *ast.IdentifierNode:
		return c.vars[n.Value]
	}
	return 0
}

// children walks the nodes held by n's fields, whatever its type.
func (c *limitCheck) children(n ast.Node, mult int) error {
	v := reflect.ValueOf(n)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return nil
	}
	v = v.Elem()
	if v.Kind() != reflect.Struct {
		return nil
	}
	nodeType := reflect.TypeFor[ast.Node]()
	for i := range v.NumField() {
		fv := v.Field(i)
		if !v.Type().Field(i).IsExported() {
			continue
		}
		switch {
		case fv.Type() == nodeType:
			if !fv.IsNil() {
				if err := c.walk(fv.Interface().(ast.Node), mult); err != nil {
					return err
				}
			}
		case fv.Kind() == reflect.Slice && fv.Type().Elem() == nodeType:
			for j := range fv.Len() {
				if e := fv.Index(j); !e.IsNil() {
					if err := c.walk(e.Interface().(ast.Node), mult); err != nil {
						return err
					}
				}
			}
		}
	}
	return nil
}

// budgetPatcher counts loops and strings while a filter runs: each loop's
// collection goes through tick, each + through add.
type budgetPatcher struct{}

func (budgetPatcher) Visit(node *ast.Node) {
	switch n := (*node).(type) {
	case *ast.BuiltinNode:
		if loopBuiltins[n.Name] && len(n.Arguments) > 0 {
			if c, ok := n.Arguments[0].(*ast.CallNode); ok {
				if id, ok := c.Callee.(*ast.IdentifierNode); ok && id.Value == tickFunc {
					return // already counted
				}
			}
			t := &ast.CallNode{Callee: &ast.IdentifierNode{Value: tickFunc}, Arguments: []ast.Node{n.Arguments[0]}}
			t.SetLocation(n.Arguments[0].Location())
			n.Arguments[0] = t
		}
	case *ast.BinaryNode:
		if n.Operator == "+" {
			a := &ast.CallNode{Callee: &ast.IdentifierNode{Value: addFunc}, Arguments: []ast.Node{n.Left, n.Right}}
			a.SetLocation(n.Location())
			*node = a
		}
	}
}
