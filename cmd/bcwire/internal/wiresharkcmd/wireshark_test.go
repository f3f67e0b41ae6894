package wiresharkcmd

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/cmd/bcwire/internal/exit"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/iostreams"
	"github.com/bcwire/bcwire/cmd/bcwire/internal/scan"
	"github.com/bcwire/bcwire/dissect"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/internal/fixture"
	"github.com/bcwire/bcwire/report/wireshark"
	"github.com/bcwire/bcwire/session"
)

func TestFlags(t *testing.T) {
	var got *Options
	cmd := NewCmdWireshark(&iostreams.IOStreams{}, "v", func(o *Options) error { got = o; return nil })
	cmd.SetArgs([]string{"-o", "x.lua", "--force"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	if got.Output != "x.lua" || !got.Force {
		t.Errorf("options %+v", got)
	}
	cmd = NewCmdWireshark(&iostreams.IOStreams{}, "v", func(o *Options) error { return nil })
	cmd.SetArgs(nil)
	cmd.SetErr(&bytes.Buffer{})
	cmd.SetOut(&bytes.Buffer{})
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "-o FILE") {
		t.Errorf("no -o: %v, want a usage error naming -o FILE", err)
	}
}

// writeLua generates the dissector into a temporary file.
func writeLua(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "bcwire.lua")
	if err := Run(&Options{IO: &iostreams.IOStreams{}, Output: path, Version: "test"}); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestRefusesCapture(t *testing.T) {
	root := fixture.RepoRoot(t)
	dst := filepath.Join(t.TempDir(), "x.pcap")
	src, err := os.ReadFile(filepath.Join(root, "testdata/pcaps/join.pcap"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, src, 0o644); err != nil {
		t.Fatal(err)
	}
	err = Run(&Options{IO: &iostreams.IOStreams{}, Output: dst, Version: "test"})
	if err == nil {
		t.Fatal("wrote over a capture without --force")
	}
	if got, _ := os.ReadFile(dst); !bytes.Equal(got, src) {
		t.Error("the capture was changed")
	}
}

// bundled are the captures the tshark tests read.
func bundled(t *testing.T) []string {
	root := fixture.RepoRoot(t)
	var files []string
	// The bundled captures, and OpenBC's traffic (testdata/openbc).
	for _, pat := range []string{"testdata/pcaps/*.pcap", "testdata/pcaps/*.pcapng", "testdata/openbc/*.pcap"} {
		m, _ := filepath.Glob(filepath.Join(root, pat))
		files = append(files, m...)
	}
	sort.Strings(files)
	if len(files) < 5 {
		t.Fatalf("only %d bundled captures", len(files))
	}
	return files
}

func needTshark(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("tshark")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("tshark is not installed (.ci/run installs Debian's tshark)")
		}
		t.Skip("tshark is not installed")
	}
	return p
}

// tshark runs tshark with the dissector over file and returns its
// -T fields output, one row per frame.
func tshark(t *testing.T, bin, lua, file string, fields ...string) [][]string {
	return tsharkWith(t, bin, lua, file, nil, fields...)
}

// tsharkWith is tshark with extra options (-o pref:value).
func tsharkWith(t *testing.T, bin, lua, file string, opts []string, fields ...string) [][]string {
	t.Helper()
	args := append([]string{"-n", "-X", "lua_script:" + lua, "-r", file}, opts...)
	args = append(args, "-T", "fields", "-E", "separator=/t", "-E", "occurrence=a", "-E", "aggregator=,")
	for _, f := range fields {
		args = append(args, "-e", f)
	}
	cmd := exec.Command(bin, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir()) // no personal plugins or preferences
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark %s: %v\n%s", file, err, stderr.String())
	}
	if s := stderr.String(); strings.Contains(s, "Lua: Error") || strings.Contains(s, ".lua:") {
		t.Fatalf("tshark %s: the dissector failed:\n%s", file, s)
	}
	var rows [][]string
	for _, line := range strings.Split(strings.TrimRight(string(out), "\n"), "\n") {
		rows = append(rows, strings.Split(line, "\t"))
	}
	return rows
}

// scan reads file as `bcwire stats` does and calls rec with every record.
func scanFile(t *testing.T, file string, rec func(*flow.Record)) *scan.Result {
	t.Helper()
	var sink bytes.Buffer
	var recorder session.Recorder
	if rec != nil {
		recorder = session.RecordFunc(rec)
	}
	res, err := scan.Run(&scan.Options{IO: &iostreams.IOStreams{Out: &sink, Err: &sink}, Files: []string{file}, Quiet: true,
		Session: session.Options{}, Record: recorder}, func(string, *session.Session) error { return nil })
	if err != nil {
		if _, ok := err.(*exit.Error); !ok {
			t.Fatal(err)
		}
	}
	return res
}

