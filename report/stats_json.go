package report

import (
	"time"

	"github.com/bcwire/bcwire/internal/jsonenc"
	"github.com/bcwire/bcwire/session"
)

// appendSessionStats appends v exactly as marshalJSON writes it. A capture
// with many sessions writes thousands of opcode rows, and encoding/json's
// reflection cost about 7,000 instructions a row. ok is false when a value
// has no JSON form (a time outside years 0..9999, a NaN share); the caller
// then goes through marshalJSON, which says why. m, when not nil, keeps the
// parts of rows that repeat from session to session.
func appendSessionStats(b []byte, v *sessionStatsJSON, m *rowMemo) (_ []byte, ok bool) {
	b = append(b, `{"file":`...)
	b = jsonenc.StringNoHTML(b, v.File)
	b = append(b, `,"server":`...)
	b = jsonenc.StringNoHTML(b, v.Server)
	b = append(b, `,"client":`...)
	b = jsonenc.StringNoHTML(b, v.Client)
	b = append(b, `,"slot":`...)
	b = jsonenc.Int(b, int64(v.Slot))
	b = append(b, `,"name":`...)
	b = jsonenc.StringNoHTML(b, v.Name)
	b = append(b, `,"start":`...)
	if b, ok = appendTime(b, v.Start); !ok {
		return b, false
	}
	b = append(b, `,"end":`...)
	if b, ok = appendTime(b, v.End); !ok {
		return b, false
	}
	b = append(b, `,"duration_s":`...)
	if b, ok = jsonenc.Float64Places(b, v.Duration, 3); !ok { // seconds() rounds to ms
		return b, false
	}
	b = append(b, `,"end_reason":`...)
	b = jsonenc.StringNoHTML(b, v.EndReason)
	b = append(b, `,"opcodes":[`...)
	for i := range v.Opcodes {
		if i > 0 {
			b = append(b, ',')
		}
		if b, ok = appendOpcodeRow(b, &v.Opcodes[i], m); !ok {
			return b, false
		}
	}
	b = append(b, `],"transport":[`...)
	for i := range v.Transport {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendTransportRow(b, &v.Transport[i], m)
	}
	b = append(b, ']')
	if len(v.NonStock) > 0 {
		b = append(b, `,"nonstock":[`...)
		for i := range v.NonStock {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendNonStockRow(b, &v.NonStock[i], m)
		}
		b = append(b, ']')
	}
	return append(b, '}'), true
}

func appendNonStockRow(b []byte, r *session.NonStockRow, m *rowMemo) []byte {
	if h := m.nonStock(r); h != nil {
		b = append(b, h.head...)
		b = jsonenc.Int(b, int64(r.Count))
		return append(b, h.tail...)
	}
	b = appendNonStockHead(b, r)
	b = jsonenc.Int(b, int64(r.Count))
	return appendNonStockTail(b, r)
}

// appendNonStockHead and appendNonStockTail are a non-stock row around
// its count.
func appendNonStockHead(b []byte, r *session.NonStockRow) []byte {
	b = jsonenc.StringNoHTML(append(b, `{"dir":`...), r.Dir)
	b = jsonenc.StringNoHTML(append(b, `,"name":`...), r.Name)
	return append(b, `,"count":`...)
}

func appendNonStockTail(b []byte, r *session.NonStockRow) []byte {
	b = jsonenc.StringNoHTML(append(b, `,"what":`...), r.What)
	b = jsonenc.StringNoHTML(append(b, `,"evidence":`...), r.Evidence)
	return append(b, '}')
}

func appendOpcodeRow(b []byte, r *session.OpcodeRow, m *rowMemo) (_ []byte, ok bool) {
	b = appendRowCounts(b, m, opcodeTable, r.Dir, uint8(r.Opcode), r.Hex, r.Name, r.Count, r.Bytes)
	// Shares are rounded to 4 places, rates to 3 (session.OpcodeRow).
	b = append(b, `,"share":`...)
	if b, ok = jsonenc.Float64Places(b, r.Share, 4); !ok {
		return b, false
	}
	b = append(b, `,"byte_share":`...)
	if b, ok = jsonenc.Float64Places(b, r.ByteShare, 4); !ok {
		return b, false
	}
	b = append(b, `,"per_min":`...)
	if b, ok = jsonenc.Float64Places(b, r.PerMinute, 3); !ok {
		return b, false
	}
	b = append(b, `,"per_15min":`...)
	if b, ok = jsonenc.Float64Places(b, r.Per15Min, 3); !ok {
		return b, false
	}
	return append(b, '}'), true
}

