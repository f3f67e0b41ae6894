package filter

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bcwire/bcwire/dissect/flow"
)

// Extractor writes chosen fields of records as text, for -T fields -e
// FIELD: the names are a filter's.
type Extractor struct {
	names []string
	refs  []fieldRef
	addrs addrCache
	json  []byte
	made  bool // json is the current record's
}

type fieldRef struct {
	id   fieldID // numFields for fields.PATH
	path string
	jp   jsonPath
}

// NewExtractor checks the field names.
func NewExtractor(names []string) (*Extractor, error) {
	makeBoxedNames()
	e := &Extractor{names: names}
	for _, name := range names {
		if name == fieldsRoot {
			e.refs = append(e.refs, fieldRef{id: numFields})
			continue
		}
		if path, ok := strings.CutPrefix(name, fieldsRoot+"."); ok && path != "" {
			e.refs = append(e.refs, fieldRef{id: numFields, path: path, jp: compilePath(path)})
			continue
		}
		id, ok := fieldByName[name]
		if !ok {
			return nil, fmt.Errorf("-e %q: unknown field (fields: %s)", name, strings.Join(Names(), ", "))
		}
		e.refs = append(e.refs, fieldRef{id: id})
	}
	return e, nil
}

// Names are the fields, in order.
func (e *Extractor) Names() []string { return e.names }

// Next starts the fields of another record.
func (e *Extractor) Next() { e.made = false }

// IsTime reports whether field i is the time, which the caller formats
// (as -t says).
func (e *Extractor) IsTime(i int) bool { return e.refs[i].id == fTime }

// Append appends the text of field i of r: numbers in decimal, strings as
// they are, a game message's objects and arrays as JSON, and nothing when
// r does not have the field. Call Next before the fields of each record:
// the game message's JSON form is made once for all of them.
func (e *Extractor) Append(b []byte, i int, r *flow.Record, c *Context) []byte {
	ref := e.refs[i]
	if ref.id == numFields {
		if !e.made {
			e.made = true
			var ok bool
			if e.json, ok = gameJSON(e.json[:0], r); !ok {
				e.json = e.json[:0]
			}
		}
		if len(e.json) == 0 {
			return b
		}
		raw := e.json
		if ref.path != "" {
			raw = ref.jp.lookup(e.json)
		}
		if len(raw) > 0 && raw[0] == '"' {
			return append(b, jsonString(raw)...)
		}
		if string(raw) == "null" {
			return b
		}
		return append(b, raw...)
	}
	switch v := value(ref.id, r, c, &e.addrs).(type) {
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case float64:
		return strconv.AppendFloat(b, v, 'f', 6, 64)
	case string:
		return append(b, v...)
	case bool:
		return strconv.AppendBool(b, v)
	}
	return b
}
