package game_test

import (
	"bytes"
	"encoding/json"
	"io"
	"path/filepath"
	"testing"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
	"github.com/bcwire/bcwire/dissect/game"
	"github.com/bcwire/bcwire/internal/jsonenc"
)

// TestAppendJSONBundledCaptures follows every bundled capture and holds the
// AppendJSON of every game message in it to json.Marshal, which writes the
// generated ones' struct tags by reflection.
func TestAppendJSONBundledCaptures(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("..", "..", "testdata", "pcaps", "*.pcap*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no bundled captures: %v", err)
	}
	for _, path := range files {
		if filepath.Ext(path) == ".gz" || filepath.Ext(path) == ".golden" {
			continue
		}
		t.Run(filepath.Base(path), func(t *testing.T) {
			rd, err := capture.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer rd.Close()
			var buf []byte
			n := 0
			_, err = flow.Run(rd, flow.New(flow.Options{}), func(r *flow.Record) bool {
				if r.Game == nil {
					return true
				}
				n++
				m := r.Game.Msg
				want, err := json.Marshal(m)
				if err != nil {
					t.Fatalf("frame %d: json.Marshal: %v", r.Frame, err)
				}
				var ok bool
				buf, ok = jsonenc.Append(buf[:0], m.(jsonenc.Appender))
				if !ok || !bytes.Equal(buf, want) {
					t.Fatalf("frame %d %v:\nAppendJSON   %s\njson.Marshal %s", r.Frame, m.Opcode(), buf, want)
				}
				return true
			})
			if err != nil && err != io.EOF {
				t.Logf("capture: %v", err)
			}
			if n == 0 {
				t.Fatal("no game messages")
			}
		})
	}
}

// BenchmarkDecodeAppendJSON decodes the real messages of each opcode in the
// battle capture and appends their JSON (bytes are the JSON bytes). A
// Decoder reuses its messages, so each is decoded again before its JSON:
// BenchmarkOpcodes gives the decoding alone.
func BenchmarkDecodeAppendJSON(b *testing.B) {
	msgs := battleMessages(b)
	for op := range 256 {
		ms := msgs[game.Opcode(op)]
		if len(ms) == 0 {
			continue
		}
		b.Run(game.Opcode(op).String(), func(b *testing.B) {
			d := game.NewDecoder()
			var buf []byte
			n := 0
			for _, m := range ms {
				buf = d.Decode(m.p, m.dir).Msg.(jsonenc.Appender).AppendJSON(buf[:0])
				n += len(buf)
			}
			b.SetBytes(int64(n))
			b.ReportAllocs()
			for b.Loop() {
				for _, m := range ms {
					buf = d.Decode(m.p, m.dir).Msg.(jsonenc.Appender).AppendJSON(buf[:0])
				}
			}
		})
	}
}
