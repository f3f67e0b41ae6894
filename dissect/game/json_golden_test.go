package game

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bcwire/bcwire/internal/fixture"
	"github.com/bcwire/bcwire/internal/golden"
	"github.com/bcwire/bcwire/internal/jsonenc"
)

var update = flag.Bool("update", false, "rewrite the JSON goldens in testdata/json/")

// jsonGoldenDir holds one NDJSON file per opcode (raw.ndjson for messages
// shown as bytes): each line is {"case":...,"json":...}, the JSON being
// what AppendJSON writes (null when it writes nothing, for a float that
// JSON cannot hold).
var jsonGoldenDir = filepath.Join("testdata", "json")

// TestAppendJSONGolden holds the JSON of the real messages of every opcode
// (decoded in every direction), of every opcode byte with a few bodies,
// and of jsonValueCases to the goldens, so that a change to a message's
// JSON shows as a diff of that opcode's file.
func TestAppendJSONGolden(t *testing.T) {
	files := map[string]*bytes.Buffer{}
	var buf []byte
	add := func(label string, m Message) {
		name := "raw"
		if _, raw := m.(*Raw); !raw {
			name = fmt.Sprintf("%02X_%s", uint8(m.Opcode()), strings.Map(func(r rune) rune {
				if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
					return r
				}
				return -1
			}, m.Opcode().String()))
		}
		f := files[name]
		if f == nil {
			f = new(bytes.Buffer)
			files[name] = f
		}
		buf = jsonenc.String(append(buf[:0], `{"case":`...), label)
		buf = append(buf, `,"json":`...)
		var ok bool
		if buf, ok = jsonenc.Append(buf, m.(jsonenc.Appender)); !ok {
			buf = append(buf, "null"...)
		}
		f.Write(append(buf, "}\n"...))
	}
	d := jsonDecoder(t)
	for _, c := range realCases {
		b := fixture.Unhex(t, c.hex)
		for _, dir := range []Direction{c.dir, ClientToServer, ServerToClient, DirUnknown} {
			add(fmt.Sprintf("%s (%v)", c.name, dir), d.Decode(b, dir).Msg)
		}
	}
	for op := range 256 {
		for _, body := range [][]byte{nil, {0}, {0, 0, 0, 0, 1, 0, 0, 0}, bytes.Repeat([]byte{0xFF}, 40)} {
			in := append([]byte{byte(op)}, body...)
			add(fmt.Sprintf("% X", in), d.Decode(in, ServerToClient).Msg)
		}
	}
	for i, m := range jsonValueCases() {
		add(fmt.Sprintf("value %d", i), m)
	}

	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name+".ndjson")
		golden.Compare(t, filepath.Join(jsonGoldenDir, name+".ndjson"), files[name].Bytes(), *update)
	}
	on, err := os.ReadDir(jsonGoldenDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range on {
		if !slices.Contains(names, e.Name()) {
			t.Errorf("%s: no case writes it any more; remove it", filepath.Join(jsonGoldenDir, e.Name()))
		}
	}
}
