package decodecmd

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/flagtest"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/input"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/report"
	"github.com/klauspost/compress/zstd"
)

const battle = "../../../../testdata/pcaps/battle.pcap"

// decodeArgs runs `bcwire decode ARGS` and returns stdout, stderr and the
// exit status.
func decodeArgs(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := NewCmdDecode(&iostreams.IOStreams{Out: &out, Err: &errb}, nil)
	err := flagtest.ParseOnly(cmd, args...)
	if err != nil {
		var ee *exit.Error
		if !errors.As(err, &ee) {
			t.Fatalf("decode %v: error without an exit status: %v", args, err)
		}
		code = ee.Code
		errb.WriteString(err.Error())
	}
	return out.String(), errb.String(), code
}

func lines(s string) []string { return strings.Split(strings.TrimRight(s, "\n"), "\n") }

// lineFields are a decode line's frame and time.
func lineFields(t *testing.T, line string) (frame, time string) {
	f := strings.Fields(line)
	if len(f) < 2 {
		t.Fatalf("line %q", line)
	}
	return f[0], f[1]
}

// TestDisplayFilterKeepsTheCaptureClock: -Y keeps exactly --opcode's
// CHAT lines, and each line's time is the one it has unfiltered (relative
// to the capture's first packet, not the first CHAT).
func TestDisplayFilterKeepsTheCaptureClock(t *testing.T) {
	all, _, code := decodeArgs(t, battle)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	timeOf := map[string]string{}
	for _, l := range lines(all) {
		f, tm := lineFields(t, l)
		timeOf[f] = tm
	}
	y, _, code := decodeArgs(t, "-Y", `name == "CHAT" or name == "TEAM_CHAT"`, battle)
	op, _, _ := decodeArgs(t, "--opcode", "CHAT,TEAM_CHAT", battle)
	if code != 0 || y != op || len(lines(y)) < 4 {
		t.Fatalf("-Y gave %d lines (exit %d), --opcode %d", len(lines(y)), code, len(lines(op)))
	}
	for _, l := range lines(y) {
		f, tm := lineFields(t, l)
		if timeOf[f] != tm {
			t.Errorf("frame %s: time %s filtered, %s unfiltered", f, tm, timeOf[f])
		}
	}
	if _, tm := lineFields(t, lines(y)[0]); tm == "0.000000" {
		t.Error("the first CHAT is at 0: the clock restarted at the filter")
	}
	// A filter on a game field, and one that keeps nothing.
	sp, _, _ := decodeArgs(t, "-Y", "fields.speed > 7.4 and dir == \"C->S\"", battle)
	if len(lines(sp)) < 10 {
		t.Errorf("fields.speed > 7.4 kept %d lines", len(lines(sp)))
	}
	for _, l := range lines(sp) {
		if !strings.Contains(l, "speed=") || !strings.Contains(l, "C->S") {
			t.Fatalf("fields.speed > 7.4 kept %q", l)
		}
	}
	if none, _, code := decodeArgs(t, "-Y", `name == "NoSuchThing"`, battle); none != "" || code != 0 {
		t.Errorf("a filter that keeps nothing: %q exit %d", none, code)
	}
}

// TestDisplayFilterJSON: the JSON of the messages a fields.PATH filter
// keeps is byte for byte that of plain --json (the filter's JSON of the
// game message is reused).
func TestDisplayFilterJSON(t *testing.T) {
	all, _, _ := decodeArgs(t, "--json", battle)
	kept, _, code := decodeArgs(t, "--json", "-Y", "fields.speed > 7.4 or fields.text contains \"gg\"", battle)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	have := map[string]bool{}
	for _, l := range lines(all) {
		have[l] = true
	}
	n := 0
	for _, l := range lines(kept) {
		if !have[l] {
			t.Fatalf("a kept object differs from plain --json's: %s", l)
		}
		n++
	}
	if n < 10 {
		t.Errorf("%d objects kept", n)
	}
}

