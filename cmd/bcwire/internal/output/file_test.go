package output

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
)

func TestTargetCheck(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.pcap")
	os.WriteFile(in, []byte{0xD4, 0xC3, 0xB2, 0xA1, 2, 0}, 0o644)
	link := filepath.Join(dir, "link")
	if err := os.Symlink(in, link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard")
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"ng":   {0x0A, 0x0D, 0x0D, 0x0A, 0x1C, 0},
		"be":   {0xA1, 0xB2, 0xC3, 0xD4},
		"nano": {0x4D, 0x3C, 0xB2, 0xA1},
		"gz":   {0x1F, 0x8B, 8, 0},
		"zst":  {0x28, 0xB5, 0x2F, 0xFD, 0},
		"html": []byte("<!DOCTYPE html>"),
		"tiny": {0x1F},
	}
	for name, b := range files {
		os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
	os.WriteFile(filepath.Join(dir, "empty"), nil, 0o644)
	p := func(n string) string { return filepath.Join(dir, n) }
	for _, c := range []struct {
		t    Target
		want string // "" = allowed
	}{
		{Target{Flag: "-o", Path: in, Document: true, Force: true}, "inputs"},
		{Target{Flag: "-w", Path: in}, "inputs"},
		{Target{Flag: "-o", Path: filepath.Join(dir, ".", "x", "..", "in.pcap"), Document: true, Force: true}, "inputs"},
		{Target{Flag: "-o", Path: link, Document: true, Force: true}, "same file as the input"},
		{Target{Flag: "-w", Path: hard}, "same file as the input"},
		{Target{Flag: "-o", Path: dir, Document: true}, "is a directory"},
		{Target{Flag: "-o", Path: p("ng"), Document: true}, "pcapng capture"},
		{Target{Flag: "-o", Path: p("be"), Document: true}, "pcap capture"},
		{Target{Flag: "-o", Path: p("nano"), Document: true}, "pcap capture"},
		{Target{Flag: "-o", Path: p("gz"), Document: true}, "gzip capture"},
		{Target{Flag: "-o", Path: p("zst"), Document: true}, "zstd capture"},
		{Target{Flag: "-o", Path: p("zst"), Document: true, Force: true}, ""},
		{Target{Flag: "-w", Path: p("ng")}, ""}, // -w is for captures
		{Target{Flag: "-o", Path: p("html"), Document: true}, ""},
		{Target{Flag: "-o", Path: p("tiny"), Document: true}, ""},
		{Target{Flag: "-o", Path: p("new"), Document: true}, ""},
		{Target{Flag: "-o", Path: "-", Document: true}, ""},
		{Target{Flag: "-o", Path: "", Document: true}, "give a file name"},
		// -w replaces no existing non-empty file without --force.
		{Target{Flag: "-w", Path: p("ng"), NoClobber: true}, "the file exists (6 bytes); refusing to replace it (add --force"},
		{Target{Flag: "-w", Path: p("html"), NoClobber: true}, "refusing to replace it"},
		{Target{Flag: "-w", Path: p("ng"), NoClobber: true, Force: true}, ""},
		{Target{Flag: "-w", Path: p("new"), NoClobber: true}, ""},
		{Target{Flag: "-w", Path: p("empty"), NoClobber: true}, ""},
		{Target{Flag: "-w", Path: "-", NoClobber: true}, ""},
		{Target{Flag: "-w", Path: in, NoClobber: true, Force: true}, "inputs"},
	} {
		err := c.t.Check(in, "", "-")
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%+v: %v", c.t, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v: %v, want %q", c.t, err, c.want)
		case c.want != "":
			var ee *exit.Error
			if !errors.As(err, &ee) || ee.Code != exit.CodeUsage || !strings.Contains(err.Error(), c.t.Path) {
				t.Errorf("%+v: %v: want exit 2 naming the file", c.t, err)
			}
		}
	}
}

func TestWriteFileIsAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "out.html")
	os.WriteFile(path, []byte("old"), 0o600)
	// A failing write leaves the old file and no temporary file.
	err := WriteFile(path, nil, func(w io.Writer) error {
		io.WriteString(w, strings.Repeat("new", 1<<16))
		return errors.New("boom")
	})
	if err == nil || err.Error() != "boom" {
		t.Fatalf("err %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("failed write changed the file: %.20q", b)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Errorf("left %v", left)
	}
	// A complete write replaces it, readable by others.
	if err := WriteFile(path, nil, func(w io.Writer) error { _, err := io.WriteString(w, "new"); return err }); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	st, _ := os.Stat(path)
	if string(b) != "new" || st.Mode().Perm() != 0o644 {
		t.Errorf("got %q mode %v", b, st.Mode())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".*")); len(left) > 0 {
		t.Errorf("left %v", left)
	}
	// "-" is stdout.
	var out bytes.Buffer
	if err := WriteFile("-", &out, func(w io.Writer) error { _, err := io.WriteString(w, "x"); return err }); err != nil || out.String() != "x" {
		t.Errorf("stdout: %v %q", err, out.String())
	}
	// A file growing while the command runs is only renamed at Commit.
	f, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(f, "growing")
	if b, _ := os.ReadFile(path); string(b) != "new" {
		t.Errorf("target replaced before Commit")
	}
	if !strings.HasSuffix(f.Name(), ".partial") || filepath.Dir(f.Name()) != dir {
		t.Errorf("temporary name %s", f.Name())
	}
	if err := f.Commit(); err != nil {
		t.Fatal(err)
	}
	f.Abort() // no-op after Commit
	if b, _ := os.ReadFile(path); string(b) != "growing" {
		t.Errorf("after Commit: %q", b)
	}
}

func TestIOErrorNamesThePathOnce(t *testing.T) {
	_, err := os.Open("/nonexistent/x.pcap")
	if got := exit.IOError("/nonexistent/x.pcap", err).Error(); strings.Count(got, "x.pcap") != 1 {
		t.Errorf("%q", got)
	}
	if got := exit.IOError("a.pcap", errors.New("truncated")).Error(); got != "a.pcap: truncated" {
		t.Errorf("%q", got)
	}
}

// TestTargetIsStdin: "-" among the inputs is standard input, and a target
// that is the file standard input reads is refused, with or without
// --force, as `decode -w v.pcap -r - < v.pcap` would otherwise replace v.pcap
// by what it read of itself.
func TestTargetIsStdin(t *testing.T) {
	dir := t.TempDir()
	v := filepath.Join(dir, "v.pcap")
	other := filepath.Join(dir, "other.pcap")
	os.WriteFile(v, []byte{0xD4, 0xC3, 0xB2, 0xA1}, 0o644)
	link := filepath.Join(dir, "v-link.pcap")
	os.Symlink(v, link)
	f, err := os.Open(v)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	old := stdinStat
	defer func() { stdinStat = old }()
	stdinStat = f.Stat
	for _, tg := range []Target{
		{Flag: "-w", Path: v, NoClobber: true, Force: true},
		{Flag: "-w", Path: link, NoClobber: true, Force: true},
		{Flag: "-o", Path: v, Document: true, Force: true},
	} {
		err := tg.Check("-")
		var ee *exit.Error
		if !errors.As(err, &ee) || ee.Code != exit.CodeUsage || !strings.Contains(err.Error(), "standard input") {
			t.Errorf("%+v with stdin reading v.pcap: %v, want exit 2 naming standard input", tg, err)
		}
	}
	if err := (Target{Flag: "-w", Path: other, Force: true}).Check("-"); err != nil {
		t.Errorf("another file: %v", err)
	}
	// Standard input not among the inputs: not compared.
	if err := (Target{Flag: "-w", Path: v, Force: true}).Check(other); err != nil {
		t.Errorf("stdin not read: %v", err)
	}
}
