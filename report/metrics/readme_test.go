package metrics

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeNamesExportedMetrics: the README's Metrics section names every
// metric family bcwire exports, and names none it does not (its short forms
// `_joins_total` stand for bcwire_server_joins_total, as the README says).
func TestReadmeNamesExportedMetrics(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n## Metrics for Prometheus\n")
	if !ok {
		t.Fatal("no Metrics for Prometheus section in the README")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	sec = regexp.MustCompile("(?s)```.*?```").ReplaceAllString(sec, "") // the examples, not the list
	want := exported(t)
	named := map[string]bool{}
	for _, m := range regexp.MustCompile("`(bcwire_[a-z_]+|_[a-z_]+_total)`").FindAllStringSubmatch(sec, -1) {
		name := m[1]
		if name == "bcwire_server" {
			continue // "all prefixed bcwire_server"
		}
		if strings.HasPrefix(name, "_") {
			name = "bcwire_server" + name
		}
		named[name] = true
		if _, ok := want[name]; !ok {
			t.Errorf("the README names %s, which bcwire does not export", name)
		}
	}
	for name := range want {
		if !named[name] {
			t.Errorf("bcwire exports %s, which the README's Metrics section does not name", name)
		}
	}
}
