package dissect

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The four TCP entries (layer tcp-plaintext) of
// ../shared/vectors/stock-payloads-2.json: a stock client browsing a
// master server (STBC-Dedicated-Server docs/networking/gamespy-discovery.md
// §3, §9). TestMasterStockBytes reads the file when it is there and checks
// this copy against it.
var masterStock = []struct {
	label      string
	hex        string
	fromMaster bool
	kind       MasterKind
}{
	{"Master server challenge", "5C 62 61 73 69 63 5C 5C 73 65 63 75 72 65 5C 4C 52 50 4F 50 51", true, MasterChallenge},
	{"Client master-server auth", "5C 67 61 6D 65 6E 61 6D 65 5C 62 63 6F 6D 6D 61 6E 64 65 72 5C 67 61 6D 65 76 65 72 5C 31 2E 36 5C 6C 6F 63 61 74 69 6F 6E 5C 30 5C 76 61 6C 69 64 61 74 65 5C 68 4D 77 64 54 4E 57 53 5C 66 69 6E 61 6C 5C 5C 71 75 65 72 79 69 64 5C 31 2E 31 5C", false, MasterValidate},
	{"Client master-server list request", "5C 6C 69 73 74 5C 63 6D 70 5C 67 61 6D 65 6E 61 6D 65 5C 62 63 6F 6D 6D 61 6E 64 65 72 5C 66 69 6E 61 6C 5C", false, MasterListReq},
	{"Master server binary server list", "48 CE 22 F1 74 B4 48 CE 22 F1 74 B5 48 CE 22 F1 74 B6 48 CE 22 F1 74 CC 48 CE 22 F1 56 55 5C 66 69 6E 61 6C 5C", true, MasterList},
}

