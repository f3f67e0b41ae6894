package cfgfile

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

// A file over the cap is refused from its size, before it is read (a
// sparse file of 1 GiB here), and what Stat cannot size (/dev/zero, an
// endless stream) after max+1 bytes.
func TestReadCapsSize(t *testing.T) {
	path := filepath.Join(t.TempDir(), "big.toml")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(1 << 30); err != nil {
		t.Fatal(err)
	}
	f.Close()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := Read(path, MaxConfig); err == nil || !strings.Contains(err.Error(), "at most 1024 KiB") {
		t.Errorf("1 GiB file: %v", err)
	}
	if _, err := Read("/dev/zero", MaxConfig); err == nil || !strings.Contains(err.Error(), "over 1048576 bytes") {
		t.Errorf("/dev/zero: %v", err)
	}
	runtime.ReadMemStats(&after)
	if got := after.TotalAlloc - before.TotalAlloc; got > 8<<20 {
		t.Errorf("allocated %d MiB refusing them", got>>20)
	}
	small := filepath.Join(t.TempDir(), "ok.toml")
	os.WriteFile(small, []byte("name = \"x\"\n"), 0o644)
	if b, err := Read(small, MaxConfig); err != nil || string(b) != "name = \"x\"\n" {
		t.Errorf("small file: %q %v", b, err)
	}
}

// 10,000 nested inline tables in 40 KB cost BurntSushi/toml 3.84 GB and
// 12 s; the depth check refuses them in one pass, without allocating.
func TestCheckTOMLDepth(t *testing.T) {
	deep := "a = " + strings.Repeat("{b=", 10000) + "1" + strings.Repeat("}", 10000) + "\n"
	arrays := "a = " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n"
	for _, src := range []string{deep, arrays} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := CheckTOMLDepth([]byte(src))
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "nested more than 64 deep") {
			t.Errorf("%.20s…: %v", src, err)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 4<<10 {
			t.Errorf("allocated %d bytes", got)
		}
	}
	ok := []string{
		"[rounds]\n0 = \"21 00\"\n[[servers]]\nx = [[1, 2], [3]]\n",
		"a = \"" + strings.Repeat("[", 200) + "\"\n",
		"a = '" + strings.Repeat("{", 200) + "'\n",
		"a = \"\"\"\n" + strings.Repeat("[", 200) + "\n\"\"\"\n",
		"a = '''" + strings.Repeat("[", 200) + "''''\n",
		"# " + strings.Repeat("[", 200) + "\nb = 1\n",
		"a = \"esc \\\" [[[\"\n",
		"a = " + strings.Repeat("[", MaxDepth) + strings.Repeat("]", MaxDepth) + "\n",
	}
	for _, src := range ok {
		if err := CheckTOMLDepth([]byte(src)); err != nil {
			t.Errorf("%q: %v", src, err)
		}
		var v map[string]any
		if _, err := toml.Decode(src, &v); err != nil {
			t.Errorf("%q is not TOML, the test is wrong: %v", src, err)
		}
	}
}

// Duplicate keys in JSON are an error (encoding/json keeps the last one
// silently); the same key in different objects is not.
func TestCheckJSON(t *testing.T) {
	bad := []string{
		`{"a": 1, "a": 2}`,
		`{"x": {"a": [1, {"b": 1}], "a": {}}}`,
		`{"d": [{"n": "a", "n": "b"}]}`,
		`{"a": {"k": 1}, "b": 2, "b": 3}`,
		strings.Repeat("[", 100) + strings.Repeat("]", 100),
	}
	for _, src := range bad {
		if err := CheckJSON([]byte(src)); err == nil {
			t.Errorf("%s: no error", src)
		}
	}
	good := []string{
		`{"a": "a", "b": "a", "c": {"a": 1}, "d": [{"a": 1}, {"a": 2}], "e": ["a", "a"]}`,
		`{"s": "[[[[{{{{", "t": []}`,
		`[]`, `{}`,
	}
	for _, src := range good {
		if err := CheckJSON([]byte(src)); err != nil {
			t.Errorf("%s: %v", src, err)
		}
	}
	long := `{"` + strings.Repeat("k", 1<<20) + `": 1, "` + strings.Repeat("k", 1<<20) + `": 2}`
	if err := CheckJSON([]byte(long)); err == nil || len(err.Error()) > 200 {
		t.Errorf("a 1 MiB duplicate key: message of %d bytes", len(err.Error()))
	}
}

// ShortError cuts a parser's message that quotes a long value.
func TestShortError(t *testing.T) {
	var v map[string]any
	_, err := toml.Decode("a = \"x\"\nb = "+strings.Repeat("z", 1<<20)+"\n", &v)
	if err == nil {
		t.Fatal("no error")
	}
	if got := ShortError(err).Error(); len(got) > 6*ExcerptLen {
		t.Errorf("message of %d bytes", len(got))
	}
}

func FuzzChecks(f *testing.F) {
	f.Add([]byte("a = {b = [1, '[', \"]\"]} # ["))
	f.Add([]byte(`{"a": [1, {"a": 2}], "b": "\"{"}`))
	f.Add([]byte("a = \"\"\"x\"\"\"\"\" \nb = '''y'''"))
	f.Fuzz(func(t *testing.T, b []byte) {
		CheckTOMLDepth(b)
		CheckJSON(b)
		CheckYAMLDepth(b)
	})
}