// TestDisplayFilterErrors: a bad -Y exits 2 before reading anything and
// points at the column.
func TestDisplayFilterErrors(t *testing.T) {
	for expr, want := range map[string]string{
		`name == "CHAT" and`:  "column 19",
		`nmae == "CHAT"`:      `unknown field "nmae"`,
		`frame contains "x"`:  "column 7",
		`fields.text ~ 5`:     "column 13",
		`(opcode == 0x2C`:     "column 16",
		`opcode == 0xZZ`:      "column",
		`name == "CHAT" and `: "column 20",
	} {
		out, errs, code := decodeArgs(t, "-Y", expr, battle)
		if code != 2 || out != "" || !strings.Contains(errs, want) || !strings.Contains(errs, "^") {
			t.Errorf("-Y %q: exit %d, stderr %q; want exit 2 and %q with a caret", expr, code, errs, want)
		}
	}
}

// TestFieldsOutput: -T fields -e … prints the chosen fields, with -E
// header=y and separator=, as tshark; the time follows -t.
func TestFieldsOutput(t *testing.T) {
	out, _, code := decodeArgs(t, "-Y", `name == "CHAT"`, "-T", "fields", "-E", "header=y", "-E", "separator=,",
		"-e", "frame", "-e", "time", "-e", "dir", "-e", "name", "-e", "fields.text", "-e", "seq", "-e", "file", battle)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	ls := lines(out)
	if ls[0] != "frame,time,dir,name,fields.text,seq,file" {
		t.Errorf("header %q", ls[0])
	}
	text, _, _ := decodeArgs(t, "-Y", `name == "CHAT"`, battle)
	tls := lines(text)
	if len(ls)-1 != len(tls) {
		t.Fatalf("%d field lines, %d text lines", len(ls)-1, len(tls))
	}
	for i, l := range ls[1:] {
		f := strings.Split(l, ",")
		if len(f) != 7 || f[3] != "CHAT" || f[6] != battle || f[5] == "" {
			t.Errorf("line %q", l)
			continue
		}
		frame, tm := lineFields(t, tls[i])
		if f[0] != frame || f[1] != tm || !strings.Contains(tls[i], strconv.Quote(f[4])) {
			t.Errorf("fields %q against line %q", l, tls[i])
		}
	}
	// Tab by default, no header; -t e.
	out, _, _ = decodeArgs(t, "-c", "3", "-t", "e", "-T", "fields", "-e", "frame", "-e", "time", battle)
	if l := lines(out)[0]; l != "1\t1768075200.543765" {
		t.Errorf("-t e first line %q", l)
	}
	for _, bad := range [][]string{{"-T", "fields"}, {"-e", "frame"}, {"-T", "fields", "-e", "fram"}, {"-T", "fields", "-e", "frame", "-E", "quote=d"},
		{"-T", "fields", "-e", "frame", "--json"}, {"-t", "x"}} {
		if _, _, code := decodeArgs(t, append(bad, battle)...); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}

// TestHexDump: -x shows the decrypted datagram, once, under its first
// message; in JSON as "datagram".
func TestHexDump(t *testing.T) {
	out, _, code := decodeArgs(t, "--plain", "-x", "--hex", "01 02 03 06 C0 00 00 02 32 1B 80 00 00 20 00 08 00 73 63 72 69 70 74 73 2F 07 00 41 70 70 2E 70 79 63 20")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, out)
	}
	plain, _ := input.ParseHex("01 02 03 06 C0 00 00 02 32 1B 80 00 00 20 00 08 00 73 63 72 69 70 74 73 2F 07 00 41 70 70 2E 70 79 63 20")
	want := string(report.AppendHexDump(nil, plain))
	if !strings.Contains(out, want) || strings.Count(out, "\n0000  ") != 1 {
		t.Errorf("hex dump:\n%s\nwant\n%s", out, want)
	}
	js, _, _ := decodeArgs(t, "-x", "--json", "-c", "5", battle)
	n := 0
	for _, l := range lines(js) {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		if _, ok := m["datagram"]; ok {
			n++
		}
	}
	if n != 5 {
		t.Errorf("%d of the 5 datagrams' objects carry the datagram", n)
	}
}

