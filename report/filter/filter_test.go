package filter_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/report"
	"github.com/bcwire/bcwire/report/filter"
)

// decoded is one record as decode --json writes it, and the record itself
// (its pointer is reused by the tracker, so each test runs inside emit).
type check struct {
	expr string
	want func(m map[string]any, rel float64) bool
}

func num(m map[string]any, key string) (float64, bool) {
	f, ok := m[key].(float64)
	return f, ok
}

func fieldsOf(m map[string]any) map[string]any {
	f, _ := m["fields"].(map[string]any)
	return f
}

// The filters below, each with the same predicate written over the
// record's decode --json object: the filter must agree on every record of
// the battle and of the damaged capture.
var checks = []check{
	{`name == "StateUpdate"`, func(m map[string]any, _ float64) bool { return m["name"] == "StateUpdate" }},
	{`opcode == 0x2C`, func(m map[string]any, _ float64) bool { n, ok := num(m, "opcode"); return ok && n == 0x2C }},
	{`opcode in [0x2C, 44, 0x1C]`, func(m map[string]any, _ float64) bool {
		n, ok := num(m, "opcode")
		return ok && (n == 0x2C || n == 0x1C)
	}},
	{`not (seq > 5)`, func(m map[string]any, _ float64) bool { n, ok := num(m, "seq"); return !(ok && n > 5) }},
	{`dir == "S->C" and reliable`, func(m map[string]any, _ float64) bool { return m["dir"] == "S->C" && m["reliable"] == true }},
	{`fields.text contains "hello"`, func(m map[string]any, _ float64) bool {
		s, ok := fieldsOf(m)["text"].(string)
		return ok && strings.Contains(s, "hello")
	}},
	{`name matches "^(Start|Stop)Firing$" || peer == 3`, func(m map[string]any, _ float64) bool {
		n, _ := m["name"].(string)
		p, ok := num(m, "peer")
		return regexp.MustCompile(`^(Start|Stop)Firing$`).MatchString(n) || ok && p == 3
	}},
	{`src contains ":22101" and (type == 0x32 or type_name == "ack")`, func(m map[string]any, _ float64) bool {
		s, _ := m["src"].(string)
		tn, _ := m["type_name"].(string)
		return strings.Contains(s, ":22101") && (tn == "data" || tn == "ack")
	}},
	{`fields.speed >= 6.5`, func(m map[string]any, _ float64) bool { s, ok := fieldsOf(m)["speed"].(float64); return ok && s >= 6.5 }},
	{`fields.object.id == 0x3FFFFFFF and fields.object.slot == 0`, func(m map[string]any, _ float64) bool {
		o, _ := fieldsOf(m)["object"].(map[string]any)
		return o != nil && o["id"] == "0x3FFFFFFF" && o["slot"] == 0.0
	}},
	{`fields.forward[1] > 0.5`, func(m map[string]any, _ float64) bool {
		a, _ := fieldsOf(m)["forward"].([]any)
		return len(a) > 1 && a[1].(float64) > 0.5
	}},
	{`fields.text`, func(m map[string]any, _ float64) bool { _, ok := fieldsOf(m)["text"]; return ok }},
	{`time > 30 and time < 31`, func(_ map[string]any, rel float64) bool { return rel > 30 && rel < 31 }},
	{`frame >= 1000 && frame < 0x400 && !(msg == 0)`, func(m map[string]any, _ float64) bool {
		f, _ := num(m, "frame")
		n, ok := num(m, "msg")
		return f >= 1000 && f < 0x400 && !(ok && n == 0)
	}},
	{`error contains "truncated"`, func(m map[string]any, _ float64) bool {
		s, _ := m["error"].(string)
		return strings.Contains(s, "truncated")
	}},
	{`file == "x.pcap"`, func(map[string]any, float64) bool { return true }},
}