func unhexSpaced(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMasterStockBytes(t *testing.T) {
	// The copy above must be the file's bytes, when the file is there.
	if raw, err := os.ReadFile(filepath.Join("..", "..", "shared", "vectors", "stock-payloads-2.json")); err == nil {
		var entries []struct {
			Label, Layer, Hex string
		}
		if err := json.Unmarshal(raw, &entries); err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, e := range entries {
			if e.Layer != "tcp-plaintext" {
				continue
			}
			n++
			found := false
			for _, s := range masterStock {
				if strings.HasPrefix(e.Label, s.label) {
					found = true
					if s.hex != e.Hex {
						t.Errorf("%s: the test's bytes differ from the vectors file", s.label)
					}
				}
			}
			if !found {
				t.Errorf("vectors entry %q has no test", e.Label)
			}
		}
		if n != len(masterStock) {
			t.Errorf("%d tcp-plaintext entries in the file, %d here", n, len(masterStock))
		}
	}
	for _, s := range masterStock {
		b := unhexSpaced(t, s.hex)
		m, err := ParseMasterMessage(b, s.fromMaster)
		if err != nil {
			t.Fatalf("%s: %v", s.label, err)
		}
		if m.Kind != s.kind {
			t.Errorf("%s: kind %v, want %v", s.label, m.Kind, s.kind)
		}
		if got := m.Append(nil); !bytes.Equal(got, b) {
			t.Errorf("%s: re-encoded\n% X\nwant\n% X", s.label, got, b)
		}
	}
	// The values the source states.
	m, _ := ParseMasterMessage(unhexSpaced(t, masterStock[0].hex), true)
	if v := fieldValue(m.Text, "secure"); v != "LRPOPQ" {
		t.Errorf("challenge %q, stated LRPOPQ", v)
	}
	m, _ = ParseMasterMessage(unhexSpaced(t, masterStock[1].hex), false)
	for k, want := range map[string]string{"gamename": "bcommander", "gamever": "1.6", "location": "0", "validate": "hMwdTNWS"} {
		if v := fieldValue(m.Text, k); v != want {
			t.Errorf("validate message %s=%q, stated %q", k, v, want)
		}
	}
	if m.Text.QueryID != "1.1" || !m.Text.Final {
		t.Errorf("validate message queryid %q final %v, stated 1.1 and \\final\\", m.Text.QueryID, m.Text.Final)
	}
	m, _ = ParseMasterMessage(unhexSpaced(t, masterStock[2].hex), false)
	if fieldValue(m.Text, "list") != "cmp" || fieldValue(m.Text, "gamename") != "bcommander" {
		t.Errorf("list request %v, stated filter cmp, gamename bcommander", m.Text.Fields)
	}
	m, _ = ParseMasterMessage(unhexSpaced(t, masterStock[3].hex), true)
	want := []string{"72.206.34.241:29876", "72.206.34.241:29877", "72.206.34.241:29878", "72.206.34.241:29900", "72.206.34.241:22101"}
	if len(m.Servers) != len(want) || !m.Final {
		t.Fatalf("list %v final %v, stated %v and \\final\\", m.Servers, m.Final, want)
	}
	for i, w := range want {
		if m.Servers[i] != netip.MustParseAddrPort(w) {
			t.Errorf("entry %d: %v, stated %s", i, m.Servers[i], w)
		}
	}
}

func fieldValue(g *GameSpy, key string) string {
	if g == nil {
		return ""
	}
	for _, f := range g.Fields {
		if f.Key == key {
			return f.Value
		}
	}
	return ""
}

func TestMasterListDamage(t *testing.T) {
	for _, tc := range []struct {
		hex, what string
		off       int
	}{
		{"48 CE 22 F1 74 B4 48 CE", "entry", 6},             // an entry cut short, no \final\
		{"48 CE 22 F1 74 B4 48 CE 22 F1 74 B5", "list", 12}, // whole entries, no \final\
	} {
		_, err := ParseMasterMessage(unhexSpaced(t, tc.hex), true)
		var e *Error
		if err == nil || !errors.As(err, &e) || e.Offset != tc.off || !strings.Contains(e.What, tc.what) {
			t.Errorf("% s: error %v, want one at offset %d about the %s", tc.hex, err, tc.off, tc.what)
		}
	}
	m, err := ParseMasterMessage([]byte(`\final\`), true)
	if err != nil || m.Kind != MasterList || len(m.Servers) != 0 || !m.Final {
		t.Errorf("empty list: %+v %v", m, err)
	}
}

func TestMasterSplitter(t *testing.T) {
	list := unhexSpaced(t, masterStock[3].hex)
	s := MasterSplitter{FromMaster: true}
	var got [][]byte
	for _, p := range [][]byte{unhexSpaced(t, masterStock[0].hex), list[:10], list[10:31], list[31:]} {
		for _, m := range s.Push(p) {
			got = append(got, append([]byte(nil), m...))
		}
	}
	if len(got) != 2 || !bytes.Equal(got[1], list) {
		t.Fatalf("messages %q, want the challenge and the whole list", got)
	}
	if s.Flush() != nil {
		t.Error("bytes left held")
	}
	s.Push(list[:12])
	if rest := s.Flush(); !bytes.Equal(rest, list[:12]) {
		t.Errorf("a cut list is flushed whole: %x", rest)
	}
	big := bytes.Repeat([]byte{0x48, 0, 0, 1, 0, 1}, MaxMasterMessage/6+10)
	out := s.Push(big)
	if len(out) != 1 || len(s.Flush()) != 0 {
		t.Errorf("an endless list is handed on at the cap")
	}
}

func FuzzMasterMessage(f *testing.F) {
	for _, s := range masterStock {
		b, _ := hex.DecodeString(strings.ReplaceAll(s.hex, " ", ""))
		f.Add(b, s.fromMaster)
	}
	f.Fuzz(func(t *testing.T, b []byte, fromMaster bool) {
		m, err := ParseMasterMessage(b, fromMaster)
		_ = m.String()
		if err != nil {
			return
		}
		// What parses re-encodes to something that parses the same (a
		// message of no fields re-encodes to nothing).
		enc := m.Append(nil)
		if len(enc) == 0 {
			return
		}
		again, err := ParseMasterMessage(enc, fromMaster)
		if err != nil || again.Kind != m.Kind || len(again.Servers) != len(m.Servers) {
			t.Fatalf("% X: %+v re-encoded parses as %+v, %v", b, m, again, err)
		}
	})
}
