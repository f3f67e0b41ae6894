package manifest

import (
	"bytes"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/dissect/game"
)

// A made-up manifest in OpenBC's JSON form: two rounds, one with a nested
// subdirectory, hashes as strings and as a number.
const tinyJSON = `{
  "meta": {"name": "test"},
  "version_string": "60",
  "version_string_hash": "0x7E0CE243",
  "directories": [
    {"index": 0, "path": "scripts", "filter": "App.pyc", "recursive": false,
     "dir_name_hash": "0x11223344",
     "files": [{"filename": "App.pyc", "name_hash": "0xAABBCCDD", "content_hash": "0x01020304"}],
     "subdirs": []},
    {"index": 2, "path": "scripts/ships", "filter": "*.pyc", "recursive": true,
     "dir_name_hash": "0x55667788",
     "files": [],
     "subdirs": [
       {"name": "A", "name_hash": "0x0A0A0A0A", "files": [{"filename": "x.pyc", "name_hash": 16, "content_hash": "0xFFFFFFFF"}], "subdirs": []},
       {"name": "B", "name_hash": "0x0B0B0B0B", "files": [], "subdirs": []}
     ]}
  ]
}`

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseOpenBC(t *testing.T) {
	m, err := Parse([]byte(tinyJSON))
	if err != nil {
		t.Fatal(err)
	}
	if len(m) != 2 {
		t.Fatalf("%d rounds, want 2", len(m))
	}
	// Round 0: opcode, round, ref hash, dir hash, 1 file (name, content),
	// 0 subdirs - all little-endian.
	want0 := unhex(t, "21 00 43E20C7E 44332211 0100 DDCCBBAA 04030201 00")
	if !bytes.Equal(m[0], want0) {
		t.Errorf("round 0:\n got % X\nwant % X", m[0], want0)
	}
	// Round 2: no ref hash; 0 files, 2 subdirs: both names first, then
	// each subdir's tree.
	want2 := unhex(t, "21 02 88776655 0000 02 0A0A0A0A 0B0B0B0B  0100 10000000 FFFFFFFF 00  0000 00")
	if !bytes.Equal(m[2], want2) {
		t.Errorf("round 2:\n got % X\nwant % X", m[2], want2)
	}
	// What we build decodes as the response it describes.
	d := game.NewDecoder()
	res := d.Decode(m[2], game.ClientToServer)
	if res.Err != nil {
		t.Fatalf("round 2 does not decode: %v", res.Err)
	}
	msg := res.Msg
	r, ok := msg.(*game.ChecksumResponse)
	if !ok || r.Round != 2 || len(r.Tree.Subdirs) != 2 || r.Tree.Subdirs[0].Tree.Files[0].Name != 16 {
		t.Errorf("round 2 decodes as %v", msg)
	}
}

func TestParseTOMLRoundTrip(t *testing.T) {
	m, err := Parse([]byte(tinyJSON))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, m); err != nil {
		t.Fatal(err)
	}
	back, err := Parse(b.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	for r, p := range m {
		if !bytes.Equal(back[r], p) {
			t.Errorf("round %d: % X after the round trip, want % X", r, back[r], p)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"no directories", `{"directories": []}`, "no \"directories\""},
		{"no dir hash", `{"version_string_hash": 1, "directories": [{"index": 1, "files": []}]}`, "no dir_name_hash"},
		{"round 0 without version", `{"directories": [{"index": 0, "dir_name_hash": 1}]}`, "version_string_hash"},
		{"bad hash", `{"directories": [{"index": 1, "dir_name_hash": "0xZZ"}]}`, "32-bit"},
		{"file without content", `{"directories": [{"index": 1, "dir_name_hash": 1, "files": [{"name_hash": 2}]}]}`, "content_hash"},
		{"round twice", `{"directories": [{"index": 1, "dir_name_hash": 1}, {"index": 1, "dir_name_hash": 1}]}`, "twice"},
		{"index out of range", `{"directories": [{"index": 256, "dir_name_hash": 1}]}`, "0-255"},
		{"toml wrong round", "[rounds]\n2 = \"21 03 00\"\n", "round 2"},
		{"toml empty", "x = 1\n", "no [rounds]"},
	} {
		_, err := Parse([]byte(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(tinyJSON))
	f.Add([]byte("[rounds]\n0 = \"21 00 43 E2 0C 7E\"\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := Parse(b)
		if err != nil {
			return
		}
		for r, p := range m {
			if len(p) < 2 || p[0] != byte(game.OpChecksumResponse) || p[1] != byte(r) {
				t.Fatalf("round %d: % X", r, p)
			}
		}
	})
}
