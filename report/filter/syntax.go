package filter

// tshark's spelling of display filters, turned into the expression
// language's before it is parsed: the word operators eq, ne, gt, lt, ge
// and le; ~ for matches; and sets in braces, `opcode in {0x2C 0x2D}`, with
// whitespace or commas between the members and ranges `frame in {1..10}`.
// The translation keeps, for every character it writes, the column of the
// source it came from, so that an error points into what the user typed.
// Errors are said in the terms of a display filter, never in those of Go
// or of the library underneath ("type int has no field number").

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/expr-lang/expr/file"
)

// wordOps are tshark's comparison words.
var wordOps = map[string]string{"eq": "==", "ne": "!=", "gt": ">", "lt": "<", "ge": ">=", "le": "<="}

type tokKind int

const (
	tokSpace tokKind = iota
	tokIdent         // a name, with its dotted path: fields.object.id
	tokNumber
	tokString
	tokPunct
)

type token struct {
	kind tokKind
	text string
	col  int // rune column in the source, from 0
}

// translation is a filter in the expression language's spelling.
type translation struct {
	src  string
	text string
	cols []int // source column of each rune of text, and one past the end
}

// translate turns src into the expression language's spelling.
func translate(src string) (*translation, error) {
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	t := &translation{src: src}
	var b strings.Builder
	emit := func(s string, col int) {
		b.WriteString(s)
		for range utf8.RuneCountInString(s) {
			t.cols = append(t.cols, col)
		}
	}
	pos := make([]int, len(toks)) // where each token's text starts in the translation
	for i := 0; i < len(toks); i++ {
		tk := toks[i]
		pos[i] = len(t.cols)
		switch {
		case tk.kind == tokIdent:
			if op, ok := wordOps[tk.text]; ok {
				emit(op, tk.col)
				continue
			}
			if root, _, dotted := strings.Cut(tk.text, "."); dotted && root != fieldsRoot {
				return nil, &Error{Expr: src, Column: tk.col + 1, Msg: unknownField(tk.text)}
			}
			emit(tk.text, tk.col)
		case tk.kind == tokPunct && tk.text == "~":
			emit(" matches ", tk.col)
		case tk.kind == tokPunct && tk.text == "{":
			end, set, err := parseSet(src, toks, i)
			if err != nil {
				return nil, err
			}
			if err := emitSet(src, toks, pos, i, set, emit, &b, t); err != nil {
				return nil, err
			}
			i = end
		case tk.kind == tokPunct && tk.text == "}":
			return nil, &Error{Expr: src, Column: tk.col + 1, Msg: "} without its {"}
		default:
			emit(tk.text, tk.col)
		}
	}
	t.cols = append(t.cols, utf8.RuneCountInString(src))
	t.text = b.String()
	return t, nil
}

// setMember is one member of a set: a value, or a range lo..hi.
type setMember struct {
	lo, hi  token
	isRange bool
}

// parseSet reads the set that opens at toks[open]; end is the index of its
// closing brace.
func parseSet(src string, toks []token, open int) (end int, set []setMember, err error) {
	var vals []token
	sawRange := false
	for i := open + 1; i < len(toks); i++ {
		tk := toks[i]
		switch {
		case tk.kind == tokSpace || tk.kind == tokPunct && tk.text == ",":
		case tk.kind == tokPunct && tk.text == "}":
			if sawRange {
				return 0, nil, &Error{Expr: src, Column: tk.col + 1, Msg: "a range needs its end: {LOW..HIGH}"}
			}
			for _, v := range vals {
				set = append(set, setMember{lo: v})
			}
			return i, set, nil
		case tk.kind == tokPunct && tk.text == "..":
			if len(vals) == 0 || sawRange {
				return 0, nil, &Error{Expr: src, Column: tk.col + 1, Msg: "a range is LOW..HIGH, e.g. {1..10}"}
			}
			sawRange = true
		case tk.kind == tokNumber || tk.kind == tokString || tk.kind == tokPunct && tk.text == "-" && i+1 < len(toks) && toks[i+1].kind == tokNumber:
			if tk.kind == tokPunct { // a negative number
				i++
				tk = token{kind: tokNumber, text: "-" + toks[i].text, col: tk.col}
			}
			if sawRange {
				lo := vals[len(vals)-1]
				vals = vals[:len(vals)-1]
				for _, v := range vals {
					set = append(set, setMember{lo: v})
				}
				vals = nil
				set = append(set, setMember{lo: lo, hi: tk, isRange: true})
				sawRange = false
				continue
			}
			vals = append(vals, tk)
		default:
			return 0, nil, &Error{Expr: src, Column: tk.col + 1, Msg: fmt.Sprintf("%q cannot be in a set: a set holds numbers and strings, e.g. {0x2C 0x2D} or {\"CHAT\" \"TEAM_CHAT\"}", tk.text)}
		}
	}
	return 0, nil, &Error{Expr: src, Column: toks[open].col + 1, Msg: "{ without its }"}
}

