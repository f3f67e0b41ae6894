package root

// Issue 33: a command line without surprises for a new user. Each test
// below is one of the points, tried as the user tried it.

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/dissect/capture"
)

func corpus(name string) string { return filepath.Join(corpusDir, name) }

// -c N reads N packets in every command that reads captures, as tshark's.
func TestCountInEveryReadingCommand(t *testing.T) {
	battle := corpus("battle.pcap")
	out, errs, code := run(t, "stats", "--json", "-c", "10", battle)
	if code != 0 || !strings.Contains(errs, "battle.pcap: 10 records") {
		t.Fatalf("stats -c 10: exit %d %q", code, errs)
	}
	var st struct{ Datagrams []struct{ Count int } }
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range st.Datagrams {
		n += d.Count
	}
	if n == 0 || n > 10 {
		t.Errorf("stats -c 10 counted %d datagrams", n)
	}
	// Across files: -c counts the packets of all of them together.
	if _, errs, _ := run(t, "timeline", "-c", "120", corpus("join.pcap"), battle); !strings.Contains(errs, "join.pcap: 114 records") ||
		!strings.Contains(errs, "battle.pcap: 6 records") {
		t.Errorf("timeline -c 120 over two files: %q", errs)
	}
	html := filepath.Join(t.TempDir(), "r.html")
	if _, errs, code := run(t, "report", "-c", "5", "-o", html, battle); code != 0 || !strings.Contains(errs, ": 5 records") {
		t.Errorf("report -c 5: exit %d %q", code, errs)
	}
	if _, errs, code := run(t, "export", "-c", "5", "-o", t.TempDir(), battle); code != 0 || !strings.Contains(errs, ": 5 records") {
		t.Errorf("export -c 5: exit %d %q", code, errs)
	}
	for _, args := range [][]string{{"stats"}, {"timeline"}, {"report", "-o", html}, {"export", "-o", t.TempDir()}} {
		args = append(args, "-c", "-1", battle)
		if _, errs, code := run(t, args...); code != 2 || !strings.Contains(errs, "-c -1") {
			t.Errorf("%v: exit %d %q", args, code, errs)
		}
	}
}

// -q is accepted by verify as by every command, and decode -q prints no
// packet lines, as tshark's -q (damage still goes to stderr, and the exit
// status still tells).
func TestQuietEverywhere(t *testing.T) {
	if _, errs, code := run(t, "verify", "-q", "--target", "127.0.0.1:1", filepath.Join(t.TempDir(), "none.pcap")); strings.Contains(errs, "unknown shorthand") || code != 2 {
		t.Errorf("verify -q: exit %d %q", code, errs)
	}
	out, errs, code := run(t, "decode", "-q", corpus("join.pcap"))
	if out != "" || errs != "" || code != 0 {
		t.Errorf("decode -q: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	out, errs, code = run(t, "decode", "-q", "--json", corpus("damaged.pcap"))
	if out != "" || code != 1 || !strings.Contains(errs, "damaged.pcap: frame ") {
		t.Errorf("decode -q of damage: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}

// Flag values that do not parse, and caps out of range, name the flag and
// say what it takes, without strconv's words.
func TestFlagValueMessages(t *testing.T) {
	join := corpus("join.pcap")
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"decode", "-c", "abc", join}, "-c abc: give a whole number"},
		{[]string{"stats", "--workers", "x", join}, "--workers x: give a whole number"},
		{[]string{"timeline", "--idle-timeout", "soon", join}, "--idle-timeout soon: give a duration"},
		{[]string{"decode", "--max-flows", "-1", join}, "--max-flows -1"},
		{[]string{"stats", "--max-sessions", "-1", join}, "--max-sessions -1"},
		{[]string{"serve", "--stop-after", "-1s"}, "--stop-after -1s"},
		{[]string{"diff", "--compare", "nope.field", join, join}, `--compare "nope.field": not one of the tolerated fields`},
	} {
		out, errs, code := run(t, c.args...)
		if code != 2 || !strings.Contains(errs, c.want) || strings.Contains(errs, "strconv") || out != "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", c.args, code, errs, c.want)
		}
	}
	// --compare of a tolerated field is taken.
	if _, errs, code := run(t, "diff", "-q", "--compare", "*.player_name", join, join); code != 0 {
		t.Errorf("diff --compare *.player_name: exit %d %q", code, errs)
	}
}