func TestFilterAgreesWithJSON(t *testing.T) {
	for _, name := range []string{"battle.pcap", "damaged.pcap"} {
		filters := make([]*filter.Filter, len(checks))
		for i, c := range checks {
			f, err := filter.Compile(c.expr)
			if err != nil {
				t.Fatalf("Compile(%q): %v", c.expr, err)
			}
			filters[i] = f
		}
		matched := make([]int, len(checks))
		rd, err := capture.Open(filepath.Join("..", "..", "testdata", "pcaps", name))
		if err != nil {
			t.Fatal(err)
		}
		ctx := &filter.Context{File: "x.pcap"}
		var line []byte
		records := 0
		_, err = flow.Run(rd, flow.New(flow.Options{}), func(r *flow.Record) bool {
			records++
			if ctx.Start.IsZero() {
				ctx.Start = r.Time
			}
			line = report.AppendRecordJSON(line[:0], r)
			var m map[string]any
			if err := json.Unmarshal(line, &m); err != nil {
				t.Fatalf("%s", line)
			}
			rel := 0.0
			if !r.Time.IsZero() {
				rel = r.Time.Sub(ctx.Start).Seconds()
			}
			for i, c := range checks {
				got, want := filters[i].Match(r, ctx), c.want(m, rel)
				if got != want {
					t.Errorf("%s: %q on %s: got %v, want %v", name, c.expr, line, got, want)
				}
				if got {
					matched[i]++
				}
			}
			return !t.Failed()
		})
		rd.Close()
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range checks {
			if name == "battle.pcap" && strings.HasPrefix(c.expr, "error") || name == "damaged.pcap" && !strings.HasPrefix(c.expr, "error") {
				continue
			}
			{
				if matched[i] == 0 || matched[i] == records && c.expr != `file == "x.pcap"` {
					t.Errorf("%s: %q matched %d of %d records: the check proves nothing", name, c.expr, matched[i], records)
				}
			}
		}
	}
}

// TestFilterErrorsPointAtTheColumn: bad expressions are errors with the
// column of the fault.
func TestFilterErrorsPointAtTheColumn(t *testing.T) {
	for _, tc := range []struct {
		expr   string
		column int
		msg    string
	}{
		{`nmae == "CHAT"`, 1, `unknown field "nmae"`},
		{`name == "CHAT" and frame >`, 27, "ends too early"},
		{`frame contains "x"`, 7, "contains cannot compare a number with a string"},
		{`name = "CHAT"`, 6, ""},
		{`(name == "CHAT"`, 16, ""},
		{`frame + 1`, 1, "not a test"},
	} {
		_, err := filter.Compile(tc.expr)
		var fe *filter.Error
		if !errors.As(err, &fe) {
			t.Errorf("Compile(%q) = %v, want a *filter.Error", tc.expr, err)
			continue
		}
		if fe.Column != tc.column || !strings.Contains(fe.Msg, tc.msg) {
			t.Errorf("Compile(%q): column %d %q, want column %d and %q", tc.expr, fe.Column, fe.Msg, tc.column, tc.msg)
		}
		lines := strings.Split(err.Error(), "\n")
		if len(lines) != 3 || strings.Index(lines[2], "^")-2 != tc.column-1 {
			t.Errorf("Compile(%q): the caret is not under column %d:\n%v", tc.expr, tc.column, err)
		}
	}
}

// TestFilterRejectsWithoutAllocating: a filter on the name, the direction
// or the opcode allocates nothing per record.
func TestFilterRejectsWithoutAllocating(t *testing.T) {
	rd, err := capture.Open(filepath.Join("..", "..", "testdata", "pcaps", "battle.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Close()
	var recs []flow.Record
	flow.Run(rd, flow.New(flow.Options{}), func(r *flow.Record) bool {
		if len(recs) < 2000 {
			recs = append(recs, *r) // the Game pointer is shared, so only the last is intact; fine for name
		}
		return true
	})
	ctx := &filter.Context{File: "a", Start: time.Unix(0, 0)}
	for _, expr := range []string{`name == "CHAT"`, `dir == "C->S" and opcode == 0x2C`, `peer == 9 or seq == 70000`} {
		f, err := filter.Compile(expr)
		if err != nil {
			t.Fatal(err)
		}
		i := 0
		allocs := testing.AllocsPerRun(len(recs), func() {
			f.Match(&recs[i%len(recs)], ctx)
			i++
		})
		if allocs != 0 {
			t.Errorf("%q: %.2f allocations per record", expr, allocs)
		}
	}
}

// BenchmarkMatch runs filters over the first 2,000 records of the battle
// (copies whose game message is the last one decoded, so fields.PATH looks
// into one message).
func BenchmarkMatch(b *testing.B) {
	rd, err := capture.Open(filepath.Join("..", "..", "testdata", "pcaps", "battle.pcap"))
	if err != nil {
		b.Fatal(err)
	}
	defer rd.Close()
	var recs []flow.Record
	flow.Run(rd, flow.New(flow.Options{}), func(r *flow.Record) bool {
		if len(recs) < 2000 {
			recs = append(recs, *r)
		}
		return true
	})
	for _, expr := range []string{`name == "CHAT"`, `dir == "C->S" and seq > 100`, `fields.speed > 5`, `src contains "10.0.1.10" and name in ["CHAT", "StateUpdate"]`} {
		b.Run(expr, func(b *testing.B) {
			f, err := filter.Compile(expr)
			if err != nil {
				b.Fatal(err)
			}
			ctx := &filter.Context{}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				f.Match(&recs[i%len(recs)], ctx)
			}
		})
	}
}