// emitSet writes a set as a list, [a, b]; with ranges, the membership test
// before it, F in {a b..c}, becomes (F in [a] or F >= b and F <= c), which
// needs F to be a field.
func emitSet(src string, toks []token, pos []int, open int, set []setMember, emit func(string, int), b *strings.Builder, t *translation) error {
	col := toks[open].col
	hasRange := false
	for _, m := range set {
		hasRange = hasRange || m.isRange
	}
	if !hasRange {
		emit("[", col)
		for i, m := range set {
			if i > 0 {
				emit(", ", m.lo.col)
			}
			emit(m.lo.text, m.lo.col)
		}
		emit("]", col)
		return nil
	}
	// The field and "in" (or "not in") just written before the brace.
	prev := func(i int) int {
		for i--; i >= 0 && toks[i].kind == tokSpace; i-- {
		}
		return i
	}
	in := prev(open)
	not := false
	field := -1
	if in >= 0 && toks[in].kind == tokIdent && toks[in].text == "in" {
		field = prev(in)
		if field >= 0 && toks[field].kind == tokIdent && toks[field].text == "not" {
			not, field = true, prev(field)
		}
	}
	if field < 0 || toks[field].kind != tokIdent {
		return &Error{Expr: src, Column: col + 1, Msg: "a set with a range goes after FIELD in, e.g. frame in {1..10}"}
	}
	// Take back what was written from the field on.
	start := pos[field]
	text := []rune(b.String())
	b.Reset()
	b.WriteString(string(text[:start]))
	t.cols = t.cols[:start]
	f := toks[field]
	if not {
		emit("not ", f.col)
	}
	emit("(", f.col)
	var parts []string
	var values []string
	for _, m := range set {
		if !m.isRange {
			values = append(values, m.lo.text)
			continue
		}
		parts = append(parts, fmt.Sprintf("%s >= %s and %s <= %s", f.text, m.lo.text, f.text, m.hi.text))
	}
	if len(values) > 0 {
		parts = append([]string{fmt.Sprintf("%s in [%s]", f.text, strings.Join(values, ", "))}, parts...)
	}
	for i, p := range parts {
		if i > 0 {
			emit(" or ", col)
		}
		emit(p, col)
	}
	emit(")", col)
	return nil
}