// An output in a directory that does not exist is named as given, not as
// the temporary file it would have been written under.
func TestOutputInMissingDirectory(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nonexistent", "dir")
	for _, args := range [][]string{
		{"report", "-o", filepath.Join(missing, "x.html"), corpus("join.pcap")},
		{"decode", "-w", filepath.Join(missing, "x.pcap"), corpus("join.pcap")},
		{"synth", "-w", filepath.Join(missing, "x.pcap")},
	} {
		_, errs, code := run(t, args...)
		if code != 2 || !strings.Contains(errs, filepath.Join(missing, "x.")) || strings.Contains(errs, "partial") || !strings.Contains(errs, "does not exist") {
			t.Errorf("%v: exit %d %q", args, code, errs)
		}
	}
}

// Every input is checked before anything is printed: a missing second
// file stops the run before the first is decoded, and a missing file
// leaves nothing on stdout.
func TestInputsCheckedFirst(t *testing.T) {
	nosuch := filepath.Join(t.TempDir(), "nosuch.pcap")
	for _, cmd := range []string{"decode", "stats", "timeline"} {
		out, errs, code := run(t, cmd, corpus("join.pcap"), nosuch)
		if code != 2 || out != "" || !strings.Contains(errs, "nosuch.pcap") || strings.Contains(errs, "join.pcap: 114 records") {
			t.Errorf("%s join.pcap nosuch.pcap: exit %d, stdout %d bytes, stderr %q", cmd, code, len(out), errs)
		}
		if out, _, code := run(t, cmd, nosuch); code != 2 || out != "" {
			t.Errorf("%s nosuch.pcap: exit %d, stdout %q", cmd, code, out)
		}
	}
}

// decode --server of a server that is not in the capture says so.
func TestServerNotInCapture(t *testing.T) {
	out, errs, code := run(t, "decode", "--server", "1.2.3.4:22101", corpus("join.pcap"))
	if out != "" || code != 0 || !strings.Contains(errs, "no traffic of the server 1.2.3.4:22101") {
		t.Errorf("exit %d, stdout %q, stderr %q", code, out, errs)
	}
	if _, errs, _ := run(t, "decode", "--server", "10.0.0.1:22101", corpus("join.pcap")); strings.Contains(errs, "no traffic") {
		t.Errorf("the capture's own server: %q", errs)
	}
}

// -T json is one JSON array, as tshark's; --json stays NDJSON.
func TestOutputFormatJSONIsAnArray(t *testing.T) {
	nd, _, _ := run(t, "decode", "--json", "-c", "30", corpus("join.pcap"))
	arr, _, code := run(t, "decode", "-T", "json", "-c", "30", corpus("join.pcap"))
	var objs []json.RawMessage
	if err := json.Unmarshal([]byte(arr), &objs); err != nil || code != 0 {
		t.Fatalf("-T json: exit %d, not a JSON array: %v\n%s", code, err, arr)
	}
	lines := strings.Split(strings.TrimSpace(nd), "\n")
	if len(objs) != len(lines) || len(objs) < 30 {
		t.Fatalf("%d objects in the array, %d NDJSON lines", len(objs), len(lines))
	}
	for i := range objs {
		if string(objs[i]) != lines[i] {
			t.Fatalf("object %d differs:\n%s\n%s", i, objs[i], lines[i])
		}
	}
	if empty, _, _ := run(t, "decode", "-T", "json", "-Y", `name == "nothing"`, corpus("join.pcap")); strings.TrimSpace(empty) != "[]" {
		t.Errorf("nothing kept: %q, want []", empty)
	}
}

