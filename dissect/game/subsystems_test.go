package game

import (
	"math"
	"strconv"
	"testing"
)

// The condition texts from the tables are what the formulas give.
func TestConditionTextTables(t *testing.T) {
	for c := range 256 {
		if got, want := pct(uint8(c)), strconv.Itoa(c*100/255)+"%"; got != want {
			t.Fatalf("pct(%d) = %q, want %q", c, got, want)
		}
		want := strconv.FormatFloat(math.Round(float64(c)/255*1000)/1000, 'f', -1, 64)
		if got := string(appendConditionFraction([]byte("x"), uint8(c))); got != "x"+want {
			t.Fatalf("fraction(%d) = %q, want %q", c, got, want)
		}
	}
}
