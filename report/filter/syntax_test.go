package filter_test

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/report/filter"
)

// tshark's spellings (issue 33) hold for exactly the records their
// expression-language forms hold for, on every record of the battle.
func TestTsharkSpellings(t *testing.T) {
	pairs := [][2]string{
		{`opcode in {0x2C 0x2D}`, `opcode in [0x2C, 0x2D]`},
		{`opcode in {0x2C, 0x2D}`, `opcode in [0x2C, 0x2D]`},
		{`name in {"CHAT" "TEAM_CHAT"}`, `name == "CHAT" or name == "TEAM_CHAT"`},
		{`opcode eq 0x2C`, `opcode == 0x2C`},
		{`opcode ne 0x1C and seq gt 5`, `opcode != 0x1C and seq > 5`},
		{`frame ge 100 and frame le 200 or frame lt 3`, `frame >= 100 and frame <= 200 or frame < 3`},
		{`name ~ "^Start"`, `name matches "^Start"`},
		{`name~"Fir"`, `name matches "Fir"`},
		{`frame in {1..10 20}`, `frame >= 1 and frame <= 10 or frame == 20`},
		{`time in {1.5..2.25}`, `time >= 1.5 and time <= 2.25`},
		{`frame not in {1..4000}`, `frame > 4000`},
		{`fields.speed in {5..7} and opcode in {0x1C}`, `fields.speed >= 5 and fields.speed <= 7 and opcode == 0x1C`},
		{`opcode in {}`, `frame < 0`},
	}
	type pair struct{ a, b *filter.Filter }
	var fs []pair
	for _, p := range pairs {
		a, err := filter.Compile(p[0])
		if err != nil {
			t.Fatalf("Compile(%q): %v", p[0], err)
		}
		b, err := filter.Compile(p[1])
		if err != nil {
			t.Fatalf("Compile(%q): %v", p[1], err)
		}
		fs = append(fs, pair{a, b})
	}
	rd, err := capture.Open(filepath.Join("..", "..", "testdata", "pcaps", "battle.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	held := make([]int, len(pairs))
	ctx := &filter.Context{}
	flow.Run(rd, flow.New(flow.Options{}), func(r *flow.Record) bool {
		if ctx.Start.IsZero() {
			ctx.Start = r.Time
		}
		for i, p := range fs {
			a, b := p.a.Match(r, ctx), p.b.Match(r, ctx)
			if a != b {
				t.Fatalf("%q gives %v, %q %v on frame %d", pairs[i][0], a, pairs[i][1], b, r.Frame)
			}
			if a {
				held[i]++
			}
		}
		return true
	})
	for i, n := range held {
		if n == 0 && i != len(pairs)-1 {
			t.Errorf("%q held for no record: the comparison proves nothing", pairs[i][0])
		}
	}
}

// Errors speak of the filter, never of Go or of the library: no Go type
// names, no token kinds, and the column of the fault in what was typed.
func TestErrorsWithoutInternals(t *testing.T) {
	for _, tc := range []struct {
		expr   string
		column int
		msg    string
	}{
		{`frame.number == 3`, 1, `unknown field "frame.number" (field names are decode --json's`},
		{`udp.port == 22101`, 1, `unknown field "udp.port"`},
		{`opcode in 5`, 8, "in needs a set after it"},
		{`opcode in {0x2C 0x2D`, 11, "{ without its }"},
		{`opcode in {0x2C name}`, 17, `"name" cannot be in a set`},
		{`frame in {1..}`, 14, "a range needs its end"},
		{`name ~ `, 8, "ends too early"},
		{`frame > "a"`, 7, "> cannot compare a number with a string"},
		{`name == 5`, 6, "== cannot compare a string with a number"},
		{`fields.text contains 5`, 13, "contains cannot compare a field of the game message with a number"},
		{`name eq "CHAT" and frame gt`, 28, "ends too early"},
		{`opcode eq 0x2C 0x2D`, 16, `"0x2D" is not expected here`},
		{`name # "x"`, 6, `"#" is not expected here`},
		{`name == "a" § 1`, 13, "unexpected character"},
		{`name == "CHAT`, 9, "closing quote"},
		{`}`, 1, "} without its {"},
		{`frame in {"a"}`, 7, "in cannot look for a number in a set of strings"},
		{`name[0] == "C"`, 5, "string has no elements to index"},
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
		for _, internal := range []string{"interface {}", "[]", "token", "Identifier(", "Number(", "U+", "mismatched types", " int ", "float64"} {
			if strings.Contains(fe.Msg, internal) {
				t.Errorf("Compile(%q): %q shows %q", tc.expr, fe.Msg, internal)
			}
		}
	}
}

// A comparison that cannot be made on a record (a number with a string)
// is an error of the filter, not a filter that holds for nothing.
func TestTypeErrorAtRunTimeIsAnError(t *testing.T) {
	f, err := filter.Compile(`fields.speed > "a"`)
	if err != nil {
		t.Fatalf("compile: %v", err) // its type shows only on a record
	}
	rd, err := capture.Open(filepath.Join("..", "..", "testdata", "pcaps", "join.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	flow.Run(rd, flow.New(flow.Options{}), func(r *flow.Record) bool {
		if f.Match(r, &filter.Context{}) {
			t.Fatalf("held for frame %d", r.Frame)
		}
		return f.Err() == nil
	})
	if f.Err() == nil || !strings.Contains(f.Err().Error(), `> cannot compare a number with a string`) || !strings.Contains(f.Err().Error(), "fields.speed") {
		t.Errorf("Err() = %v", f.Err())
	}
	ok, _ := filter.Compile(`fields.speed > 5`)
	rd, _ = capture.Open(filepath.Join("..", "..", "testdata", "pcaps", "join.pcap"))
	flow.Run(rd, flow.New(flow.Options{}), func(r *flow.Record) bool { ok.Match(r, &filter.Context{}); return true })
	if ok.Err() != nil {
		t.Errorf("a good filter: %v", ok.Err())
	}
}
