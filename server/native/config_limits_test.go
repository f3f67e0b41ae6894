package native

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// serve --config files are capped in size and nesting before parsing, a
// repeated key is an error, and messages quote short excerpts.
func TestLoadConfigLimits(t *testing.T) {
	dir := t.TempDir()
	write := func(name, src string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	big := filepath.Join(dir, "big.toml")
	f, _ := os.Create(big)
	f.Truncate(2 << 20)
	f.Close()
	cases := []struct{ path, want string }{
		{big, "at most 1024 KiB"},
		{write("deep.toml", "name = "+strings.Repeat("{b=", 10000)+"1"+strings.Repeat("}", 10000)+"\n"), "nested more than 64"},
		{write("deep.yaml", "masters: "+strings.Repeat("[", 10000)+strings.Repeat("]", 10000)+"\n"), "nested more than 64"},
		{write("dup.toml", "name = \"a\"\nname = \"b\"\n"), "already been defined"},
		{write("dup.yaml", "name: a\nname: b\n"), "already"},
		{write("long.toml", "name = \"a\"\n"+strings.Repeat("x", 1<<19)+" = 1\n"), "unknown key"},
		{write("junk.toml", "name = "+strings.Repeat("z", 1<<19)+"\n"), ""},
	}
	for _, tc := range cases {
		_, err := LoadConfig(tc.path, DefaultConfig())
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", filepath.Base(tc.path), err, tc.want)
			continue
		}
		if len(err.Error()) > 400 {
			t.Errorf("%s: message of %d bytes", filepath.Base(tc.path), len(err.Error()))
		}
	}
	if c, err := LoadConfig(write("ok.toml", "name = \"Friday\"\nmasters = [\"m:27900\"]\n"), DefaultConfig()); err != nil || c.Name != "Friday" {
		t.Errorf("a good config: %+v %v", c, err)
	}
}