// -w - writes the capture to stdout (and no file named "-").
func TestWriteCaptureToStdout(t *testing.T) {
	dir := t.TempDir()
	wd, _ := os.Getwd()
	battle, _ := filepath.Abs(corpus("battle.pcap"))
	if err := os.Chdir(dir); err != nil {
		t.Fatal(err)
	}
	defer os.Chdir(wd)
	out, errs, code := run(t, "decode", "-w", "-", "-Y", `name == "CHAT"`, battle)
	if code != 0 {
		t.Fatalf("exit %d %q", code, errs)
	}
	if _, err := os.Stat("-"); err == nil {
		t.Fatal(`a file named "-" was written`)
	}
	rd, err := capture.NewReader(bytes.NewReader([]byte(out)))
	if err != nil {
		t.Fatalf("stdout is not a capture: %v", err)
	}
	n := 0
	for {
		if _, err := rd.Next(); err != nil {
			break
		}
		n++
	}
	if n == 0 {
		t.Fatal("no frames on stdout")
	}
	if out, _, code := run(t, "synth", "-q", "-w", "-", "--players", "1", "--duration", "5s"); code != 0 || !bytes.HasPrefix([]byte(out), []byte{0x4D, 0x3C, 0xB2, 0xA1}) {
		t.Errorf("synth -w -: exit %d, %d bytes", code, len(out))
	}
}

// --version says what the build knows and never "unknown".
func TestVersionText(t *testing.T) {
	rev := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.time", Value: "2026-11-26T10:00:00Z"}}
	for _, c := range []struct {
		mod      string
		settings []debug.BuildSetting
		want     string
	}{
		{"(devel)", nil, "development build (go1.26.8)"},
		{"", nil, "development build (go1.26.8)"},
		{"(devel)", rev, "development build, commit 0123456789abcdef0123, 2026-11-26T10:00:00Z (go1.26.8)"},
		{"v0.0.0-20261126100000-0123456789ab", rev, "v0.0.0-20261126100000-0123456789ab, 2026-11-26T10:00:00Z (go1.26.8)"},
		{"v1.2.0", nil, "v1.2.0 (go1.26.8)"},
		{"(devel)", append(rev, debug.BuildSetting{Key: "vcs.modified", Value: "true"}), "development build, commit 0123456789abcdef0123 with uncommitted changes, 2026-11-26T10:00:00Z (go1.26.8)"},
	} {
		if got := versionOf(c.mod, "go1.26.8", c.settings); got != c.want {
			t.Errorf("%q %v:\n got %q\nwant %q", c.mod, c.settings, got, c.want)
		}
	}
	if out, _, _ := run(t, "--version"); strings.Contains(out, "unknown") {
		t.Errorf("--version: %q", out)
	}
}

// Display filters in tshark's spellings, and a filter whose comparison
// cannot be made is an error (exit 2), not empty output.
func TestDisplayFilterTsharkForms(t *testing.T) {
	battle := corpus("battle.pcap")
	want, _, _ := run(t, "decode", "-Y", "opcode in [0x2C, 0x2D]", battle)
	for _, expr := range []string{"opcode in {0x2C 0x2D}", "opcode eq 0x2C or opcode eq 0x2D", `name ~ "^(CHAT|TEAM_CHAT)$"`} {
		got, errs, code := run(t, "decode", "-Y", expr, battle)
		if code != 0 || got != want || want == "" {
			t.Errorf("-Y %q: exit %d %q; %d bytes, want %d", expr, code, errs, len(got), len(want))
		}
	}
	for _, cmd := range []string{"decode", "stats", "timeline"} {
		out, errs, code := run(t, cmd, "-Y", `fields.speed > "a"`, battle)
		if code != 2 || !strings.Contains(errs, "cannot compare a number with a string") || cmd == "decode" && out != "" {
			t.Errorf("%s -Y 'fields.speed > \"a\"': exit %d, stderr %q, stdout %d bytes", cmd, code, errs, len(out))
		}
	}
	for _, expr := range []string{"frame.number == 3", "opcode in 5"} {
		_, errs, code := run(t, "decode", "-Y", expr, battle)
		if code != 2 || strings.Contains(errs, "interface") || strings.Contains(errs, "type int") || strings.Contains(errs, "mismatched") {
			t.Errorf("-Y %q: exit %d %q", expr, code, errs)
		}
	}
}

