package native

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeListsEveryDropReason: the README's "Dropped datagrams" lists
// the reasons the stop line and the metrics count, all of them and no
// other.
func TestReadmeListsEveryDropReason(t *testing.T) {
	b, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, par, ok := strings.Cut(string(b), "\n**Dropped datagrams.**")
	if !ok {
		t.Fatal("no Dropped datagrams paragraph in the README")
	}
	par, _, _ = strings.Cut(par, "\n\n")
	_, list, ok := strings.Cut(par, "--log-json`):")
	if !ok {
		t.Fatal("no list of reasons after the stop line's example")
	}
	listed := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z-]+)`").FindAllStringSubmatch(list, -1) {
		listed[m[1]] = true
	}
	for r := DropReason(0); r < numDropReasons; r++ {
		if !listed[r.String()] {
			t.Errorf("the README does not list the drop reason %s", r)
		}
		delete(listed, r.String())
	}
	for name := range listed {
		t.Errorf("the README lists the drop reason %s, which the server does not have", name)
	}
}
