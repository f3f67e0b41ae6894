package report

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/dissect/flow"
)

// TestClockFormats: tshark's -t values on three frames, the middle one
// carrying two records, with the clock observing them all.
func TestClockFormats(t *testing.T) {
	t0 := time.Date(2026, 1, 10, 20, 0, 19, 371563067, time.UTC)
	recs := []flow.Record{
		{Frame: 1, Time: t0},
		{Frame: 2, Time: t0.Add(1500 * time.Millisecond)},
		{Frame: 2, Time: t0.Add(1500 * time.Millisecond), MsgIndex: 1},
		{Frame: 5, Time: t0.Add(1750 * time.Millisecond)},
	}
	old := time.Local
	time.Local = time.FixedZone("X", 3600)
	defer func() { time.Local = old }()
	want := map[TimeFormat][]string{
		TimeRelative:     {"0.000000", "1.500000", "1.500000", "1.750000"},
		TimeDelta:        {"0.000000", "1.500000", "1.500000", "0.250000"},
		TimeEpoch:        {"1768075219.371563", "1768075220.871563", "1768075220.871563", "1768075221.121563"},
		TimeAbsolute:     {"21:00:19.371563", "21:00:20.871563", "21:00:20.871563", "21:00:21.121563"},
		TimeAbsoluteDate: {"2026-01-10 21:00:19.371563", "2026-01-10 21:00:20.871563", "2026-01-10 21:00:20.871563", "2026-01-10 21:00:21.121563"},
	}
	for _, name := range []string{"r", "d", "e", "a", "ad"} {
		f, err := ParseTimeFormat(name)
		if err != nil {
			t.Fatal(err)
		}
		c := Clock{Format: f}
		for i := range recs {
			c.Observe(&recs[i])
			if got := string(c.Append(nil, &recs[i])); got != want[f][i] {
				t.Errorf("-t %s, record %d: %q, want %q", name, i, got, want[f][i])
			}
			if got := len(c.Append(nil, &recs[i])); got > c.Width() {
				t.Errorf("-t %s: %d characters, wider than the column's %d", name, got, c.Width())
			}
		}
	}
	if _, err := ParseTimeFormat("x"); err == nil || !strings.Contains(err.Error(), "ad (absolute with date)") {
		t.Errorf("ParseTimeFormat(x) = %v", err)
	}
}

// TestClockCountsFromTheFirstRecordObserved: records observed but not
// printed still set the start (the time column of a filtered decode).
func TestClockCountsFromTheFirstRecordObserved(t *testing.T) {
	t0 := time.Unix(1000, 0)
	c := Clock{}
	c.Observe(&flow.Record{Frame: 1, Time: t0})
	r := flow.Record{Frame: 9, Time: t0.Add(2 * time.Second)}
	c.Observe(&r)
	if got := string(c.Append(nil, &r)); got != "2.000000" {
		t.Errorf("relative time %q, want 2.000000", got)
	}
	c.Reset()
	c.Observe(&r)
	if got := string(c.Append(nil, &r)); got != "0.000000" {
		t.Errorf("after Reset: %q, want 0.000000", got)
	}
}

func TestHexDumpLayout(t *testing.T) {
	data := []byte("\x01\x02\x03\x06\xc0\x00\x00\x02\x32\x1b\x80\x00\x00\x20\x00\x08scripts/App.pyc")
	want := "" +
		"0000  01 02 03 06 c0 00 00 02  32 1b 80 00 00 20 00 08   ........ 2.... ..\n" +
		"0010  73 63 72 69 70 74 73 2f  41 70 70 2e 70 79 63      scripts/ App.pyc\n" +
		"\n"
	if got := string(AppendHexDump(nil, data)); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestFieldsOptions(t *testing.T) {
	var o FieldsOptions
	for _, kv := range []string{"header=y", "separator=,"} {
		if err := o.SetOption(kv); err != nil {
			t.Fatal(err)
		}
	}
	if !o.Header || o.Separator != "," {
		t.Errorf("%+v", o)
	}
	if o.SetOption("separator=/t"); o.Separator != "\t" {
		t.Errorf("/t gave %q", o.Separator)
	}
	for _, bad := range []string{"header", "header=maybe", "quote=d", "separator="} {
		if err := o.SetOption(bad); err == nil {
			t.Errorf("-E %s accepted", bad)
		}
	}
}

// appendSeconds writes what strconv writes for d.Seconds(), on the
// boundaries of its fast path and on any duration.
func FuzzAppendSecondsMatchesStrconv(f *testing.F) {
	for _, d := range []int64{0, 1, 499, 500, 501, 999, 1000, 1500, 2500, 999_999_500, 999_999_499,
		13_611_019_123, -1, -500, -1_000_000, 1e15 - 1, 1e15, 1e15 + 500, 1<<63 - 1, -1 << 63} {
		f.Add(d)
	}
	f.Fuzz(func(t *testing.T, n int64) {
		d := time.Duration(n)
		if got, want := string(appendSeconds(nil, d)), strconv.FormatFloat(d.Seconds(), 'f', 6, 64); got != want {
			t.Errorf("%d ns: %s, strconv %s", n, got, want)
		}
	})
}

func BenchmarkAppendSeconds(b *testing.B) {
	d := 13_611_019_123 * time.Nanosecond
	buf := make([]byte, 0, 32)
	b.Run("fast", func(b *testing.B) {
		for i := range b.N {
			buf = appendSeconds(buf[:0], d+time.Duration(i))
		}
	})
	b.Run("strconv", func(b *testing.B) {
		for i := range b.N {
			buf = strconv.AppendFloat(buf[:0], (d + time.Duration(i)).Seconds(), 'f', 6, 64)
		}
	})
}

// The fuzzer's inputs are mostly beyond the fast path: many random
// durations within it, of every magnitude, and each one's halfway
// neighbours.
func TestAppendSecondsWithinFastPath(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 1))
	for range 200_000 {
		n := rng.Int64N(int64(1) << rng.IntN(50))
		for _, d := range []int64{n, n - n%1000 + 499, n - n%1000 + 500, n - n%1000 + 501} {
			if got, want := string(appendSeconds(nil, time.Duration(d))), strconv.FormatFloat(time.Duration(d).Seconds(), 'f', 6, 64); got != want {
				t.Fatalf("%d ns: %s, strconv %s", d, got, want)
			}
		}
	}
}

// Every microsecond of a second (the six decimals appendSeconds writes
// from digit pairs), a few nanoseconds either side of it, is what strconv
// writes.
func TestAppendSecondsEveryMicrosecond(t *testing.T) {
	var got, want []byte
	for us := range int64(1_000_000) {
		for _, ns := range []int64{0, 499, 501} {
			d := time.Duration(13_000_000_000 + us*1000 + ns)
			got, want = appendSeconds(got[:0], d), strconv.AppendFloat(want[:0], d.Seconds(), 'f', 6, 64)
			if string(got) != string(want) {
				t.Fatalf("%d ns: %s, strconv %s", int64(d), got, want)
			}
		}
	}
}
