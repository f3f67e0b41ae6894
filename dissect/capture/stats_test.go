package capture

import (
	"reflect"
	"testing"
)

// TestStatsToCopiesEveryField: StatsTo copies Stats field by field, so a
// counter added to Stats and not to StatsTo would be lost; every field gets
// its own value here and must arrive.
func TestStatsToCopiesEveryField(t *testing.T) {
	r := Reader{dec: &Decoder{}}
	v := reflect.ValueOf(&r.dec.stats).Elem()
	for i := 0; i < v.NumField(); i++ {
		v.Field(i).SetInt(int64(1000 + i))
	}
	var got Stats
	r.StatsTo(&got)
	if want := r.Stats(); got != want {
		t.Fatalf("StatsTo copied %+v, Stats is %+v", got, want)
	}
}

// countNext stands for Next's counting between two copies (not inlined, as
// Next is not).
//
//go:noinline
func countNext(s *Stats) { s.Records++; s.UDP++ }

// BenchmarkStatsTo copies the counters after each of 128 datagrams, as
// flow.Run does while it reads ahead: the whole struct at once (the plain
// form), and StatsTo's field by field.
func BenchmarkStatsTo(b *testing.B) {
	r := Reader{dec: &Decoder{}}
	var before [128]Stats
	b.Run("struct-copy", func(b *testing.B) {
		for b.Loop() {
			for n := range before {
				before[n] = r.dec.stats
				countNext(&r.dec.stats)
			}
		}
	})
	b.Run("StatsTo", func(b *testing.B) {
		for b.Loop() {
			for n := range before {
				r.StatsTo(&before[n])
				countNext(&r.dec.stats)
			}
		}
	})
}
