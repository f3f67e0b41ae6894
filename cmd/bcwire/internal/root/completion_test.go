package root

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// complete asks cobra's completion machinery, as a shell does.
func complete(t *testing.T, args ...string) []string {
	t.Helper()
	out, _, code := run(t, append([]string{"__complete"}, args...)...)
	if code != 0 {
		t.Fatalf("__complete %v: exit %d", args, code)
	}
	var vals []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(l, ":") {
			continue // the directive
		}
		v, _, _ := strings.Cut(l, "\t")
		vals = append(vals, v)
	}
	return vals
}

// Shell completion offers what the flags take (issue 33).
func TestCompletionOffersFlagValues(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"decode", "-t", ""}, []string{"r", "a", "ad", "d", "e"}},
		{[]string{"live", "-t", ""}, []string{"ad"}},
		{[]string{"decode", "--dir", ""}, []string{"c2s", "s2c"}},
		{[]string{"decode", "--opcode", ""}, []string{"StateUpdate", "CHAT", "ObjCreate"}},
		{[]string{"decode", "--opcode", "CHAT,"}, []string{"CHAT,StateUpdate"}},
		{[]string{"decode", "-T", ""}, []string{"fields", "json", "text"}},
		{[]string{"decode", "-T", "fields", "-e", ""}, []string{"frame", "time", "name", "opcode", "fields."}},
		{[]string{"stats", "--checksums", ""}, []string{"verify", "off"}},
		{[]string{"verify", "--mode", ""}, []string{"exact", "adaptive"}},
		{[]string{"diff", "--fail-on", ""}, []string{"major", "critical"}},
		{[]string{"live", "-i", ""}, []string{"lo"}},
	} {
		got := complete(t, c.args...)
		for _, w := range c.want {
			found := false
			for _, g := range got {
				found = found || g == w
			}
			if !found {
				t.Errorf("%v: %q not offered (got %v)", c.args, w, got)
			}
		}
	}
	// A capture to read: file names with a capture's extensions.
	if got := complete(t, "decode", ""); !strings.Contains(strings.Join(got, " "), "pcapng") {
		t.Errorf("decode's files: %v", got)
	}
}

// bcwire man DIR writes a page per command, from --help's text.
func TestManPages(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "man1")
	if _, errs, code := run(t, "man", dir); code != 0 {
		t.Fatalf("exit %d %q", code, errs)
	}
	for _, name := range []string{"bcwire", "bcwire-decode", "bcwire-stats", "bcwire-live", "bcwire-serve", "bcwire-cipher-encrypt", "bcwire-export"} {
		b, err := os.ReadFile(filepath.Join(dir, name+".1"))
		if err != nil {
			t.Errorf("%s.1: %v", name, err)
			continue
		}
		page := string(b)
		if !strings.HasPrefix(page, ".TH "+strings.ToUpper(strings.ReplaceAll(name, "-", `\-`))+" 1") || !strings.Contains(page, ".SH NAME\n"+strings.ReplaceAll(name, "-", `\-`)+` \- `) {
			t.Errorf("%s.1 starts %q", name, page[:min(len(page), 120)])
		}
	}
	decode, _ := os.ReadFile(filepath.Join(dir, "bcwire-decode.1"))
	for _, w := range []string{".SH OPTIONS", `.B \-c, \-\-count N`, `.B \-Y, \-\-display\-filter EXPR`, ".SH EXAMPLES", "bcwire(1)"} {
		if !strings.Contains(string(decode), w) {
			t.Errorf("bcwire-decode.1 lacks %q", w)
		}
	}
	// groff, where installed, reads every page without a warning.
	if groff, err := exec.LookPath("groff"); err == nil {
		pages, _ := filepath.Glob(filepath.Join(dir, "*.1"))
		for _, p := range pages {
			out, err := exec.Command(groff, "-man", "-Tutf8", "-ww", "-z", p).CombinedOutput()
			if err != nil || len(out) > 0 {
				t.Errorf("groff %s: %v %s", filepath.Base(p), err, out)
			}
		}
	}
	if _, errs, code := run(t, "man"); code != 2 || !strings.Contains(errs, "directory") {
		t.Errorf("man without DIR: exit %d %q", code, errs)
	}
}
