// Package cfgfile reads the small files an operator or a user gives a
// command, config, manifest and diff rules files, with bounds that come before any
// parser sees them: a size cap, a nesting depth (BurntSushi/toml's cost is
// quadratic in it: 10,000 nested inline tables in 40 KB took 3.84 GB), and,
// for JSON, duplicate keys, which encoding/json takes silently (the last
// one wins). Errors quote at most a short excerpt of the file.
package cfgfile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"unicode/utf8"
)

// Bounds of the files read here.
const (
	// MaxConfig is the largest config file: a real one is a few hundred
	// bytes.
	MaxConfig = 1 << 20
	// MaxManifest is the largest checksum manifest: OpenBC's JSON for the
	// whole stock script tree is tens of KB.
	MaxManifest = 4 << 20
	// MaxDepth is the deepest nesting of arrays and tables (inline or
	// JSON objects) accepted; bcwire's files nest two or three deep,
	// OpenBC's manifests one level a subdirectory (at most 16).
	MaxDepth = 64
	// ExcerptLen is the most of a file's text an error message quotes.
	ExcerptLen = 60
)

// Read reads path, refusing a file over max bytes before reading it (and,
// for what Stat cannot size, such as a pipe, after reading max+1 bytes).
func Read(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > max {
		return nil, fmt.Errorf("%s: %d bytes; a file here is at most %d KiB", path, st.Size(), max>>10)
	}
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s: over %d bytes; a file here is at most %d KiB", path, max, max>>10)
	}
	return b, nil
}

// Excerpt is s cut to about ExcerptLen bytes (at a rune boundary), for
// quoting in a message.
func Excerpt(s string) string {
	if len(s) <= ExcerptLen {
		return s
	}
	n := ExcerptLen
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("… (%d bytes)", len(s))
}

// ShortError is err with its text cut to a few excerpts' length: parsers
// quote what they could not read, and a hostile file's value can be
// megabytes.
func ShortError(err error) error {
	if err == nil || len(err.Error()) <= 4*ExcerptLen {
		return err
	}
	return &shortError{err}
}

type shortError struct{ err error }

func (e *shortError) Error() string {
	s := e.err.Error()
	n := 4 * ExcerptLen
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + fmt.Sprintf("… (message of %d bytes cut)", len(s))
}

func (e *shortError) Unwrap() error { return e.err }

// CheckTOMLDepth reports TOML that nests arrays or inline tables deeper
// than MaxDepth, in one pass that skips strings and comments.
func CheckTOMLDepth(b []byte) error {
	depth, line := 0, 1
	for i := 0; i < len(b); i++ {
		switch c := b[i]; c {
		case '\n':
			line++
		case '#':
			for i < len(b) && b[i] != '\n' {
				i++
			}
			i-- // the newline counts the line
		case '"', '\'':
			end, lines, ok := skipTOMLString(b, i)
			if !ok {
				return nil // unterminated: the parser says where
			}
			i, line = end-1, line+lines
		case '[', '{':
			if depth++; depth > MaxDepth {
				return fmt.Errorf("line %d: arrays or tables nested more than %d deep", line, MaxDepth)
			}
		case ']', '}':
			depth = max(depth-1, 0)
		}
	}
	return nil
}

// skipTOMLString returns the end of the string starting at b[i] (a basic
// or literal string, one line or multi-line), and the newlines in it.
func skipTOMLString(b []byte, i int) (end, lines int, ok bool) {
	q := b[i]
	multi := bytes.HasPrefix(b[i:], []byte{q, q, q})
	if multi {
		rest := b[i+3:]
		for j := 0; j < len(rest); j++ {
			switch {
			case rest[j] == '\\' && q == '"':
				if j+1 < len(rest) && rest[j+1] == '\n' {
					lines++
				}
				j++
			case rest[j] == '\n':
				lines++
			case bytes.HasPrefix(rest[j:], []byte{q, q, q}):
				// up to two more quotes may belong to the string
				k := j + 3
				for k < len(rest) && k < j+5 && rest[k] == q {
					k++
				}
				return i + 3 + k, lines, true
			}
		}
		return 0, 0, false
	}
	for j := i + 1; j < len(b); j++ {
		switch b[j] {
		case '\\':
			if q == '"' {
				j++
			}
		case q:
			return j + 1, 0, true
		case '\n':
			return 0, 0, false
		}
	}
	return 0, 0, false
}

// CheckJSON reports JSON that nests deeper than MaxDepth or repeats a key
// within an object, naming the key (an excerpt of it).
func CheckJSON(b []byte) error {
	if err := checkJSONDepth(b); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	type frame struct {
		keys   map[string]bool
		object bool
		key    bool // the next string token in this object is a key
	}
	var stack []frame
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return nil // malformed: the parser says what and where
		}
		top := len(stack) - 1
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				if top >= 0 && stack[top].object {
					stack[top].key = true
				}
				stack = append(stack, frame{keys: map[string]bool{}, object: true, key: true})
			case '[':
				if top >= 0 && stack[top].object {
					stack[top].key = true
				}
				stack = append(stack, frame{})
			default:
				stack = stack[:top]
			}
		case string:
			if top >= 0 && stack[top].object && stack[top].key {
				if stack[top].keys[t] {
					return fmt.Errorf("key %q appears twice in one object (offset %d)", Excerpt(t), dec.InputOffset())
				}
				stack[top].keys[t] = true
				stack[top].key = false
				continue
			}
			if top >= 0 && stack[top].object {
				stack[top].key = true
			}
		default:
			if top >= 0 && stack[top].object {
				stack[top].key = true
			}
		}
	}
}

// checkJSONDepth is the depth check of CheckJSON, before any parsing.
func checkJSONDepth(b []byte) error {
	depth := 0
	for i := 0; i < len(b); i++ {
		switch b[i] {
		case '"':
			for i++; i < len(b) && b[i] != '"'; i++ {
				if b[i] == '\\' {
					i++
				}
			}
		case '[', '{':
			if depth++; depth > MaxDepth {
				return fmt.Errorf("offset %d: arrays or objects nested more than %d deep", i, MaxDepth)
			}
		case ']', '}':
			depth = max(depth-1, 0)
		}
	}
	return nil
}

// CheckYAMLDepth reports YAML whose flow collections ([...], {...}) nest
// deeper than MaxDepth. It counts every bracket, in strings too, so that
// no quoting trick hides one; a config file's strings hold few.
func CheckYAMLDepth(b []byte) error {
	depth := 0
	for i, c := range b {
		switch c {
		case '[', '{':
			if depth++; depth > MaxDepth {
				return fmt.Errorf("offset %d: brackets nested more than %d deep", i, MaxDepth)
			}
		case ']', '}':
			depth = max(depth-1, 0)
		}
	}
	return nil
}
