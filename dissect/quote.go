package dissect

import "strconv"

// AppendQuote appends s quoted as strconv.AppendQuote quotes it (fmt's %q),
// byte for byte. Names in the text forms (subsystems, players, files) are
// nearly always printable ASCII without a quote or backslash, which
// strconv would write as they are: those are appended directly, without
// strconv's rune-by-rune printability test (a tenth of text decode's
// formatting, for the subsystem names of every StateUpdate).
// FuzzAppendQuoteMatchesStrconv holds the two together.
func AppendQuote(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' || c > '~' || c == '"' || c == '\\' {
			return strconv.AppendQuote(b, s)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
