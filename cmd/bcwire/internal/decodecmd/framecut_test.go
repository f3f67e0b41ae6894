package decodecmd

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/bcwire/bcwire/dissect/capture"
	"github.com/bcwire/bcwire/dissect/flow"
)

// TestFrameCutterCutsOnePlayer cuts one client's frames out of the battle
// and reads the cut back: it holds exactly those frames, every one the
// client's, with their messages decoding as in the original.
func TestFrameCutterCutsOnePlayer(t *testing.T) {
	for _, format := range []capture.Format{capture.PCAP, capture.PCAPNG} {
		rd, err := capture.Open(filepath.Join("..", "..", "..", "..", "testdata", "pcaps", "battle.pcap"))
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		c := NewFrameCutter(&out, format)
		var client string
		frames := map[int]bool{}
		messages := 0
		_, err = flow.Run(c.Source(rd), flow.New(flow.Options{}), func(r *flow.Record) bool {
			if r.Kind != flow.KindMessage {
				return true
			}
			if client == "" {
				client = r.Client.String()
			}
			if r.Client.String() != client {
				return true
			}
			frames[r.Frame] = true
			messages++
			if err := c.Keep(r); err != nil {
				t.Fatal(err)
			}
			return true
		})
		link, _ := rd.Interface(0)
		rd.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Flush(link.LinkType); err != nil {
			t.Fatal(err)
		}
		if c.Written != len(frames) || len(frames) < 100 {
			t.Fatalf("%d frames written, %d kept", c.Written, len(frames))
		}
		cut, err := capture.NewReader(&out)
		if err != nil {
			t.Fatal(err)
		}
		got := 0
		_, err = flow.Run(cut, flow.New(flow.Options{}), func(r *flow.Record) bool {
			if r.Kind == flow.KindMessage {
				got++
				if r.Client.String() != client {
					t.Fatalf("the cut holds a message of %s", r.Client)
				}
			}
			return true
		})
		if err != nil {
			t.Fatal(err)
		}
		if got != messages {
			t.Errorf("%v: the cut has %d messages, the client had %d", format, got, messages)
		}
	}
}
