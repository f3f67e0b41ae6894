package filter_test

import (
	"errors"
	"runtime"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/report/filter"
)

// Filters whose text shows them past the bounds are refused when they
// compile: they ran out of memory (repeat), or took 51 s a record (nested
// sums over 1..1000).
func TestFilterLimitsAtCompileTime(t *testing.T) {
	for _, src := range []string{
		`len(repeat(repeat("a", 999999), 1000000)) > 0`,
		`len(repeat("abcd", 20000)) > 0`,
		`let a = 1..1000; sum(a, sum(a, sum(a, # * frame))) < 0`,
		`sum(1..200, sum(1..200, #)) > 0`,
		`len(1..100000) > 0`,
		`any(1..100, len(repeat("a", 1000)) > 0)`,
		`reduce(1..10, #acc + #acc, "a") != ""`,
		`join(["a"], "") == "a"`,
	} {
		_, err := filter.Compile(src)
		var fe *filter.Error
		if !errors.As(err, &fe) {
			t.Errorf("%s: compiled (%v), want a compile error", src, err)
			continue
		}
	}
	for _, src := range []string{`any(1..100, # == frame)`, `len(repeat("ab", 100)) == 200`, `let a = 1..50; sum(a, sum(a, #)) > 0`} {
		if _, err := filter.Compile(src); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
}

// Bounds that depend on the record are counted while the filter runs: the
// record that exhausts one is an error naming the filter and the frame,
// the filter matches nothing after it, and the evaluation stopped early
// (allocations are measured, not time).
func TestFilterLimitsAtRunTime(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`len(repeat("a", frame * 1000)) > 0`, "bytes"},
		{`let r = 1..frame; sum(r, sum(r, #)) > 0`, "loop iterations"},
		{`len(map(1..frame * 10, #)) > 0`, "memory budget"},
		{`let a = repeat("x", frame); let b = a + a; let c = b + b; let d = c + c; let e = d + d; let g = e + e; let h = g + g; let i = h + h; let j = i + i; let k = j + j; let l = k + k; let m = l + l; len(m + m) > 0`, "bytes of strings"},
	} {
		f, err := filter.Compile(tc.src)
		if err != nil {
			t.Fatalf("%s: %v", tc.src, err)
		}
		ctx := &filter.Context{File: "x.pcap"}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		f.Match(&flow.Record{Frame: 5}, ctx)
		if f.Err() != nil {
			t.Fatalf("%s: frame 5 failed: %v", tc.src, f.Err())
		}
		matched := f.Match(&flow.Record{Frame: 5000}, ctx)
		runtime.ReadMemStats(&after)
		err = f.Err()
		var re *filter.RunError
		if matched || !errors.As(err, &re) || re.Frame != 5000 || re.File != "x.pcap" || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: matched %v, error %v, want a RunError about %s", tc.src, matched, err, tc.want)
		}
		if !strings.Contains(err.Error(), "x.pcap: frame 5000") {
			t.Errorf("error %q does not name the record", err)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 8<<20 {
			t.Errorf("%s: allocated %d KiB on the failing record", tc.src, got>>10)
		}
		if f.Match(&flow.Record{Frame: 1}, ctx) {
			t.Errorf("%s: a failed filter matched again", tc.src)
		}
	}
}

// The budgets are per record: a filter that loops on every record never
// runs out over many records.
func TestFilterBudgetsArePerRecord(t *testing.T) {
	f, err := filter.Compile(`any(1..5000, # == frame) and len(repeat("a", 30000) + "b") > 0`)
	if err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 2000; i++ {
		if !f.Match(&flow.Record{Frame: i}, &filter.Context{}) {
			t.Fatalf("frame %d: no match (%v)", i, f.Err())
		}
	}
}
