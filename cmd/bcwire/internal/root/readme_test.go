package root

import (
	"bufio"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
)

var repoRoot = filepath.Join("..", "..", "..", "..")

// example is one command of a README ```sh block: the command as written
// (continuation lines joined), the comment just above it or after it, and
// its line in the README.
type example struct {
	cmd, note string
	line      int
}

// readmeExamples reads every command of the README's sh blocks.
func readmeExamples(t *testing.T) []example {
	t.Helper()
	f, err := os.Open(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []example
	var cur *example
	above := "" // the comment line just above
	inBlock := false
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		if strings.HasPrefix(l, "```") {
			inBlock = strings.TrimPrefix(l, "```") == "sh"
			above = ""
			continue
		}
		if !inBlock {
			continue
		}
		if cur != nil { // a continued command
			cur.cmd += "\n" + l
		} else {
			trimmed := strings.TrimSpace(l)
			if trimmed == "" {
				above = ""
				continue
			}
			if strings.HasPrefix(trimmed, "#") {
				above = trimmed
				continue
			}
			cur = &example{cmd: l, note: above, line: n}
			above = ""
		}
		if strings.HasSuffix(l, `\`) || !quotesBalanced(cur.cmd) {
			continue
		}
		cmd, comment := splitComment(cur.cmd)
		cur.cmd, cur.note = strings.TrimSpace(cmd), cur.note+" "+comment
		out = append(out, *cur)
		cur = nil
	}
	return out
}

// quotesBalanced reports whether s closes every quote it opens.
func quotesBalanced(s string) bool {
	var q rune
	for i, r := range s {
		switch {
		case q == 0 && (r == '\'' || r == '"'):
			q = r
		case q == r && (r == '\'' || i == 0 || s[i-1] != '\\'):
			q = 0
		}
	}
	return q == 0
}

// splitComment cuts a trailing "# ..." comment (outside quotes) off cmd.
func splitComment(s string) (cmd, comment string) {
	var q rune
	for i, r := range s {
		switch {
		case q == 0 && (r == '\'' || r == '"'):
			q = r
		case q == r:
			q = 0
		case q == 0 && r == '#' && i > 0 && (s[i-1] == ' ' || s[i-1] == '\t'):
			return s[:i], s[i:]
		}
	}
	return s, ""
}

// needs is the README's mark of an example the tests do not run: what it
// needs, or why it is not run, in parentheses; sudo marks root.
var needs = regexp.MustCompile(`\((needs [^)]+|not run by the tests[^)]*)\)`)

// bcwireArgs splits out the bcwire invocations of a command line (after
// `bcwire` or `go run ./cmd/bcwire`, up to a pipe, &, ; or redirection)
// into their arguments, as the shell would.
func bcwireArgs(t *testing.T, cmd string) [][]string {
	words, err := shellWords(strings.ReplaceAll(cmd, "\\\n", " "))
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	var out [][]string
	for i := 0; i < len(words); i++ {
		start := -1
		switch {
		case (words[i].text == "bcwire" || words[i].text == "bcwire-full") && !words[i].quoted:
			start = i + 1
		case words[i].text == "go" && i+2 < len(words) && words[i+1].text == "run" &&
			(words[i+2].text == "./cmd/bcwire" || words[i+2].text == "./cmd/bcwire/bcwire-full"):
			start = i + 3
		}
		if start < 0 {
			continue
		}
		var args []string
		for i = start; i < len(words) && !(words[i].op); i++ {
			args = append(args, words[i].text)
		}
		out = append(out, args)
	}
	return out
}

type word struct {
	text   string
	quoted bool
	op     bool // |, &, ;, >, <
}

// shellWords splits a command as sh does for plain words, quotes and
// backslashes; operators are words of their own.
func shellWords(s string) ([]word, error) {
	var out []word
	var b strings.Builder
	in, quoted := false, false
	flush := func() {
		if in {
			out = append(out, word{text: b.String(), quoted: quoted})
		}
		b.Reset()
		in, quoted = false, false
	}
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == ' ' || r == '\t' || r == '\n':
			flush()
		case r == '\'':
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				j++
			}
			b.WriteString(string(rs[i+1 : j]))
			in, quoted, i = true, true, j
		case r == '"':
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				if rs[j] == '\\' && j+1 < len(rs) && strings.ContainsRune(`"\$`+"`", rs[j+1]) {
					j++
				}
				b.WriteRune(rs[j])
			}
			in, quoted, i = true, true, j
		case r == '\\' && i+1 < len(rs):
			i++
			b.WriteRune(rs[i])
			in = true
		case strings.ContainsRune("|&;<>", r) && !in:
			out = append(out, word{text: string(r), op: true})
		case strings.ContainsRune("|&;<>", r):
			flush()
			out = append(out, word{text: string(r), op: true})
		default:
			b.WriteRune(r)
			in = true
		}
	}
	flush()
	return out, nil
}

// checkFlags parses args as bcwire would, without running anything: the
// command exists and every flag and value parses.
func checkFlags(t *testing.T, ex example, args []string) {
	t.Helper()
	root := NewCmdRoot(&iostreams.IOStreams{Out: io.Discard, Err: io.Discard})
	c, rest, err := root.Find(args)
	if err != nil || c == root {
		t.Errorf("README line %d: %q: no such command (%v)", ex.line, strings.Join(args, " "), err)
		return
	}
	c.InitDefaultHelpFlag()
	if err := c.ParseFlags(rest); err != nil {
		t.Errorf("README line %d: %q: %v", ex.line, strings.Join(args, " "), err)
	}
}

// TestReadmeExamples runs every README example that needs no root,
// network peer, file of the user's or tool other than Go, as written, in a
// directory that holds what a fresh clone holds (testdata; the outputs of
// earlier examples, as a user typing them in order would have); `go run
// ./cmd/bcwire` is the bcwire that `go install ./cmd/bcwire/...` (the README's
// install step, run here with GOBIN set) made. The other examples must say
// what they need, and their bcwire flags must parse.
func TestReadmeExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("builds bcwire")
	}
	exs := readmeExamples(t)
	if len(exs) < 20 {
		t.Fatalf("only %d examples found in the README", len(exs))
	}
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	work := t.TempDir()
	// The files a fresh clone holds that examples read: the bundled
	// captures, and the packet_trace.log samples under dissect.
	for _, dir := range []string{"testdata", "dissect"} {
		if err := os.Symlink(filepath.Join(root, dir), filepath.Join(work, dir)); err != nil {
			t.Fatal(err)
		}
	}
	path := "PATH=" + bin + string(os.PathListSeparator) + os.Getenv("PATH")
	// The install step keeps the go command's caches (HOME); the examples
	// get a home of their own, so that ~ in them stays in the test.
	installEnv := append(os.Environ(), "GOBIN="+bin, path)
	env := append(os.Environ(), path, "HOME="+work, "NO_COLOR=1")
	installed := false
	ran := 0
	for _, ex := range exs {
		for _, args := range bcwireArgs(t, ex.cmd) {
			checkFlags(t, ex, args)
		}
		marked := needs.MatchString(ex.note) || needs.MatchString(ex.cmd) || strings.HasPrefix(ex.cmd, "sudo ")
		if ex.cmd == installStep {
			marked = false
		}
		if marked {
			continue
		}
		dir, cmdEnv := work, env
		script := strings.ReplaceAll(ex.cmd, "go run ./cmd/bcwire/bcwire-full", "bcwire-full")
		script = strings.ReplaceAll(script, "go run ./cmd/bcwire", "bcwire")
		if ex.cmd == installStep {
			dir, cmdEnv, installed = root, installEnv, true
		} else if !installed {
			t.Fatalf("README line %d: %q comes before the install step", ex.line, ex.cmd)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		cmd := exec.CommandContext(ctx, "sh", "-c", script)
		cmd.Dir, cmd.Env = dir, cmdEnv
		out, err := cmd.CombinedOutput()
		cancel()
		// Exit 1 is bcwire telling of damage in a bundled capture
		// (damaged.pcap), which the output must then name.
		if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == 1 && strings.Contains(string(out), "damaged packets or messages") {
			err = nil
		}
		if err != nil {
			t.Errorf("README line %d: %s\n%v\n%s", ex.line, ex.cmd, err, outputTail(out))
		}
		ran++
	}
	if ran < 10 {
		t.Errorf("only %d examples ran", ran)
	}
	t.Logf("%d README examples, %d run", len(exs), ran)
}

// installStep is the README's install step: both binaries (bcwire runs
// export, live and serve through bcwire-full).
const installStep = "go install ./cmd/bcwire/..."

func outputTail(b []byte) string {
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	return string(b)
}

// The README states the Go version go.mod asks for.
func TestReadmeGoVersion(t *testing.T) {
	mod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^go (\S+)$`).FindSubmatch(mod)
	if m == nil {
		t.Fatal("no go line in go.mod")
	}
	readme, _ := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if !strings.Contains(string(readme), "Go "+string(m[1])+" or newer") {
		t.Errorf("the README does not say Go %s or newer (go.mod's go line)", m[1])
	}
	for _, w := range []string{installStep, "setcap cap_net_raw+ep"} {
		if !strings.Contains(string(readme), w) {
			t.Errorf("the README lacks %q", w)
		}
	}
}
