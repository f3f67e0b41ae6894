package report

// The JSON form of decode's records (--json, and -V's fields, which are
// the members of a message's JSON object).

import (
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"net/netip"
	"slices"
	"strconv"
	"time"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/internal/jsonenc"
)

// appendJSON appends v's JSON form: AppendJSON's, or encoding/json's for a
// message type without one. ok is false (and b unchanged) when v has no
// JSON form, where json.Marshal fails.
func appendJSON(b []byte, v any) (out []byte, ok bool) {
	if a, isAppender := v.(jsonenc.Appender); isAppender {
		return jsonenc.Append(b, a)
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return b, false
	}
	return append(b, raw...), true
}

// appendMember appends ,"key": and v's JSON form, or nothing when v has
// none.
func appendMember(b []byte, key string, v any) []byte {
	n := len(b)
	b = append(append(append(b, `,"`...), key...), `":`...)
	b, ok := appendJSON(b, v)
	if !ok {
		return b[:n]
	}
	return b
}

// dirNameJSON, peerMemberJSON, typeMemberJSON, typeReliableJSON0 and 1,
// opcodeMemberJSON and opcodeFieldsJSON (tables_gen.go, made by
// TestGeneratedTables) are the quoted names of every direction, and the
// members that name a message's peer, transport type and opcode: they are
// in every record, and one copy of a member is cheaper than writing its
// parts.
//
//   - peerMemberJSON is ,"peer":P,"msg": for each peer byte P;
//   - typeMemberJSON is ,"type":T,"type_name":"<name>" for each type T;
//     typeReliableJSON0 and typeReliableJSON1 add ,"reliable":false and
//     ,"reliable":true;
//   - opcodeMemberJSON is ,"opcode":O,"name":"<name>" for each opcode O;
//     opcodeFieldsJSON adds ,"fields":.

const fieldsKey = `,"fields":`

// appendGoQuoted appends s quoted as strconv.AppendQuote quotes it (as the
// record's warnings and errors always were), the short way when s is
// printable ASCII, as they nearly always are.
func appendGoQuoted(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || c == '"' || c == '\\' {
			return strconv.AppendQuote(b, s)
		}
	}
	return append(append(append(b, '"'), s...), '"')
}

// appendQuotedAddr appends a.String() quoted. Only a zone can hold what
// strconv would escape (or an invalid address, which String names but
// AppendTo leaves empty): those take the long way.
func appendQuotedAddr(b []byte, a netip.AddrPort) []byte {
	if !a.IsValid() || a.Addr().Zone() != "" {
		return strconv.AppendQuote(b, a.String())
	}
	return append(a.AppendTo(append(b, '"')), '"')
}

// appendHexMember appends ,"key":"<lower-case hex>".
func appendHexMember(b []byte, key string, data []byte) []byte {
	b = append(append(append(b, `,"`...), key...), `":"`...)
	return append(hex.AppendEncode(b, data), '"')
}

// recordTimes writes record times as time.RFC3339Nano does in UTC.
// Records come in time order, many in the same second, so the date and
// clock of the last second are kept rather than formatted again.
type recordTimes struct {
	sec   int64    // Unix time of clock
	clock [32]byte // "2006-01-02T15:04:05" of sec
	n     int      // length of clock; 0 before the first time
}

// Four-digit years keep the layout's width; others are formatted whole.
var (
	firstCachedSec = time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	lastCachedSec  = time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC).Unix()
)

func (c *recordTimes) append(b []byte, t time.Time) []byte {
	t = t.UTC()
	sec := t.Unix()
	if sec < firstCachedSec || sec > lastCachedSec {
		return t.AppendFormat(b, time.RFC3339Nano)
	}
	if c.n == 0 || sec != c.sec {
		c.sec, c.n = sec, len(t.AppendFormat(c.clock[:0], "2006-01-02T15:04:05"))
	}
	// The clock (four-digit years keep its length), a fraction of up to
	// ten bytes and the Z, written in place.
	const room = clockLen + 10 + 1
	b = slices.Grow(b, room)
	n := len(b)
	w := b[n : n+room]
	*(*[clockLen]byte)(w) = [clockLen]byte(c.clock[:clockLen])
	k := clockLen
	if ns := t.Nanosecond(); ns != 0 { // nine digits, trailing zeros dropped
		// Two digits at a time from a table: a tenth of the divisions.
		w[k], w[k+1] = '.', byte('0'+ns/1e8)
		r := ns % 1e8
		binary.LittleEndian.PutUint16(w[k+2:], jsonenc.PairWords[r/1e6])
		binary.LittleEndian.PutUint16(w[k+4:], jsonenc.PairWords[r/1e4%100])
		binary.LittleEndian.PutUint16(w[k+6:], jsonenc.PairWords[r/100%100])
		binary.LittleEndian.PutUint16(w[k+8:], jsonenc.PairWords[r%100])
		k += 10
		for w[k-1] == '0' {
			k--
		}
	}
	w[k] = 'Z'
	return b[:n+k+1]
}