func appendTransportRow(b []byte, r *session.TransportRow, m *rowMemo) []byte {
	b = appendRowCounts(b, m, transportTable, r.Dir, uint8(r.Type), r.Hex, r.Name, r.Count, r.Bytes)
	return append(b, '}')
}

// The two tables whose rows appendRowCounts opens.
const (
	opcodeTable = iota
	transportTable
)

// codeKeys name the code field of each table's rows.
var codeKeys = [2]string{opcodeTable: `,"opcode":`, transportTable: `,"type":`}

// appendRowCounts opens a row object of table with the fields opcode and
// transport rows share.
func appendRowCounts(b []byte, m *rowMemo, table int, dir string, code uint8, hex, name string, count, bytes int) []byte {
	if head := m.rowHead(table, dir, code, hex, name); head != nil {
		b = append(b, head...)
	} else {
		b = appendRowHead(b, table, dir, code, hex, name)
	}
	b = jsonenc.Int(b, int64(count))
	b = append(b, `,"bytes":`...)
	return jsonenc.Int(b, int64(bytes))
}

// appendRowHead is a row's opening up to its count, which rowMemo keeps.
func appendRowHead(b []byte, table int, dir string, code uint8, hex, name string) []byte {
	b = append(b, `{"dir":`...)
	b = jsonenc.StringNoHTML(b, dir)
	b = append(b, codeKeys[table&1]...)
	b = jsonenc.Uint(b, uint64(code))
	b = append(b, `,"hex":`...)
	b = jsonenc.StringNoHTML(b, hex)
	b = append(b, `,"name":`...)
	b = jsonenc.StringNoHTML(b, name)
	return append(b, `,"count":`...)
}

// rowMemo keeps the JSON of the parts of rows that repeat from session to
// session, with the strings each was made from: a row's opening up to its
// count (direction, code, hex, name), a non-stock row's around its count
// (its registry texts are most of a session's bytes). A row whose strings
// are the same (the same pointers, mostly: a quick compare) reuses the
// bytes instead of escaping its strings again.
type rowMemo struct {
	// by table, direction (C->S, S->C) and code, made at first use: a
	// session has a few dozen of the 1,024 (the array of values was 80 KB)
	heads     [2][2][256]*memoHead
	nonStocks []memoNonStock
}

type memoHead struct {
	dir, hex, name string
	json           []byte
}

type memoNonStock struct {
	dir, name, what, evidence string
	head, tail                []byte
}

// maxMemoNonStock bounds the non-stock rows kept: one a direction and
// registry form.
const maxMemoNonStock = 64

// rowHead is the opening of the row, made now if the strings are not the
// ones it was made from; nil for a direction it does not keep (or m nil).
func (m *rowMemo) rowHead(table int, dir string, code uint8, hex, name string) []byte {
	if m == nil {
		return nil
	}
	var d int
	switch dir {
	case "C->S":
		d = 0
	case "S->C":
		d = 1
	default:
		return nil
	}
	h := m.heads[table&1][d][code]
	if h == nil {
		h = new(memoHead)
		m.heads[table&1][d][code] = h
	}
	if h.json == nil || h.dir != dir || h.hex != hex || h.name != name {
		*h = memoHead{dir: dir, hex: hex, name: name, json: appendRowHead(h.json[:0], table, dir, code, hex, name)}
	}
	return h.json
}

// nonStock is r's parts, made now if none has r's strings; nil when m is
// nil or full.
func (m *rowMemo) nonStock(r *session.NonStockRow) *memoNonStock {
	if m == nil {
		return nil
	}
	for i := range m.nonStocks {
		h := &m.nonStocks[i]
		if h.name == r.Name && h.dir == r.Dir && h.what == r.What && h.evidence == r.Evidence {
			return h
		}
	}
	if len(m.nonStocks) == maxMemoNonStock {
		return nil
	}
	m.nonStocks = append(m.nonStocks, memoNonStock{dir: r.Dir, name: r.Name, what: r.What, evidence: r.Evidence,
		head: appendNonStockHead(nil, r), tail: appendNonStockTail(nil, r)})
	return &m.nonStocks[len(m.nonStocks)-1]
}

// appendTime appends t as time.Time's MarshalJSON does (RFC 3339 with
// nanoseconds, quoted); ok is false where MarshalJSON fails: a year outside
// 0..9999 or a zone offset of a day or more.
func appendTime(b []byte, t time.Time) (_ []byte, ok bool) {
	if y := t.Year(); y < 0 || y > 9999 {
		return b, false
	}
	if _, off := t.Zone(); off <= -24*3600 || off >= 24*3600 {
		return b, false
	}
	b = append(b, '"')
	b = t.AppendFormat(b, time.RFC3339Nano)
	return append(b, '"'), true
}
