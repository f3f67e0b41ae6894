package root

// The README is the map a newcomer reads first; these tests keep its
// tables and lists (packages, commands, common flags, non-stock forms, the
// Lua's typed fields and forms), its links and the tests it names true to the code.

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/report/wireshark"
)

// TestReadmeLayoutListsEveryPackage: the README's layout table has a row
// for every package of the module (a row for a folder of commands or
// scripts, interop, covers what is below it), one row each, and no row for
// a path that is not there.
func TestReadmeLayoutListsEveryPackage(t *testing.T) {
	sec := readmeSection(t, "## Layout")
	rows := map[string]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([^`]+)` \\|").FindAllStringSubmatch(sec, -1) {
		if rows[m[1]] {
			t.Errorf("the layout table lists %s twice (one row each)", m[1])
		}
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

// readmeSection returns the README's section under heading (a "## " line),
// up to the next heading of the same level.
func readmeSection(t *testing.T, heading string) string {
	t.Helper()
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	sec := string(readme)
	i := strings.Index(sec, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("no %q section in the README", heading)
	}
	sec = sec[i+1:]
	if j := strings.Index(sec[len(heading):], "\n## "); j >= 0 {
		sec = sec[:len(heading)+j]
	}
	return sec
}

// TestReadmeCommandsListEveryCommand: the README's commands table has a row
// naming each command `bcwire help` lists (in the tests every command is
// linked in, as in bcwire-full: bcwire's own, the ones it starts
// bcwire-full for, and cobra's help and completion), and each subcommand
// in its command's row; and no row names a command that is not there.
func TestReadmeCommandsListEveryCommand(t *testing.T) {
	sec := readmeSection(t, "## Commands")
	if j := strings.Index(sec, "\n### "); j >= 0 {
		sec = sec[:j] // the table, not the sections under it
	}
	rows := map[string][]string{} // command name -> first cells naming it
	for _, m := range regexp.MustCompile(`(?m)^\| (.+?) \| .* \|$`).FindAllStringSubmatch(sec, -1) {
		for _, c := range regexp.MustCompile("`(?:sudo )?bcwire ([a-z-]+)").FindAllStringSubmatch(m[1], -1) {
			rows[c[1]] = append(rows[c[1]], m[1])
		}
	}
	names := helpCommands(t)
	if len(names) < 15 {
		t.Errorf("only %d commands in bcwire help", len(names))
	}
	for _, name := range names {
		cells, ok := rows[name]
		if !ok {
			t.Errorf("command %s has no row in the README's commands table", name)
			continue
		}
		for _, sub := range helpCommands(t, name) {
			named := false
			for _, cell := range cells {
				named = named || regexp.MustCompile(`\b`+regexp.QuoteMeta(sub)+`\b`).MatchString(cell)
			}
			if !named {
				t.Errorf("the README's row for %s does not name its subcommand %s", name, sub)
			}
		}
	}
	for name := range rows {
		if !slices.Contains(names, name) {
			t.Errorf("the README's commands table names bcwire %s, which is no command", name)
		}
	}
}

// helpCommands returns the commands that `bcwire [COMMAND] --help` lists
// under "Available Commands".
func helpCommands(t *testing.T, command ...string) []string {
	t.Helper()
	out, _, code := run(t, append(command, "--help")...)
	if code != 0 {
		t.Fatalf("bcwire %s --help: exit %d", strings.Join(command, " "), code)
	}
	_, list, ok := strings.Cut(out, "\nAvailable Commands:\n")
	if !ok {
		return nil
	}
	list, _, _ = strings.Cut(list, "\n\n")
	var names []string
	for _, l := range strings.Split(list, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			names = append(names, f[0])
		}
	}
	return names
}

// TestReadmeLinksResolve: every link of the README and of docs/ to a
// heading (#anchor, GitHub's form of the heading) or to a file of the
// repository finds it, so that a fact kept in one place and linked from
// the others stays reachable when a section is renamed or moved.
func TestReadmeLinksResolve(t *testing.T) {
	docs, _ := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	for _, path := range append([]string{filepath.Join(repoRoot, "README.md")}, docs...) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		anchors := map[string]bool{}
		for _, m := range regexp.MustCompile(`(?m)^#+ (.+)$`).FindAllStringSubmatch(string(b), -1) {
			anchors[headingAnchor(m[1])] = true
		}
		links := regexp.MustCompile(`\]\(([^)\s]+)\)`).FindAllStringSubmatch(string(b), -1)
		for _, m := range links {
			target := m[1]
			switch {
			case strings.Contains(target, "://"):
			case strings.HasPrefix(target, "#"):
				if !anchors[target[1:]] {
					t.Errorf("%s: link %s names no heading", filepath.Base(path), target)
				}
			default:
				file, _, _ := strings.Cut(target, "#")
				if _, err := os.Stat(filepath.Join(filepath.Dir(path), file)); err != nil {
					t.Errorf("%s: link %s: %v", filepath.Base(path), target, err)
				}
			}
		}
		if filepath.Base(path) == "README.md" && len(links) < 10 {
			t.Errorf("only %d links read in the README", len(links))
		}
	}
}

// headingAnchor is GitHub's anchor for a Markdown heading: lower case,
// spaces as hyphens, punctuation other than - and _ left out.
func headingAnchor(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// TestReadmeNamesEveryNonStockForm: the README's list of the registry's
// known non-stock forms is the registry's (dissect.Forms), each entry once;
// what each form is stays in the registry, which decode -V prints.
func TestReadmeNamesEveryNonStockForm(t *testing.T) {
	sec := readmeSection(t, "## Commands")
	i := strings.Index(sec, "The registry knows")
	j := strings.Index(sec, ". A non-stock message")
	if i < 0 || j < i {
		t.Fatal("no list of the registry's forms under Stock, non-stock, damage")
	}
	listed := map[string]int{}
	for _, m := range regexp.MustCompile("`([a-z0-9-]+)`").FindAllStringSubmatch(sec[i:j], -1) {
		listed[m[1]]++
	}
	for _, f := range dissect.Forms {
		if f.ID == dissect.FormUnknown {
			continue
		}
		if listed[f.Name] != 1 {
			t.Errorf("the README lists the form %s %d times, want once", f.Name, listed[f.Name])
		}
		delete(listed, f.Name)
	}
	for name := range listed {
		t.Errorf("the README lists %s, which the registry does not have", name)
	}
}

// TestReadmeTestNamesExist: every test, benchmark and fuzz target the
// README or docs/ names as evidence for a figure or a claim exists, so a
// renamed or deleted test does not leave a claim that nothing checks.
func TestReadmeTestNamesExist(t *testing.T) {
	defined := map[string]bool{}
	err := filepath.WalkDir(repoRoot, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range regexp.MustCompile(`(?m)^func ((?:Test|Benchmark|Fuzz)\w+)\(`).FindAllSubmatch(b, -1) {
			defined[string(m[1])] = true
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	docs, _ := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	named := 0
	for _, path := range append([]string{filepath.Join(repoRoot, "README.md")}, docs...) {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`\b(?:Test|Benchmark|Fuzz)[A-Z]\w*`).FindAllString(string(b), -1) {
			named++
			if !defined[m] {
				t.Errorf("%s names %s, which no test file defines", filepath.Base(path), m)
			}
		}
	}
	if named < 20 {
		t.Errorf("only %d test names read", named)
	}
}

// TestReadmeTypedLuaFieldsAreTheLayouts: the README's list of the Lua
// dissector's typed fields ("Typed fields today") is what
// report/wireshark's checked layouts give, message by message.
func TestReadmeTypedLuaFieldsAreTheLayouts(t *testing.T) {
	sec := readmeSection(t, "## Wireshark")
	_, list, ok := strings.Cut(sec, "Typed fields today:")
	if !ok {
		t.Fatal("no list of typed fields under Wireshark")
	}
	list, _, _ = strings.Cut(list, ".\n\n")
	list = strings.Join(strings.Fields(list), " ")
	listed := map[string]bool{}
	groups := regexp.MustCompile(`((?:[a-z_]+(?:, | and ))*[a-z_]+) \(([a-z_, ]+)\)`).FindAllStringSubmatch(list, -1)
	for _, g := range groups {
		for _, msg := range regexp.MustCompile(`, | and `).Split(g[1], -1) {
			for _, f := range strings.Split(g[2], ", ") {
				listed["bcwire."+msg+"."+f] = true
			}
		}
	}
	want := map[string]bool{}
	for _, l := range wireshark.Layouts() {
		for _, f := range l.Fields {
			want[wireshark.Abbrev(l.Name, f.Name)] = true
		}
	}
	for f := range want {
		if !listed[f] {
			t.Errorf("the Lua has the typed field %s, which the README does not list", f)
		}
	}
	for f := range listed {
		if !want[f] {
			t.Errorf("the README lists the typed field %s, which the Lua does not have", f)
		}
	}
	if len(want) < 30 {
		t.Errorf("only %d typed fields in the layouts", len(want))
	}
}

// TestReadmeFlagsTableHoldsForItsCommands: each row of "Flags that mean
// the same in every command" names commands (`decode`, `serve --replay`,
// ...) that do take its flag, as their --help shows.
func TestReadmeFlagsTableHoldsForItsCommands(t *testing.T) {
	sec := readmeSection(t, "## Commands")
	_, sec, ok := strings.Cut(sec, "### Flags that mean the same in every command\n")
	if !ok {
		t.Fatal("no flags table in the README")
	}
	sec, _, _ = strings.Cut(strings.TrimLeft(sec, "\n"), "\n\n") // the table
	commands := helpCommands(t)
	help := map[string]string{}
	checked := 0
	for _, row := range regexp.MustCompile(`(?m)^\| (.+?) \| (.*) \|$`).FindAllStringSubmatch(sec, -1) {
		flag := regexp.MustCompile("^`(-[-a-zA-Z]+)").FindStringSubmatch(row[1])
		if flag == nil {
			continue // the header
		}
		for _, m := range regexp.MustCompile("`([a-z]+)[` ]").FindAllStringSubmatch(row[2], -1) {
			c := m[1]
			if !slices.Contains(commands, c) {
				continue
			}
			if _, ok := help[c]; !ok {
				help[c], _, _ = run(t, c, "--help")
			}
			if !regexp.MustCompile(`(?m)(^|[ ,])` + regexp.QuoteMeta(flag[1]) + `\b`).MatchString(help[c]) {
				t.Errorf("the flags table says %s has %s; its --help does not", c, flag[1])
			}
			checked++
		}
	}
	if checked < 30 {
		t.Errorf("only %d command flags checked", checked)
	}
}

// TestReadmeLuaFormsAreDetectedForms: the forms the README says the Lua
// recognises from one datagram are report/wireshark's DetectedForms.
func TestReadmeLuaFormsAreDetectedForms(t *testing.T) {
	sec := readmeSection(t, "## Wireshark")
	_, list, ok := strings.Cut(sec, "recognises the forms it can tell from one datagram (")
	if !ok {
		t.Fatal("no list of the forms the Lua recognises under Wireshark")
	}
	list, _, _ = strings.Cut(list, ")")
	var listed []string
	for _, f := range strings.Split(strings.Join(strings.Fields(list), " "), ", ") {
		listed = append(listed, strings.TrimSpace(f))
	}
	slices.Sort(listed)
	want := wireshark.DetectedForms()
	slices.Sort(want)
	if !slices.Equal(listed, want) {
		t.Errorf("the README says the Lua recognises %v; it recognises %v", listed, want)
	}
}