// TestTsharkCountsEqualStats is the acceptance: tshark with the
// generated dissector finds, on every bundled capture, as many game
// messages of each opcode in each direction as `bcwire stats` counts, and
// as many GameSpy datagrams of each kind.
//
// The second pass moves the port preference away from the captures' port,
// so that every datagram is found by the heuristic alone (as on a server
// with a port of its own, like OpenBC's tests).
func TestTsharkCountsEqualStats(t *testing.T) {
	bin := needTshark(t)
	lua := writeLua(t)
	for _, pass := range []struct {
		name string
		opts []string
	}{{"port", nil}, {"heuristic", []string{"-o", "bcwire.port:9"}}} {
		for _, file := range bundled(t) {
			t.Run(pass.name+"/"+filepath.Base(file), func(t *testing.T) { countsEqual(t, bin, lua, file, pass.opts) })
		}
	}
}

func countsEqual(t *testing.T, bin, lua, file string, opts []string) {
	{
		{
			want := map[string]int{}
			res := scanFile(t, file, nil)
			for d := range 2 {
				for op, tl := range res.Totals.Opcodes[d] {
					if tl.Count > 0 {
						want[fmt.Sprintf("%s 0x%02x", session.Dirs[d], op)] = tl.Count
					}
				}
			}
			for kind, n := range res.Totals.GameSpy {
				want["gamespy "+kind] = n
			}
			got := map[string]int{}
			for _, row := range tsharkWith(t, bin, lua, file, opts, "bcwire.dir", "bcwire.opcode", "bcwire.gamespy.kind") {
				if len(row) < 3 {
					continue
				}
				if row[1] != "" {
					for _, op := range strings.Split(row[1], ",") {
						n, err := strconv.ParseUint(op, 0, 8)
						if err != nil {
							t.Fatalf("opcode %q: %v", op, err)
						}
						got[fmt.Sprintf("%s 0x%02x", row[0], n)]++
					}
				}
				if row[2] != "" {
					got["gamespy "+row[2]]++
				}
			}
			if len(want) == 0 {
				t.Fatal("stats counted nothing")
			}
			for k, n := range want {
				if got[k] != n {
					t.Errorf("%s: tshark %d, stats %d", k, got[k], n)
				}
			}
			for k, n := range got {
				if _, ok := want[k]; !ok {
					t.Errorf("%s: tshark %d, stats none", k, n)
				}
			}
		}
	}
}

// TestTsharkFieldsEqualDecode compares the typed fields tshark shows with
// decode --json's values of the same messages, frame by frame, for every
// scalar field of every layout on every bundled capture.
func TestTsharkFieldsEqualDecode(t *testing.T) {
	bin := needTshark(t)
	lua := writeLua(t)
	type scalar struct{ abbrev, key string }
	var fields []scalar
	byOp := map[game.Opcode][]scalar{}
	for _, l := range wireshark.Layouts() {
		for _, f := range l.Fields {
			switch f.Kind {
			case wireshark.U8, wireshark.U16, wireshark.U32, wireshark.I32, wireshark.F32, wireshark.CF16, wireshark.ObjID:
				s := scalar{wireshark.Abbrev(l.Name, f.Name), f.Name}
				fields = append(fields, s)
				byOp[l.Op] = append(byOp[l.Op], s)
			}
		}
	}
	compared := 0
	for _, file := range bundled(t) {
		// want[frame][abbrev] = the values in message order
		want := map[int]map[string][]string{}
		scanFile(t, file, func(r *flow.Record) {
			if r.Game == nil || r.Game.Err != nil || r.Game.Msg == nil {
				return
			}
			sc := byOp[r.Game.Msg.Opcode()]
			if len(sc) == 0 {
				return
			}
			raw, err := json.Marshal(r.Game.Msg)
			if err != nil {
				return
			}
			var obj map[string]json.RawMessage
			if json.Unmarshal(raw, &obj) != nil {
				return
			}
			if want[r.Frame] == nil {
				want[r.Frame] = map[string][]string{}
			}
			for _, s := range sc {
				v := string(obj[s.key])
				// Typed values are objects: an object id {"id":"0x3FFFFFFF","slot":0},
				// flags {"value":"0x20","names":...}, an event code {"code":...}.
				var named map[string]any
				if json.Unmarshal(obj[s.key], &named) == nil {
					for _, k := range []string{"id", "value", "code"} {
						if x, ok := named[k]; ok {
							v = fmt.Sprint(x)
							break
						}
					}
				}
				want[r.Frame][s.abbrev] = append(want[r.Frame][s.abbrev], v)
			}
		})
		names := []string{"frame.number"}
		for _, s := range fields {
			names = append(names, s.abbrev)
		}
		for _, row := range tshark(t, bin, lua, file, names...) {
			frame, _ := strconv.Atoi(row[0])
			for i, s := range fields {
				if i+1 >= len(row) || row[i+1] == "" {
					if len(want[frame][s.abbrev]) > 0 {
						t.Errorf("%s frame %d %s: tshark none, decode %v", filepath.Base(file), frame, s.abbrev, want[frame][s.abbrev])
					}
					continue
				}
				got := strings.Split(row[i+1], ",")
				w := want[frame][s.abbrev]
				if len(got) != len(w) {
					t.Errorf("%s frame %d %s: tshark %v, decode %v", filepath.Base(file), frame, s.abbrev, got, w)
					continue
				}
				for k := range got {
					if !sameValue(got[k], w[k]) {
						t.Errorf("%s frame %d %s: tshark %s, decode %s", filepath.Base(file), frame, s.abbrev, got[k], w[k])
					}
					compared++
				}
			}
		}
	}
	if compared < 1000 {
		t.Errorf("only %d values compared", compared)
	}
	t.Logf("%d field values compared", compared)
}