// clockLen is the length of "2006-01-02T15:04:05", a clock of recordTimes.
const clockLen = 19

// AppendRecordJSON appends the NDJSON object for r (without newline).
func AppendRecordJSON(b []byte, r *flow.Record) []byte {
	return appendRecordJSON(b, r, nil, nil)
}

// appendRecordJSON is AppendRecordJSON, with the openings of the records
// before (o, nil for none); gameJSON, when not nil, is the JSON of r's
// game message, already made (by a display filter).
func appendRecordJSON(b []byte, r *flow.Record, o *jsonOpenings, gameJSON []byte) []byte {
	if o != nil {
		b = o.append(b, r)
	} else {
		var times recordTimes
		b = appendJSONOpening(b, r, &times, nil)
	}
	switch r.Kind {
	case flow.KindGameSpy:
		if r.Master != nil {
			b = appendMember(b, "gamespy_master", r.Master)
			break
		}
		b = appendMember(b, "gamespy", r.GameSpy)
	case flow.KindDamaged:
		if r.Src.IsValid() {
			b = jsonenc.Int(append(b, `,"peer":`...), int64(r.Peer))
			b = jsonenc.Int(append(b, `,"msg":`...), int64(r.MsgIndex))
		}
		if len(r.Raw) > 0 {
			b = appendHexMember(b, "raw", r.Raw)
		}
	case flow.KindMessage:
		b = appendMessageJSON(b, r, gameJSON)
	}
	if r.NonStock != nil {
		b = r.NonStock.AppendJSON(append(b, `,"nonstock":`...))
	}
	if r.Warning != "" {
		b = appendGoQuoted(append(b, `,"warning":`...), r.Warning)
	}
	if r.Err != nil {
		b = appendGoQuoted(append(b, `,"error":`...), r.Err.Error())
	}
	return append(b, '}')
}

func appendMessageJSON(b []byte, r *flow.Record, gameJSON []byte) []byte {
	m := r.Msg
	b = jsonenc.Int(append(b, peerMemberJSON[r.Peer]...), int64(r.MsgIndex))
	if m.Type != dissect.TypeAck {
		if m.Reliable {
			return appendDataJSON(append(b, typeReliableJSON1[m.Type]...), r, gameJSON)
		}
		return appendDataJSON(append(b, typeReliableJSON0[m.Type]...), r, gameJSON)
	}
	b = append(b, typeMemberJSON[m.Type]...)
	b = jsonenc.Int(append(b, `,"seq":`...), int64(m.Seq))
	b = jsonenc.Int(append(b, `,"ack_flags":`...), int64(m.AckFlags))
	if m.AckFlags&dissect.AckFragment != 0 {
		b = jsonenc.Int(append(b, `,"ack_fragment":`...), int64(m.AckFragIndex))
	}
	return b
}

// appendDataJSON appends what follows the reliable member of a message
// other than an ack: its sequence, fragment and legacy members, and its
// game or control message.
func appendDataJSON(b []byte, r *flow.Record, gameJSON []byte) []byte {
	m := r.Msg
	if m.Ordered {
		b = append(b, `,"ordered":true`...)
	}
	if m.Reliable {
		b = jsonenc.Int(append(b, `,"seq":`...), int64(m.Seq))
	}
	if m.Fragment {
		b = jsonenc.Int(append(b, `,"fragment":{"index":`...), int64(m.FragIndex))
		if m.HasTotal() {
			b = jsonenc.Int(append(b, `,"total":`...), int64(m.FragTotal))
		}
		if r.DuplicateFragment {
			b = append(b, `,"duplicate":true`...)
		}
		b = append(b, '}')
	}
	if m.Legacy {
		b = append(b, `,"legacy_header":true`...)
	}
	switch {
	case r.Game != nil:
		g := r.Game.Msg
		if r.Reassembled > 0 {
			b = append(b, opcodeMemberJSON[g.Opcode()]...)
			b = append(jsonenc.Int(append(b, `,"reassembled":`...), int64(r.Reassembled)), fieldsKey...)
		} else {
			b = append(b, opcodeFieldsJSON[g.Opcode()]...)
		}
		if gameJSON != nil {
			b = append(b, gameJSON...)
		} else if out, ok := appendJSON(b, g); ok {
			b = out
		} else {
			b = b[:len(b)-len(fieldsKey)] // no JSON form: no fields member
		}
		if len(r.Game.Unparsed) > 0 {
			b = appendHexMember(b, "unparsed", r.Game.Unparsed)
		}
	case r.Control != nil:
		b = appendMember(b, "control", r.Control)
		if len(r.Control.Extra) > 0 {
			b = appendHexMember(b, "unparsed", r.Control.Extra)
		}
	}
	return b
}

// AppendValueJSON appends v as decode --json writes a member's value (a
// game message's "fields", a control message, a GameSpy datagram).
func AppendValueJSON(b []byte, v any) []byte {
	out, _ := appendJSON(b, v)
	return out
}