// lex splits src into tokens; whitespace is kept as a token of its own so
// that the translation keeps the user's spacing.
func lex(src string) ([]token, error) {
	var toks []token
	rs := []rune(src)
	for i := 0; i < len(rs); {
		r := rs[i]
		start := i
		var kind tokKind
		switch {
		case unicode.IsSpace(r):
			for i < len(rs) && unicode.IsSpace(rs[i]) {
				i++
			}
			kind = tokSpace
		case r == '"' || r == '\'' || r == '`':
			i++
			for i < len(rs) && rs[i] != r {
				if rs[i] == '\\' && r != '`' {
					i++
				}
				i++
			}
			if i >= len(rs) {
				return nil, &Error{Expr: src, Column: start + 1, Msg: "a string without its closing quote"}
			}
			i++
			kind = tokString
		case r >= '0' && r <= '9':
			i = lexNumber(rs, i)
			kind = tokNumber
		case r == '_' || unicode.IsLetter(r):
			for i < len(rs) && (rs[i] == '_' || unicode.IsLetter(rs[i]) || unicode.IsDigit(rs[i]) ||
				rs[i] == '.' && i+1 < len(rs) && rs[i+1] != '.' && (rs[i+1] == '_' || unicode.IsLetter(rs[i+1]) || unicode.IsDigit(rs[i+1]))) {
				i++
			}
			kind = tokIdent
		case r == '.' && i+1 < len(rs) && rs[i+1] == '.':
			i += 2
			kind = tokPunct
		default:
			i++
			if i < len(rs) { // two-character operators stay together
				switch string(rs[i-1 : i+1]) {
				case "==", "!=", "<=", ">=", "&&", "||":
					i++
				}
			}
			kind = tokPunct
		}
		toks = append(toks, token{kind: kind, text: string(rs[start:i]), col: start})
	}
	return toks, nil
}

// lexNumber reads a number from rs[i]: decimal, 0x hex, with a fraction
// and an exponent; it stops before "..", a range.
func lexNumber(rs []rune, i int) int {
	if rs[i] == '0' && i+1 < len(rs) && (rs[i+1] == 'x' || rs[i+1] == 'X') {
		i += 2
		for i < len(rs) && (unicode.Is(unicode.ASCII_Hex_Digit, rs[i]) || rs[i] == '_') {
			i++
		}
		return i
	}
	for i < len(rs) && (unicode.IsDigit(rs[i]) || rs[i] == '_') {
		i++
	}
	if i+1 < len(rs) && rs[i] == '.' && unicode.IsDigit(rs[i+1]) {
		i++
		for i < len(rs) && unicode.IsDigit(rs[i]) {
			i++
		}
	}
	if i < len(rs) && (rs[i] == 'e' || rs[i] == 'E') {
		j := i + 1
		if j < len(rs) && (rs[j] == '+' || rs[j] == '-') {
			j++
		}
		if j < len(rs) && unicode.IsDigit(rs[j]) {
			for i = j; i < len(rs) && unicode.IsDigit(rs[i]); i++ {
			}
		}
	}
	return i
}

// unknownField says that name is not a field, with the names there are;
// a tshark name (frame.number, udp.port) gets the hint that bcwire's are
// decode --json's.
func unknownField(name string) string {
	msg := fmt.Sprintf("unknown field %q", name)
	if strings.Contains(name, ".") {
		msg += " (field names are decode --json's, not tshark's; game message fields are fields.PATH, e.g. fields.text)"
	}
	return msg + "; the fields: " + strings.Join(Names(), ", ")
}

// compileError turns the library's error into one about the filter as the
// user wrote it.
func (t *translation) compileError(err error) error {
	e := &Error{Expr: t.src, Column: 1, Msg: err.Error()}
	var fe *file.Error
	if errors.As(err, &fe) {
		e.Msg = fe.Message
		e.Column = t.column(fe.From)
	}
	n := utf8.RuneCountInString(t.src)
	if strings.HasPrefix(e.Msg, "unexpected token EOF") {
		e.Column = n + 1 // where something is missing
	}
	e.Column = min(max(e.Column, 1), n+1)
	e.Msg = plainMessage(e.Msg)
	return e
}

// column is the source column (from 1) of rune at of the translation.
func (t *translation) column(at int) int {
	if at < 0 {
		return 1
	}
	if at >= len(t.cols) {
		return t.cols[len(t.cols)-1] + 1
	}
	return t.cols[at] + 1
}

