package filter

import "testing"

// TestLookupJSON walks escaped strings, nested objects and arrays, and
// finds nothing where a key only appears nested or inside a string.
func TestLookupJSON(t *testing.T) {
	doc := []byte(`{"a":"x\"y\\","s":"\"b\":1","b":{"c":[1,{"d":"\\\\"},[2,3]]},"n":null,"e":{"b":7}}`)
	for path, want := range map[string]string{
		"a":       `"x\"y\\"`,
		"b.c.0":   `1`,
		"b.c.1.d": `"\\\\"`,
		"b.c.2":   `[2,3]`,
		"b.c.2.1": `3`,
		"n":       `null`,
		"e.b":     `7`,
		"b.c.3":   ``,
		"b.x":     ``,
		"c":       ``,
		"d":       ``,
	} {
		if got := string(lookupJSON(doc, path)); got != want {
			t.Errorf("%s: %q, want %q", path, got, want)
		}
	}
	if v := jsonValue(lookupJSON(doc, "a")); v != `x"y\` {
		t.Errorf("a as a value: %q", v)
	}
	if v := jsonValue([]byte(`"0x3FFFFFFF"`)); v != 0x3FFFFFFF {
		t.Errorf("hex id: %v", v)
	}
}
