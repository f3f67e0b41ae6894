package dissect

import (
	"strconv"
	"testing"
)

func checkQuote(t *testing.T, s string) {
	t.Helper()
	if got, want := string(AppendQuote([]byte("x"), s)), "x"+strconv.Quote(s); got != want {
		t.Fatalf("AppendQuote(%q) = %s, strconv %s", s, got, want)
	}
}

func TestAppendQuote(t *testing.T) {
	for _, s := range []string{"", "Hull", "Shield Generator", `a"b`, `a\b`, "tab\there", "\x7f", "~ !", "é", "\xff", "\u2028", "日本"} {
		checkQuote(t, s)
	}
}

func FuzzAppendQuoteMatchesStrconv(f *testing.F) {
	f.Add("Forward Torpedo 1")
	f.Add("a\"b\\c\x00\x7f\xc3\xa9\xff")
	f.Fuzz(checkQuote)
}