// The library's messages that plainMessage and runtimeMessage reword,
// compiled at the first message rather than at start-up: only a failing
// filter needs them, and compiling them cost every command 0.1 ms.
var messageRes = sync.OnceValue(func() *messageRegexps {
	return &messageRegexps{
		unexpected: regexp.MustCompile(`^unexpected token (\w+)(?:\("(.*)"\))?`),
		mismatch:   regexp.MustCompile(`^invalid operation: (\S+) \(mismatched types (.+) and (.+)\)$`),
		noField:    regexp.MustCompile(`^type .+ has no field (\S+)`),
		cannotUse:  regexp.MustCompile(`^cannot use (.+) as type (.+?)( in array)?$`),
		index:      regexp.MustCompile(`^type (.+)\[(.+)\] is undefined`),
		runtimeOp:  regexp.MustCompile(`invalid operation: (.+?) (\S+) (.+?)\s*(\(|$)`),
	}
})

type messageRegexps struct {
	unexpected, mismatch, noField, cannotUse, index, runtimeOp *regexp.Regexp
}

// plainMessage rewords the library's messages in a display filter's terms.
func plainMessage(msg string) string {
	if name, ok := strings.CutPrefix(msg, "unknown name "); ok {
		return unknownField(name)
	}
	if m := messageRes().unexpected.FindStringSubmatch(msg); m != nil {
		switch {
		case m[1] == "EOF":
			return "the expression ends too early (a comparison or a value is missing)"
		case m[2] != "":
			return fmt.Sprintf("%q is not expected here", m[2])
		}
		return "unexpected " + strings.ToLower(m[1])
	}
	if m := messageRes().mismatch.FindStringSubmatch(msg); m != nil {
		if m[1] == "in" {
			return "in needs a set after it, e.g. opcode in {0x2C 0x2D}"
		}
		return fmt.Sprintf("%s cannot compare %s with %s", m[1], kindOf(m[2]), kindOf(m[3]))
	}
	if m := messageRes().noField.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%q: only fields.PATH has parts after a dot", m[1])
	}
	if m := messageRes().cannotUse.FindStringSubmatch(msg); m != nil {
		if m[3] != "" { // FIELD in {values}: the values are of another kind
			return fmt.Sprintf("in cannot look for %s in a set of %ss", kindOf(m[1]), strings.TrimPrefix(kindOf(m[2]), "a "))
		}
		return fmt.Sprintf("%s where %s is needed", kindOf(m[1]), kindOf(m[2]))
	}
	if m := messageRes().index.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s has no elements to index with [ ]: only fields.PATH can hold lists", strings.TrimPrefix(kindOf(m[1]), "a "))
	}
	if r, ok := strings.CutPrefix(msg, "unrecognized character: "); ok {
		if _, c, ok := strings.Cut(r, " "); ok {
			r = c
		}
		return "unexpected character " + r
	}
	if strings.HasPrefix(msg, "expected bool, but got") {
		return "the expression is a value, not a test (compare it, e.g. frame > 10)"
	}
	return msg
}

// kindOf names a Go type the way a filter's user thinks of it.
func kindOf(goType string) string {
	switch strings.TrimSpace(goType) {
	case "int", "int64", "uint8", "float64", "float", "uint", "int32":
		return "a number"
	case "string":
		return "a string"
	case "bool":
		return "a true/false field"
	case "interface {}", "interface{}":
		return "a field of the game message"
	case "[]interface {}", "[]interface{}", "array":
		return "a set"
	case "<nil>", "nil":
		return "nothing"
	}
	if strings.HasPrefix(goType, "[]") {
		return "a set"
	}
	return "a value"
}

// runtimeMessage says, in a filter's words, why an evaluation failed on a
// record: the two sides of a comparison are of kinds that do not compare
// (fields.speed > "a"). Such a filter is an error, as tshark refuses it.
func runtimeMessage(err error) string {
	msg := err.Error()
	var fe *file.Error
	if errors.As(err, &fe) {
		msg = fe.Message
	}
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	msg = strings.TrimSuffix(strings.TrimSpace(msg), ")")
	if m := messageRes().runtimeOp.FindStringSubmatch(msg); m != nil {
		verb := "compare"
		if strings.Contains("+-*/%^", m[2]) {
			verb = "work out"
		}
		return fmt.Sprintf("%s cannot %s %s with %s", m[2], verb, kindOf(m[1]), kindOf(m[3]))
	}
	return plainMessage(msg)
}
