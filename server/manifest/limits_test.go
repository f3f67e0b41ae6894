package manifest

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// Manifests that cost the parsers gigabytes, or that they took silently,
// are refused before parsing, with short messages: nested inline tables
// (10,000 in 40 KB: 3.84 GB), nested arrays, a repeated JSON key, a file
// past the size cap (a sparse 1 GiB file: refused from its size), and a
// megabyte-long hash (echoed whole before).
func TestManifestLimits(t *testing.T) {
	dir := t.TempDir()
	big := filepath.Join(dir, "big.json")
	f, _ := os.Create(big)
	f.Truncate(1 << 30)
	f.Close()
	if _, err := Load(big); err == nil || !strings.Contains(err.Error(), "at most 4096 KiB") {
		t.Errorf("1 GiB manifest: %v", err)
	}
	cases := []struct{ name, src, want string }{
		{"nested tables", "[rounds]\n0 = " + strings.Repeat("{b=", 10000) + "1" + strings.Repeat("}", 10000) + "\n", "nested more than"},
		{"nested arrays", "x = " + strings.Repeat("[", 1000000) + strings.Repeat("]", 1000000) + "\n", "nested more than"},
		{"duplicate key", strings.Replace(tinyJSON, `"version_string": "60",`, `"directories": [], "version_string": "60",`, 1), "appears twice"},
		{"long hash", strings.Replace(tinyJSON, `"0x7E0CE243"`, `"`+strings.Repeat("7", 1<<20)+`"`, 1), "want a 32-bit number"},
		{"long round", "[rounds]\n\"" + strings.Repeat("9", 1<<20) + "\" = \"21 00\"\n", "not a number"},
		{"duplicate TOML table", "[rounds]\n0 = \"21 00\"\n[rounds]\n1 = \"21 01\"\n", "already been defined"},
	}
	for _, tc := range cases {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Parse([]byte(tc.src))
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
			continue
		}
		if len(err.Error()) > 300 {
			t.Errorf("%s: message of %d bytes", tc.name, len(err.Error()))
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
			t.Errorf("%s: allocated %d MiB", tc.name, got>>20)
		}
	}
}
