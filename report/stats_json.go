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
// then goes through marshalJSON, which says why.
func appendSessionStats(b []byte, v *sessionStatsJSON) (_ []byte, ok bool) {
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
		if b, ok = appendOpcodeRow(b, &v.Opcodes[i]); !ok {
			return b, false
		}
	}
	b = append(b, `],"transport":[`...)
	for i := range v.Transport {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendTransportRow(b, &v.Transport[i])
	}
	b = append(b, ']')
	if len(v.NonStock) > 0 {
		b = append(b, `,"nonstock":[`...)
		for i := range v.NonStock {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendNonStockRow(b, &v.NonStock[i])
		}
		b = append(b, ']')
	}
	return append(b, '}'), true
}

func appendNonStockRow(b []byte, r *session.NonStockRow) []byte {
	b = jsonenc.StringNoHTML(append(b, `{"dir":`...), r.Dir)
	b = jsonenc.StringNoHTML(append(b, `,"name":`...), r.Name)
	b = jsonenc.Int(append(b, `,"count":`...), int64(r.Count))
	b = jsonenc.StringNoHTML(append(b, `,"what":`...), r.What)
	b = jsonenc.StringNoHTML(append(b, `,"evidence":`...), r.Evidence)
	return append(b, '}')
}

func appendOpcodeRow(b []byte, r *session.OpcodeRow) (_ []byte, ok bool) {
	b = appendRowCounts(b, r.Dir, `,"opcode":`, uint8(r.Opcode), r.Hex, r.Name, r.Count, r.Bytes)
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

func appendTransportRow(b []byte, r *session.TransportRow) []byte {
	b = appendRowCounts(b, r.Dir, `,"type":`, uint8(r.Type), r.Hex, r.Name, r.Count, r.Bytes)
	return append(b, '}')
}

// appendRowCounts opens a row object with the fields opcode and transport
// rows share; codeKey names the code field (`,"opcode":` or `,"type":`).
func appendRowCounts(b []byte, dir, codeKey string, code uint8, hex, name string, count, bytes int) []byte {
	b = append(b, `{"dir":`...)
	b = jsonenc.StringNoHTML(b, dir)
	b = append(b, codeKey...)
	b = jsonenc.Uint(b, uint64(code))
	b = append(b, `,"hex":`...)
	b = jsonenc.StringNoHTML(b, hex)
	b = append(b, `,"name":`...)
	b = jsonenc.StringNoHTML(b, name)
	b = append(b, `,"count":`...)
	b = jsonenc.Int(b, int64(count))
	b = append(b, `,"bytes":`...)
	return jsonenc.Int(b, int64(bytes))
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