// TestSeveralFiles: every line and object names its file, frames count per
// file, and each file's times start at 0.
func TestSeveralFiles(t *testing.T) {
	join := "../../../../testdata/pcaps/join.pcap"
	out, _, code := decodeArgs(t, join, "-r", battle)
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	seen := map[string]int{}
	for _, l := range lines(out) {
		name, rest, _ := strings.Cut(l, "  ")
		frame, tm := lineFields(t, rest)
		if name != join && name != battle {
			t.Fatalf("line without its file: %q", l)
		}
		if seen[name] == 0 && (frame != "1" || tm != "0.000000") {
			t.Errorf("%s starts at frame %s time %s", name, frame, tm)
		}
		seen[name]++
	}
	if seen[join] == 0 || seen[battle] == 0 {
		t.Errorf("lines per file %v", seen)
	}
	js, _, _ := decodeArgs(t, "--json", join, battle)
	for _, l := range lines(js) {
		if !strings.HasPrefix(l, `{"file":"`) {
			t.Fatalf("object without its file: %s", l)
		}
	}
	// One file: no file names, as before.
	one, _, _ := decodeArgs(t, "-c", "1", join)
	if strings.Contains(one, join) {
		t.Errorf("a single file names itself: %q", one)
	}
}

// TestReadStdinAndCompressed: -r - reads standard input, and gzip and zstd
// captures decode as the plain one does.
func TestReadStdinAndCompressed(t *testing.T) {
	plain, err := os.ReadFile(battle)
	if err != nil {
		t.Fatal(err)
	}
	want, _, _ := decodeArgs(t, battle)
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(plain)
	zw.Close()
	enc, _ := zstd.NewWriter(nil)
	zst := enc.EncodeAll(plain, nil)
	enc.Close()
	dir := t.TempDir()
	zpath := filepath.Join(dir, "battle.pcap") // named like a plain capture
	os.WriteFile(zpath, zst, 0o644)
	if got, _, code := decodeArgs(t, "-r", zpath); got != want || code != 0 {
		t.Errorf("zstd file: exit %d, output differs", code)
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdin
	os.Stdin = pr
	defer func() { os.Stdin = old; pr.Close() }()
	go func() { pw.Write(gz.Bytes()); pw.Close() }()
	if got, _, code := decodeArgs(t, "-r", "-"); got != want || code != 0 {
		t.Errorf("gzip on stdin: exit %d, output differs", code)
	}
	if _, _, code := decodeArgs(t, "-r", "-", "-"); code != 2 {
		t.Errorf("stdin twice: exit %d", code)
	}
}

// TestWriteCutsFrames: -w writes the frames of the messages kept, as
// captured: decoding the cut with the same filter gives the same messages.
func TestWriteCutsFrames(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"cut.pcapng", "cut.pcap"} {
		cut := filepath.Join(dir, name)
		expr := `src contains "10.0.1.10:" or dst contains "10.0.1.10:"`
		_, errs, code := decodeArgs(t, "-Y", expr, "-w", cut, battle)
		if code != 0 || !strings.Contains(errs, "wrote ") {
			t.Fatalf("-w: exit %d %s", code, errs)
		}
		rd, err := capture.Open(cut)
		if err != nil {
			t.Fatal(err)
		}
		if (rd.Format() == capture.PCAPNG) != strings.HasSuffix(name, ".pcapng") {
			t.Errorf("%s written as %v", name, rd.Format())
		}
		rd.Close()
		strip := func(s string) []string {
			var out []string
			for _, l := range lines(s) {
				f := strings.Fields(l)
				out = append(out, strings.Join(f[1:], " ")) // frame numbers differ
			}
			return out
		}
		want, _, _ := decodeArgs(t, "-Y", expr, battle)
		got, _, _ := decodeArgs(t, cut)
		w, g := strip(want), strip(got)
		if len(w) < 100 || strings.Join(w, "\n") != strings.Join(g, "\n") {
			t.Errorf("%s: %d messages in the cut, %d kept from the capture", name, len(g), len(w))
		}
	}
	if _, _, code := decodeArgs(t, "-w", battle, battle); code != 2 {
		t.Error("-w onto the input accepted")
	}
}