// decode -w FILE.pcapng of inputs of different link types writes one
// interface per link type, and the result decodes to the same messages;
// a pcap file, which has one link type, is refused with a reason.
func TestWriteMixedLinkTypes(t *testing.T) {
	dir := t.TempDir()
	mix := filepath.Join(dir, "mix.pcapng")
	sll, join := corpus("sll.pcap"), corpus("join.pcap")
	if _, errs, code := run(t, "decode", "-w", mix, sll, join); code != 0 {
		t.Fatalf("exit %d %q", code, errs)
	}
	want, _, _ := run(t, "decode", "-T", "fields", "-e", "src", "-e", "dst", "-e", "name", "-e", "fields", sll, join)
	got, errs, code := run(t, "decode", "-T", "fields", "-e", "src", "-e", "dst", "-e", "name", "-e", "fields", mix)
	if code != 0 || !strings.Contains(errs, "574 records") {
		t.Fatalf("decode mix.pcapng: exit %d %q", code, errs)
	}
	strip := func(s string) string { // -T fields names the file when there are several
		var b strings.Builder
		for _, l := range strings.Split(s, "\n") {
			if _, rest, ok := strings.Cut(l, "\t"); ok && strings.HasSuffix(l[:len(l)-len(rest)-1], ".pcap") {
				l = rest
			}
			b.WriteString(l + "\n")
		}
		return b.String()
	}
	if strip(got) != strip(want) || len(got) < 1000 {
		t.Errorf("mix.pcapng decodes to %d bytes of fields, the inputs to %d", len(got), len(want))
	}
	_, errs, code = run(t, "decode", "-w", filepath.Join(dir, "mix.pcap"), sll, join)
	if code != 2 || !strings.Contains(errs, "-w ") || !strings.Contains(errs, "write pcapng") {
		t.Errorf("decode -w mix.pcap: exit %d %q", code, errs)
	}
}

// serve's standard output is its console: -w - is refused, and no file
// named "-" is made.
func TestServeWriteDashRefused(t *testing.T) {
	_, errs, code := run(t, "serve", "--listen", "127.0.0.1:0", "-w", "-", "--stop-after", "1ms")
	if code != 2 || !strings.Contains(errs, "-w -: serve's standard output is its console") {
		t.Errorf("exit %d %q", code, errs)
	}
	if _, err := os.Stat("-"); err == nil {
		t.Error(`a file named "-"`)
	}
}

// A damaged record keeps its own time stamp: export files it under its
// day, not 0001-01-01, and decode --json shows its time (issue 33).
func TestDamagedRecordKeepsItsTime(t *testing.T) {
	dir := t.TempDir()
	if _, errs, code := run(t, "export", "-o", dir, corpus("damaged.pcap")); code != 1 {
		t.Fatalf("export damaged.pcap: exit %d %q", code, errs)
	}
	days, _ := filepath.Glob(filepath.Join(dir, "messages", "capture=damaged.pcap", "date=*"))
	if len(days) != 1 || filepath.Base(days[0]) != "date=2026-01-10" {
		t.Errorf("partitions %v, want only date=2026-01-10", days)
	}
	// A record cut short at the end of the file: its header, and so its
	// time, is whole.
	data, err := os.ReadFile(corpus("join.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	cut := filepath.Join(dir, "cut.pcap")
	os.WriteFile(cut, data[:len(data)-10], 0o644)
	for _, name := range []string{"damaged.pcap", "cut.pcap"} {
		path := corpus(name)
		if name == "cut.pcap" {
			path = cut
		}
		out, _, code := run(t, "decode", "--json", path)
		if code != 1 {
			t.Fatalf("%s: exit %d", name, code)
		}
		for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
			if strings.Contains(l, `"error":"capture record`) && !strings.Contains(l, `"time":"2026-01-10T`) {
				t.Errorf("%s: a damaged record without its time: %s", name, l)
			}
		}
	}
}