// sameValue compares a tshark value with decode's JSON value: integers
// exactly (tshark writes hex fields as 0x...), floats to decode's four
// decimals.
func sameValue(ts, js string) bool {
	js = strings.Trim(js, `"`)
	a, errA := strconv.ParseFloat(ts, 64)
	if u, err := strconv.ParseUint(ts, 0, 64); err == nil {
		a, errA = float64(u), nil
	}
	b, errB := strconv.ParseFloat(js, 64)
	if u, err := strconv.ParseUint(js, 0, 64); err == nil {
		b, errB = float64(u), nil
	}
	if errA != nil || errB != nil {
		return ts == js
	}
	return math.Abs(a-b) <= 1e-4*math.Max(1, math.Abs(b))
}

// TestDetectedFormsExist: the forms the Lua recognises are entries of the
// registry, under the same names.
func TestDetectedFormsExist(t *testing.T) {
	names := map[string]bool{}
	for _, f := range dissect.Forms {
		names[f.Name] = true
	}
	for _, n := range wireshark.DetectedForms() {
		if !names[n] {
			t.Errorf("the Lua recognises %q, which the registry does not name", n)
		}
	}
}

// TestTsharkNonStockEqualsStats: on the bundled captures and the OpenBC
// capture under testdata/openbc, tshark with the generated dissector
// marks as many messages of each non-stock form the Lua recognises as
// `bcwire stats` counts.
func TestTsharkNonStockEqualsStats(t *testing.T) {
	bin := needTshark(t)
	lua := writeLua(t)
	detected := map[string]bool{}
	for _, n := range wireshark.DetectedForms() {
		detected[n] = true
	}
	files := bundled(t)
	openbc, _ := filepath.Glob(filepath.Join(fixture.RepoRoot(t), "testdata", "openbc", "*.pcap"))
	marked := 0
	for _, file := range files {
		want := map[string]int{}
		res := scanFile(t, file, nil)
		for d := range 2 {
			for form, n := range res.Totals.NonStock[d] {
				if name := dissect.Forms[form].Name; n > 0 && detected[name] {
					want[name] += n
				}
			}
		}
		got := map[string]int{}
		for _, row := range tshark(t, bin, lua, file, "bcwire.nonstock") {
			if row[0] == "" {
				continue
			}
			for _, n := range strings.Split(row[0], ",") {
				got[n]++
			}
		}
		for n, c := range want {
			if got[n] != c {
				t.Errorf("%s: %s: tshark %d, stats %d", filepath.Base(file), n, got[n], c)
			}
			marked += c
		}
		for n, c := range got {
			if _, ok := want[n]; !ok {
				t.Errorf("%s: %s: tshark %d, stats none", filepath.Base(file), n, c)
			}
		}
	}
	if len(openbc) > 0 && marked == 0 {
		t.Error("no non-stock message in an OpenBC capture: the comparison compared nothing")
	}
	t.Logf("%d non-stock messages compared in %d captures", marked, len(files))
}

// TestTsharkNoLuaErrors: a Lua error in a dissector is not fatal to tshark,
// it only cuts that packet's tree short; -V shows it. No bundled or OpenBC
// capture may meet one.
func TestTsharkNoLuaErrors(t *testing.T) {
	bin := needTshark(t)
	lua := writeLua(t)
	for _, file := range bundled(t) {
		cmd := exec.Command(bin, "-n", "-X", "lua_script:"+lua, "-r", file, "-V")
		cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		if i := bytes.Index(out, []byte("Lua Error")); i >= 0 {
			t.Errorf("%s: %s", filepath.Base(file), out[i:min(len(out), i+300)])
		}
	}
}
