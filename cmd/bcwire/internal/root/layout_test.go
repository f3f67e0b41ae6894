package root

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestReadmeLayoutListsEveryPackage: the README's layout table has a row
// for every package of the module (a row for a folder of commands or
// scripts, interop, covers what is below it), and no row for a path that
// is not there.
func TestReadmeLayoutListsEveryPackage(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	sec := string(readme)
	i := strings.Index(sec, "## Layout")
	if i < 0 {
		t.Fatal("no Layout section")
	}
	sec = sec[i:]
	if j := strings.Index(sec[3:], "\n## "); j >= 0 {
		sec = sec[:j+3]
	}
	rows := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|").FindAllStringSubmatch(sec, -1) {
		rows[m[1]] = true
	}
	root, _ := filepath.Abs(repoRoot)
	list := exec.Command("go", "list", "-f", "{{.Dir}}", "./...")
	list.Dir = root
	out, err := list.Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dir := range strings.Fields(string(out)) {
		rel, _ := filepath.Rel(root, dir)
		rel = filepath.ToSlash(rel)
		covered := rows[rel]
		for p := rel; !covered && strings.Contains(p, "/"); {
			p = p[:strings.LastIndex(p, "/")]
			covered = rows[p] && (p == "interop")
		}
		if !covered {
			t.Errorf("package %s has no row in the README's layout table", rel)
		}
	}
	for r := range rows {
		if _, err := os.Stat(filepath.Join(root, r)); err != nil {
			t.Errorf("the layout table lists %s, which is not there", r)
		}
	}
	if n := len(strings.Fields(string(out))); n < 40 {
		t.Errorf("only %d packages listed", n)
	}
	if len(rows) < 40 {
		t.Errorf("only %d rows read", len(rows))
	}
}
